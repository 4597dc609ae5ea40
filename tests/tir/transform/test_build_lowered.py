"""The lowered form runs through the LLVM code generator with the interpreter's results."""

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.tir.interpreter import run_primfunc


@pytest.mark.parametrize("name", ["vector_add", "reduce_sum", "matmul", "two_stage", "guarded"])
def test_compiled_matches_interpreter(programs, name):
    f = getattr(programs, name)()
    ins = programs.random_inputs(f, seed=5)
    expected, got = [x.copy() for x in ins], [x.copy() for x in ins]
    run_primfunc(f, *expected)
    graphc.build(f, target="llvm")["main"](*got)
    for x, y in zip(expected, got):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-6)


def test_compiled_symbolic_shape(programs):
    f = programs.symbolic()
    lib = graphc.build(f, target="llvm")
    for n in (1, 13):
        (a, b) = programs.random_inputs(f, seed=n, n=n)
        lib["main"](a, b)
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)


def test_parallel_compute_at_gets_a_private_intermediate_per_iteration():
    """Without moving B's allocation into the parallel loop, the threads would race on it."""
    n = 128
    A = te.placeholder((n, 64), name="A")
    B = te.compute((n, 64), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, 64), lambda i, j: B[i, 63 - j] + 1.0, name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    sch.parallel(i)
    lowered = graphc.lower(sch.mod)["main"]
    loop = lowered.body
    assert loop.kind == tir.ForKind.PARALLEL and isinstance(loop.body, tir.Allocate)
    assert [int(e) for e in loop.body.extents] == [64]
    lib = graphc.build(sch.mod, target="llvm")
    x, y = np.random.default_rng(0).random((n, 64), dtype="float32"), np.zeros((n, 64), "float32")
    for _ in range(5):
        lib["main"](x, y)
        np.testing.assert_allclose(y, x[:, ::-1] * 2 + 1, rtol=1e-6)
