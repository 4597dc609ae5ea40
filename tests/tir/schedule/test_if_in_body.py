"""TVM's "if in body" form: a block whose store is guarded by an `if` over its iter vars, as
`reverse_compute_inline` leaves a producer that computes more than its consumer stored. The
primitives TVM applies to such blocks apply here too (and compute the same values); those
that need a plain store refuse with an error naming the block."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.script import tir as T
from graphc.tir import ScheduleError


@T.prim_func
def guarded(A: T.Buffer((16, 16), "float32"), D: T.Buffer((15, 15), "float32")):
    X = T.alloc_buffer((16, 16), "float32")
    C = T.alloc_buffer((15, 15), "float32")
    for i, j in T.grid(16, 16):
        with T.block("X"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[vi, vj] = A[vi, vj] + 1.0
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vi < 15 and vj < 15:
                C[vi, vj] = X[vi, vj] * 2.0
    for i, j in T.grid(15, 15):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] - 3.0


@T.prim_func
def overcomputing(A: T.Buffer((16, 16), "float32"), C: T.Buffer((15, 15), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(15, 15):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


def test_reverse_compute_inline_guards_the_store_with_an_if():
    sch = tir.Schedule(overcomputing)
    sch.reverse_compute_inline("C")
    block = sch.get(sch.get_block("B"))
    assert isinstance(block.body, tir.IfThenElse)
    assert "if vi < 15 and vj < 15:" in sch.mod["main"].script()
    P.assert_same_result(overcomputing, sch.mod["main"])


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(lambda s: s.compute_at(s.get_block("X"), s.get_loops("B")[0]), id="compute_at_into"),
        pytest.param(lambda s: s.reverse_compute_at("D", s.get_loops("B")[0]), id="reverse_compute_at"),
        pytest.param(lambda s: s.compute_at(s.get_block("B"), s.get_loops("D")[0]), id="compute_at_of"),
        pytest.param(lambda s: s.cache_read("B", 0, "local"), id="cache_read"),
        pytest.param(lambda s: s.cache_write("B", 0, "local"), id="cache_write"),
        pytest.param(lambda s: s.compute_inline("X"), id="compute_inline_producer"),
        pytest.param(lambda s: s.reverse_compute_inline("D"), id="reverse_inline_into"),
        pytest.param(lambda s: s.split(s.get_loops("B")[1], [None, 4]), id="split"),
        pytest.param(lambda s: s.fuse(*s.get_loops("B")), id="fuse"),
        pytest.param(lambda s: s.reorder(*reversed(s.get_loops("B"))), id="reorder"),
        pytest.param(lambda s: s.parallel(s.get_loops("B")[0]), id="parallel"),
        pytest.param(lambda s: s.blockize(s.get_loops("B")[1]), id="blockize"),
    ],
)
def test_primitives_accept_a_guarded_block(steps):
    sch = tir.Schedule(guarded)
    steps(sch)
    P.assert_same_result(guarded, sch.mod["main"])


def test_compute_inline_of_a_guarded_block_is_refused():
    sch = tir.Schedule(guarded)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="'B'"):
        sch.compute_inline("B")
    P.assert_unchanged(sch, before)


def test_reverse_compute_inline_of_a_guarded_block_is_refused():
    sch = tir.Schedule(guarded)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="'B'"):
        sch.reverse_compute_inline("B")
    P.assert_unchanged(sch, before)


@T.prim_func
def half_guarded(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vi < 8:
                C[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] - 3.0


def test_reverse_compute_inline_into_a_guard_that_does_not_cover_the_reads_is_refused():
    sch = tir.Schedule(half_guarded)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="block 'D'.*producer 'B' stores C only where vi < 8"):
        sch.reverse_compute_inline("D")
    P.assert_unchanged(sch, before)
