"""The design document's tensor-program flow: te.compute -> tir.Schedule -> graphc.build."""

import numpy as np

import graphc
from graphc import te, tir


def test_design_doc_row_sum_schedule_builds_and_runs():
    n, m = 8, 32
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    sch = tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))[:1]
    io, ii = sch.split(i, factors=[None, 3])
    sch.parallel(io)
    lib = graphc.build(sch.mod, target="llvm")
    a = np.random.default_rng(0).standard_normal((n, m)).astype("float32")
    b = np.zeros(n, "float32")
    lib["main"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_te_two_stage_compute_at_and_inline_build():
    n = 16
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, n), lambda i, j: B[i, j] + 1.0, name="C")
    D = te.compute((n, n), lambda i, j: C[i, j] * C[i, j], name="D")
    func = te.create_prim_func([A, D])
    sch = tir.Schedule(func)
    sch.compute_inline(sch.get_block("B"))
    d = sch.get_block("D")
    i, j = sch.get_loops(d)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.compute_at(sch.get_block("C"), j0)
    sch.vectorize(j1)
    lib = graphc.build(sch.mod, target="llvm")
    a = np.random.default_rng(1).standard_normal((n, n)).astype("float32")
    out = np.zeros((n, n), "float32")
    lib["main"](a, out)
    np.testing.assert_allclose(out, (a * 2 + 1) ** 2, rtol=1e-5, atol=1e-5)
