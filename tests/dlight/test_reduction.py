"""cpu.Reduction: parallel rows, side-by-side accumulators, declining what it does not handle."""

import dlight_programs as P
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc import dlight, te, tir, topi

RULE = dlight.cpu.Reduction()


def _apply(program, target=P.AVX512, **kw):
    func, inputs, ref = program(**kw)
    sch = RULE.apply(func, target, False)
    assert isinstance(sch, tir.Schedule)
    P.check_numerics(sch.mod, inputs, ref)
    return sch


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_row_reduction_is_factored_into_vector_partials(kind):
    sch = _apply(P.row_reduce, kind=kind)
    assert P.loop_kinds(sch, "S_rf_update") == ["parallel", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "S_rf_update")] == [128, 256 // 16, 16]
    assert P.loop_kinds(sch, "S_rf_init") == ["parallel", "vectorized"]
    # the partial sums are folded inside the same parallel row loop
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial"]
    rows = {sch.get_loops(sch.get_block(b))[0].var for b in ("S_update", "S_rf_update")}
    assert len(rows) == 1  # one loop Var: the same For


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_row_reduction_shorter_than_two_vectors_accumulates_rows_side_by_side(kind):
    sch = _apply(P.row_reduce, kind=kind, n=1024, m=20)
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "S_update")] == [1024 // 64, 20, 64]  # 4 registers
    assert P.loop_kinds(sch, "S_init") == ["parallel", "vectorized"]


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_row_reduction_with_a_tail_factors_its_whole_vectors_and_folds_the_tail_in_after(kind):
    sch = _apply(P.row_reduce, kind=kind, n=256, m=100)
    # rows in parallel; per row: 6 vectors of partial results, their fold, then the 4 left over
    assert P.loop_kinds(sch, "S_k0_rf_update") == ["parallel", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "S_k0_rf_update")] == [256, 6, 16]
    assert P.loop_kinds(sch, "S_k0") == ["parallel", "serial"]
    assert P.loop_kinds(sch, "S_k1") == ["parallel", "serial"]
    assert [e.value for e in P.loop_extents(sch, "S_k1")] == [256, 4]
    rows = {sch.get_loops(sch.get_block(b))[0].var for b in ("S_k0", "S_k1", "S_k0_rf_update")}
    assert len(rows) == 1


def test_softmax_over_rows_with_a_tail_partitions_its_elementwise_rows():
    sch = _apply(P.softmax, n=128, m=197)
    for block in ("M_k10_rf_update", "Z_k20_rf_update"):
        assert P.loop_kinds(sch, block) == ["parallel", "serial", "vectorized"]
    # the normalisation: 192 elements as 3 x 64 and the 5 left over, each vectorized, no predicate
    assert P.loop_kinds(sch, "O_j0") == ["parallel", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "O_j0")] == [128, 3, 64]
    assert P.loop_kinds(sch, "O_j1") == ["parallel", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "O_j1")] == [128, 5]


def test_column_sum_vectorizes_along_the_contiguous_axis():
    sch = _apply(P.col_sum)
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "S_update")] == [512 // 64, 64, 64]


def test_trailing_spatial_loop_is_split_and_vectorized():
    sch = _apply(P.middle_sum_srs, b=16, m=128)
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "S_update")] == [16, 16, 2, 64]


def test_three_d_reduction_fuses_outer_rows():
    sch = _apply(P.middle_sum)
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial", "vectorized"]
    assert P.loop_extents(sch, "S_update")[0].value == 8 * 128 // 64


def test_softmax_two_reductions_and_epilogue():
    sch = _apply(P.softmax)
    names = [b.name for b in dlight.normalize_prim_func(sch)]
    assert names[-1] == "O" and {"M_rf_update", "Z_rf_update", "M_update", "Z_update"} <= set(names)
    for block in ("M_rf_update", "Z_rf_update"):
        assert P.loop_kinds(sch, block) == ["parallel", "serial", "vectorized"]
    assert P.loop_kinds(sch, "O") == ["parallel", "serial", "vectorized"]
    sch = _apply(P.softmax, n=16, m=64)  # 1024 elements: serial
    assert P.loop_kinds(sch, "Z_rf_update") == ["serial", "serial", "vectorized"]


def test_symbolic_rows():
    sch = _apply(P.symbolic_row_sum)
    assert P.loop_kinds(sch, "S_rf_update") == ["parallel", "serial", "vectorized"]
    P.check_numerics(sch.mod, *P.symbolic_row_sum(n=7)[1:])


def test_symbolic_reduce_extent_gets_rows_side_by_side():
    from graphc import te

    m = te.var("m")
    A = te.placeholder((256, m), name="A")
    k = te.reduce_axis((0, m), "k")
    S = te.compute((256,), lambda i: te.sum(A[i, k], axis=k), name="S")
    sch = RULE.apply(te.create_prim_func([A, S]), P.AVX512, False)
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial", "vectorized"]
    a = P.rand(256, 37)
    P.check_numerics(sch.mod, [a], lambda x: [x.sum(1)])


def test_rows_not_dividing_by_the_lanes_get_a_predicate():
    sch = _apply(P.row_reduce, n=100, m=20)
    realize = sch.get(sch.get_loops(sch.get_block("S_update"))[-1]).body
    assert isinstance(realize.predicate, tir.LT)


def test_small_reduction_stays_serial():
    sch = _apply(P.row_reduce, n=32, m=32)
    assert P.loop_kinds(sch, "S_rf_update") == ["serial", "serial", "vectorized"]


def test_few_long_rows_are_parallel():
    sch = _apply(P.row_reduce, n=4, m=8192)
    assert P.loop_kinds(sch, "S_rf_update") == ["parallel", "serial", "vectorized"]


@pytest.mark.parametrize("program", [P.elementwise, P.broadcast, P.injective_chain, P.tiny, P.transpose])
def test_declines_without_a_reduction(program):
    assert RULE.apply(program()[0], P.AVX512, False) is None


def test_full_reduction_to_one_element():
    from graphc import te

    A = te.placeholder((1024,), name="A")
    k = te.reduce_axis((0, 1024), "k")
    S = te.compute((1,), lambda _: te.sum(A[k], axis=k), name="S")
    sch = RULE.apply(te.create_prim_func([A, S]), P.AVX512, False)
    assert P.loop_kinds(sch, "S_rf_update")[-1] == "vectorized"
    a = P.rand(1024)
    P.check_numerics(sch.mod, [a], lambda x: [x.sum(keepdims=True)], rtol=1e-3, atol=1e-3)


def test_gemv_is_factored_along_the_shared_reduce_axis():
    sch = _apply(P.gemv)
    assert P.loop_kinds(sch, "y_rf_update") == ["parallel", "serial", "vectorized"]


def test_matmul_accumulates_output_columns_in_vectors():
    sch = _apply(P.matmul)  # B[r, j] runs along the output's columns: no rfactor
    assert P.loop_kinds(sch, "C_update") == ["parallel", "serial", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "C_update")] == [64, 128 // 64, 64, 64]  # i, j_0, r, j_1


def test_layer_norm_statistics_are_both_factored():
    sch = _apply(P.layer_norm)
    for block in ("S_rf_update", "V_rf_update"):  # the variance also reads the row's mean
        assert P.loop_kinds(sch, block) == ["parallel", "serial", "vectorized"]
    assert P.loop_kinds(sch, "O") == ["parallel", "serial", "vectorized"]


def _reduction_program(kind, rows, m):
    """A row reduction, softmax or layer norm over rows of `m`; `rows` a tuple (a str: symbolic)."""
    shape = tuple(te.var(r) if isinstance(r, str) else r for r in rows) + (m,)
    x = te.placeholder(shape, name="x")
    args = [x]
    if kind == "softmax":
        y = topi.nn.softmax(x)
    elif kind == "layer_norm":
        g, b = te.placeholder((m,), name="g"), te.placeholder((m,), name="b")
        y = topi.nn.layer_norm(x, g, b, axis=[-1])
        args += [g, b]
    else:
        k = te.reduce_axis((0, m), "k")
        op = te.sum if kind == "sum" else te.max
        y = te.compute(shape[:-1], lambda *i: op(x[(*i, k)], axis=k), name="S")
    return te.create_prim_func([*args, y])


def _run(mod_or_func, arrays, out_shape):
    out = np.zeros(out_shape, "float32")
    graphc.build(mod_or_func, target="llvm")["main"](*arrays, out)
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["sum", "max", "softmax", "layer_norm"]),
    rows=st.sampled_from([(1,), (7,), (3, 37), (129,), ("n",), (2, "n")]),
    m=st.sampled_from([16, 17, 31, 33, 48, 97, 100, 197, 257]),
    n=st.sampled_from([1, 5, 64]),
    avx2=st.booleans(),
)
def test_random_row_reductions_match_the_unscheduled_build(kind, rows, m, n, avx2):
    func = _reduction_program(kind, rows, m)
    sch = RULE.apply(func, P.AVX2 if avx2 else P.AVX512, False)
    assert isinstance(sch, tir.Schedule)
    concrete = tuple(n if isinstance(r, str) else r for r in rows)
    arrays = [P.rand(*concrete, m)] + [P.rand(m) for _ in range(2 if kind == "layer_norm" else 0)]
    out_shape = concrete if kind in ("sum", "max") else (*concrete, m)
    want = _run(func, arrays, out_shape)
    np.testing.assert_allclose(_run(sch.mod, arrays, out_shape), want, rtol=1e-5, atol=1e-5)
