"""compute_at under a split of a symbolic extent: tight regions, no overflowed extents, right numbers.

Regression: relaxing `i0 * ((m + 1) // 2) + i1` once fell back to the int32 limits (the sign of
`(m + 1) // 2` was unknown), giving a loop of extent -2147483648 and NaN results.
"""

import numpy as np
import pytest

from graphc import te, tir
from graphc.ir import structural_equal
from graphc.script import tir as T
from graphc.tir.interpreter import run_primfunc


def _symbolic_two_stage():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((m, n), lambda i, j: B[i, j] + A[i, j], name="C")
    return te.create_prim_func([A, C])


def _scheduled():
    sch = tir.Schedule(_symbolic_two_stage())
    i, j = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, factors=[2, None])
    sch.reorder(j, ii, io)
    sch.compute_at(sch.get_block("B"), ii)
    return sch


@T.prim_func
def _expected(var_A: T.handle, var_C: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    A = T.match_buffer(var_A, (m, n), "float32")
    C = T.match_buffer(var_C, (m, n), "float32")
    B = T.alloc_buffer((m, n), "float32")
    for j, i_1 in T.grid(n, (m + 1) // 2):
        for ax0 in range((m + 1) // 2 + 1):
            with T.block("B"):
                v_i = T.axis.spatial(m, i_1 + ax0)
                v_j = T.axis.spatial(n, j)
                T.where(i_1 + ax0 < m)
                T.reads(A[v_i, v_j])
                T.writes(B[v_i, v_j])
                B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        for i_0 in range(2):
            with T.block("C"):
                v_i_1 = T.axis.spatial(m, i_0 * ((m + 1) // 2) + i_1)
                v_j_1 = T.axis.spatial(n, j)
                T.where(i_0 * ((m + 1) // 2) + i_1 < m)
                T.reads(B[v_i_1, v_j_1], A[v_i_1, v_j_1])
                T.writes(C[v_i_1, v_j_1])
                C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + A[v_i_1, v_j_1]


def test_symbolic_split_compute_at_structure():
    got = _scheduled().mod["main"]
    assert structural_equal(got.without_attr("global_symbol"), _expected.without_attr("global_symbol")), (
        got.script()
    )


def test_symbolic_split_compute_at_has_no_negative_extent():
    from graphc.tir.schedule.state import walk

    loops = [s for s in walk(_scheduled().mod["main"].body) if isinstance(s, tir.For)]
    assert all(not isinstance(lp.extent, tir.IntImm) or lp.extent.value > 0 for lp in loops)


@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (5, 4), (8, 8), (7, 1)])
def test_symbolic_split_compute_at_numerics(m, n):
    f = _scheduled().mod["main"]
    a = np.random.default_rng(m * 10 + n).standard_normal((m, n)).astype("float32")
    c = np.full((m, n), np.nan, "float32")
    run_primfunc(f, a, c)
    np.testing.assert_allclose(c, a * 3.0, rtol=1e-6)


def test_symbolic_split_compute_at_builds():
    import graphc

    lib = graphc.build(_scheduled().mod, target="llvm")
    for m, n in [(3, 5), (16, 2)]:
        a = np.random.default_rng(m).standard_normal((m, n)).astype("float32")
        c = np.full((m, n), np.nan, "float32")
        lib["main"](a, c)
        np.testing.assert_allclose(c, a * 3.0, rtol=1e-6)


def test_clip_to_domain_refuses_widths_that_overflow_int32():
    from graphc.tir.schedule.bounds import clip_to_domain, shape_analyzer

    i1, m = tir.Var("i1"), tir.Var("m")
    ana = shape_analyzer(te.create_prim_func([te.placeholder((m,), name="A")]))
    lo, hi = i1 - (1 << 30), i1 + (1 << 30) - 1  # what a dtype-limit fallback bound looks like
    got = clip_to_domain(ana, lo, hi, tir.const(0), m)
    assert got[0].value == 0 and got[2] is m
    narrow = clip_to_domain(ana, i1, i1 + 3, tir.const(0), tir.const(64))
    assert narrow[2].value == 4
