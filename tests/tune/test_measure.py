"""The worker-process runner: a crashing and a wrong candidate are recorded, and the runner goes on
with a fresh worker (a hanging one: tests/tune/test_tune.py, through the search). One runner, a
few small kernels: each worker start costs an interpreter and an import of graphc."""

import numpy as np
import pytest

from graphc import te, tir
from graphc.dlight import default_rules
from graphc.dlight.base.transform import apply_rules
from graphc.relax.transform.layout_rewrite import split_preproc
from graphc.target import Target
from graphc.tune.measure import LocalRunner, random_inputs, tolerance
from graphc.tune.tasks import Task


def double(n=64):
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    return te.create_prim_func([A, B])


def matmul(n):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), "k")
    return te.create_prim_func([A, B, te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k))])


def loop_func(n, body_of):
    """A PrimFunc over A, B (float32[64]) whose loop of `n` iterations runs `body_of(i, A, B)`."""
    A = tir.decl_buffer((64,), "float32", "A")
    B = tir.decl_buffer((64,), "float32", "B")
    a, b, i = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("i")
    loop = tir.For(i, tir.const(0), tir.const(n), tir.ForKind.SERIAL, body_of(i, A, B))
    return tir.PrimFunc([a, b], loop, buffer_map={a: A, b: B})


def test_random_inputs_and_tolerances():
    arrays = random_inputs(double())
    assert [a.shape for a in arrays] == [(64,), (64,)] and np.all(np.abs(arrays[0]) <= 1)
    assert tolerance("float32") == (1e-3, 1e-4) and tolerance("int32") == (0.0, 0.0)


def test_crashes_and_wrong_answers_do_not_stop_measuring():
    task = Task.from_func(double(), "double")
    target = Target("llvm")
    default = apply_rules(task.func, target, default_rules(target))
    # a store 2^40 elements past B: the kernel segfaults (the worker dies)
    crash = loop_func(1, lambda i, A, B: tir.BufferStore(
        tir.decl_buffer((1 << 41,), "float32", "B", data=B.data), tir.const(1.0, "float32"),
        (tir.const(1 << 40, "int64"),)))
    wrong = loop_func(64, lambda i, A, B: tir.BufferStore(B, A[i] * 3.0, (i,)))
    # a weight the default Matmul rule packs: measured with the packing split out, as compiled
    packed_task = Task.from_func(matmul(48).with_attr("layout_free_buffers", [1]), "matmul")
    packed = apply_rules(packed_task.func, target, default_rules(target))
    assert split_preproc(packed)[1], "the default rule no longer packs a layout-free weight"
    # no candidate here hangs: a generous timeout keeps a busy machine from making builds time out
    with LocalRunner(target, timeout=60.0, repeat=2, min_repeat_ms=1) as runner:
        assert runner.reference(task, default).status == "ok"
        results = runner.measure(task, [crash, default, wrong, default])
        assert runner.reference(packed_task, packed).status == "ok"
        assert runner.measure(packed_task, [packed])[0].status == "ok"
    statuses = [r.status for r in results]
    assert statuses == ["failed", "ok", "wrong", "ok"], [(r.status, r.error) for r in results]
    assert "died" in results[0].error and "differs" in results[2].error
    assert len(results[1].times) == 2 and results[1].time > 0
    # timed interleaved with the default: each result carries the default's times of the same run
    assert len(results[1].baseline) == 2 and results[1].baseline == results[3].baseline
    assert results[0].baseline == [] and results[2].baseline == []


def test_a_round_counts_the_fastest_call_not_the_mean(monkeypatch):
    """On a loaded machine most calls of a parallel kernel wait for a thread: a round's time is
    its fastest call (a virtual clock: every third call of the kernel waits 1 s, the others 1 ms)."""
    import time

    from graphc.tune.measure import _time_interleaved

    now = [0.0]
    calls = [0, 0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])

    def kernel_of(k, fast):
        def kernel():
            calls[k] += 1
            now[0] += 1.0 if calls[k] % 3 == 0 else fast
        return kernel

    times = _time_interleaved([(kernel_of(0, 1e-3), (), 1e-3), (kernel_of(1, 2e-3), (), 2e-3)], 3, 20.0)
    assert times == [pytest.approx([1e-3] * 3), pytest.approx([2e-3] * 3)]
    assert min(calls) >= 3 * 6  # each round: a warm-up and at least 5 timed calls
