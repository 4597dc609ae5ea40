"""`check_stage_pipeline` keeps its verdict per scope: a fresh Schedule of the same function (what
each dlight rule starts from) reuses it, a refusal stays a refusal with the asking primitive's
message, and a changed function is checked again."""

import pytest

from graphc import tir
from graphc.script import tir as T
from graphc.tir import ScheduleError
from graphc.tir.functor import post_order_visit
from graphc.tir.schedule import scope
from graphc.tir.stmt import Block


@T.prim_func
def not_a_pipeline(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * 2.0
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + 1.0
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi]
    for i in range(8):
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            B[vi] = D[vi]


@T.prim_func
def pipeline(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * 2.0
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + 1.0


@pytest.fixture
def checks(monkeypatch):
    """The number of full stage-pipeline checks run."""
    count = []
    original = scope.stage_pipeline_violation
    monkeypatch.setattr(scope, "stage_pipeline_violation", lambda *a: count.append(1) or original(*a))
    monkeypatch.setattr(scope, "_VERDICTS", {})
    return count


def test_a_refusal_is_remembered_and_worded_for_each_primitive(checks):
    messages = []
    for what in ("compute_at", "compute_inline"):
        sch = tir.Schedule(not_a_pipeline)
        (loop,) = sch.get_loops("C")
        with pytest.raises(ScheduleError) as info:
            sch.compute_at("B", loop) if what == "compute_at" else sch.compute_inline("B")
        messages.append(str(info.value))
        assert sch.mod["main"] is not_a_pipeline  # untouched
    assert len(checks) == 1
    assert all("stage pipeline" in m and "write-after-read" in m for m in messages)
    assert messages[0].startswith("cannot compute_at") and messages[1].startswith("cannot compute_inline")


def test_a_fresh_schedule_of_the_same_function_reuses_the_verdict(checks):
    for _ in range(3):
        sch = tir.Schedule(pipeline)
        sch.compute_inline("B")
        assert [b.name_hint for b in _blocks(sch.mod["main"])] == ["C"]
    assert len(checks) == 1
    sch = tir.Schedule(pipeline.with_attr("marker", 1))  # the same body and buffers: the same verdict
    sch.compute_inline("B")
    assert len(checks) == 1
    sch = tir.Schedule(pipeline)
    sch.split(sch.get_loops("C")[0], factors=[2, 4])  # a new body: checked again
    sch.compute_inline("B")
    assert len(checks) == 2


def _blocks(func):
    found = []
    post_order_visit(func.body, lambda s: found.append(s) if isinstance(s, Block) else None)
    return [b for b in found if b.name_hint != "root"]
