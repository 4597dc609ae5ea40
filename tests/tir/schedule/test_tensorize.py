"""tensorize and TensorIntrin: a toy 4x4x4 matmul intrinsic (an unrolled body), checked numerically
on the LLVM CPU build against the unscheduled function, and the mismatches it refuses."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
from graphc import te, tir
from graphc.script import tir as T
from graphc.tir import ScheduleError
from graphc.tir.schedule import TensorIntrin


def _matmul(n, m=None, k=None, dtype="float32", batch=None):
    m, k = m or n, k or n
    A = te.placeholder((n, k), name="A", dtype=dtype)
    B = te.placeholder((k, m), name="B", dtype=dtype)
    r = te.reduce_axis((0, k), "k")
    if batch is None:
        C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
        return te.create_prim_func([A, B, C])
    A = te.placeholder((batch, n, k), name="A", dtype=dtype)
    C = te.compute((batch, n, m), lambda b, i, j: te.sum(A[b, i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


@T.prim_func
def _mma4_impl(
    A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")
):
    for i, j in T.grid(4, 4):
        with T.block("mma"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = (C[vi, vj] + A[vi, 0] * B[0, vj] + A[vi, 1] * B[1, vj]
                         + A[vi, 2] * B[2, vj] + A[vi, 3] * B[3, vj])


TensorIntrin.register("test_mma_4x4x4", _matmul(4), _mma4_impl, override=True)


def _tiled(func, batch=False):
    sch = tir.Schedule(func)
    loops = sch.get_loops(sch.get_block("C"))
    i, j, k = loops[-3:]
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 4])
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(io, jo, ko, ii, ji, ki)
    return sch, ii


def _run(func, shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    graphc.build(func, target="llvm")["main"](*arrays)
    return arrays


def test_tensorize_matches_numerically():
    func = _matmul(16, 12, 8)
    sch, ii = _tiled(func)
    block = sch.tensorize(ii, "test_mma_4x4x4")
    assert block.name == "C_o"
    names = [b.name for b in sch.get_child_blocks(block)]
    assert names == ["mma"] and sch.get(block).init is not None  # the impl in C's place; the init kept
    shapes = [(16, 8), (8, 12), (16, 12)]
    a, b, c = _run(sch.mod["main"], shapes)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    _, _, ref = _run(func, shapes)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


def test_tensorize_a_blockized_block_and_trace_replay():
    func = _matmul(8)
    sch, ii = _tiled(func)
    outer = sch.blockize(ii)
    sch.tensorize(outer, "test_mma_4x4x4")
    again = tir.Schedule(_matmul(8))
    sch.trace.apply_to(again)
    a, b, c = _run(again.mod["main"], [(8, 8)] * 3)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_tensorize_under_a_symbolic_batch():
    n = tir.Var("n", "int64")
    func = _matmul(8, batch=n)
    sch, ii = _tiled(func)
    sch.tensorize(ii, "test_mma_4x4x4")
    shapes = [(3, 8, 8), (8, 8), (3, 8, 8)]
    a, b, c = _run(sch.mod["main"], shapes)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_tensorize_property(ti, tj, tk):
    func = _matmul(4 * ti, 4 * tj, 4 * tk)
    sch, ii = _tiled(func)
    sch.tensorize(ii, "test_mma_4x4x4")
    a, b, c = _run(sch.mod["main"], [(4 * ti, 4 * tk), (4 * tk, 4 * tj), (4 * ti, 4 * tj)])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def _refused(func, match, tile=4):
    sch = tir.Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("C"))[-3:]
    io, ii = sch.split(i, [None, tile])
    jo, ji = sch.split(j, [None, tile])
    ko, ki = sch.split(k, [None, tile])
    sch.reorder(io, jo, ko, ii, ji, ki)
    outer = sch.blockize(ii)
    before = sch.mod["main"]
    with pytest.raises(ScheduleError, match=match) as info:
        sch.tensorize(outer, "test_mma_4x4x4")
    assert "'C_o'" in str(info.value)
    assert sch.mod["main"] is before


def test_tensorize_refuses_other_extents():
    _refused(_matmul(16), "loop 0 .* runs over", tile=8)


def test_tensorize_refuses_other_dtypes():
    _refused(_matmul(8, dtype="float16"), "float16")


def test_tensorize_refuses_other_computations():
    A, B = te.placeholder((8, 8), name="A"), te.placeholder((8, 8), name="B")
    r = te.reduce_axis((0, 8), "k")
    C = te.compute((8, 8), lambda i, j: te.sum(A[i, r] + B[r, j], axis=r), name="C")
    _refused(te.create_prim_func([A, B, C]), "stands where the intrinsic has")


def test_tensorize_refuses_a_transposed_operand():
    A, B = te.placeholder((8, 8), name="A"), te.placeholder((8, 8), name="B")
    r = te.reduce_axis((0, 8), "k")
    C = te.compute((8, 8), lambda i, j: te.sum(A[i, r] * B[j, r], axis=r), name="C")
    _refused(te.create_prim_func([A, B, C]), "not a fixed offset")


def test_tensorize_refuses_a_non_dividing_split():
    n = tir.Var("n", "int64")
    A, B = te.placeholder((n, 8), name="A"), te.placeholder((8, 8), name="B")
    r = te.reduce_axis((0, 8), "k")
    C = te.compute((n, 8), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 4])
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(io, jo, ko, ii, ji, ki)
    with pytest.raises(ScheduleError):
        sch.tensorize(ii, "test_mma_4x4x4")


def test_registry_errors():
    with pytest.raises(ScheduleError, match="already registered"):
        TensorIntrin.register("test_mma_4x4x4", _matmul(4), _mma4_impl)
    with pytest.raises(ScheduleError, match="no tensor intrinsic named 'nope'"):
        TensorIntrin.get("nope")
    assert TensorIntrin.get("nope", allow_missing=True) is None
    with pytest.raises(ScheduleError, match="same dtypes and ranks"):
        TensorIntrin(_matmul(4), _matmul(4, dtype="float16"))


def test_tensorize_below_a_fused_tile_loop():
    # the outer loops fused: the bindings are `f // 3 * 4 + ii`, whose outer part is not affine
    # but a multiple of the inner extent (blockize divides it all the same)
    func = _matmul(8, 12, 8)
    sch, ii = _tiled(func)
    io, jo = sch.get_loops(sch.get_block("C"))[:2]
    sch.fuse(io, jo)
    sch.tensorize(ii, "test_mma_4x4x4")
    a, b, c = _run(sch.mod["main"], [(8, 8), (8, 12), (8, 12)])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
