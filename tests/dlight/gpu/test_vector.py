"""Vector copies into Matmul's shared tiles: each thread moves 2 or 4 neighbouring float32s with
one 64- or 128-bit load where the tile and the operand's rows allow (PTX `ld.global.nc.v4`),
scalar copies elsewhere; results match the unscheduled CPU build on PoCL."""

import re

import numpy as np
import pytest
from gpu_check import require_nvrtc, run_both, schedule

import graphc
from graphc import IRModule, te, tir
from graphc.dlight import gpu
from graphc.tir.schedule.state import walk


def _bmm(batch, m, n, k, transposed=False):
    A = te.placeholder((batch, m, k), name="A")
    B = te.placeholder((batch, n, k) if transposed else (batch, k, n), name="B")
    r = te.reduce_axis((0, k), "r")
    if transposed:
        C = te.compute((batch, m, n), lambda b, i, j: te.sum(A[b, i, r] * B[b, j, r], axis=r), name="C")
    else:
        C = te.compute((batch, m, n), lambda b, i, j: te.sum(A[b, i, r] * B[b, r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def _vector_loops(func):
    loops = [s for s in walk(func.body) if isinstance(s, tir.For)]
    return [int(s.extent) for s in loops if s.kind == tir.ForKind.VECTORIZED]


def _ptx(func):
    require_nvrtc()
    mod = IRModule({"k": schedule(func, [gpu.Matmul()], "cuda").with_attr("global_symbol", "k")})
    return graphc.build(mod, target="cuda -arch=sm_80").imported_modules[0].code.ptx


def test_large_tiles_copy_with_128_bit_loads():
    func = _bmm(16, 512, 512, 512)  # 4 x 4 register tiles: 1024-element tiles, four per thread
    assert _vector_loops(schedule(func, [gpu.Matmul()], "cuda")) == [4, 4]
    ptx = _ptx(func)
    assert re.search(r"ld\.global(\.nc)?\.v4\.[fub]32", ptx), "no 128-bit global load"
    assert re.search(r"st\.shared\.v4\.[fub]32", ptx)


def test_small_tiles_copy_with_64_bit_loads():
    func = _bmm(1, 128, 96, 64, transposed=True)  # 2 x 2 tiles: 512 elements, two per thread
    assert _vector_loops(schedule(func, [gpu.Matmul()], "cuda")) == [2, 2]
    assert re.search(r"ld\.global(\.nc)?\.v2\.[fub]32", _ptx(func))


@pytest.mark.parametrize(("shape", "vectors"), [((2, 64, 48, 32, False), [2, 2]),
                                                ((2, 64, 48, 32, True), [2, 2]),
                                                ((1, 70, 45, 33, False), []),  # rows of odd length
                                                ((1, 64, 64, 30, True), [2, 2]),  # k tiles cut at 30
                                                ((1, 64, 64, 31, True), [])])
def test_vector_copies_match_the_cpu_build(shape, vectors):
    func = _bmm(*shape)
    assert _vector_loops(schedule(func, [gpu.Matmul()])) == vectors
    (cpu,), (dev,) = run_both(func, [gpu.Matmul()], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def test_large_tile_vector_copies_run_on_opencl():
    func = _bmm(1, 64, 64, 32)
    large = gpu.Matmul(gpu.MatmulConfig(large_min_blocks=1))
    assert _vector_loops(schedule(func, [large])) == [4, 4]
    (cpu,), (dev,) = run_both(func, [large], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def test_a_symbolic_row_count_still_copies_vectors():
    m = tir.Var("m", "int32")
    A = te.placeholder((m, 64), name="A")
    B = te.placeholder((64, 64), name="B")
    r = te.reduce_axis((0, 64), "r")
    func = te.create_prim_func([A, B, te.compute((m, 64), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r),
                                                 name="C")])
    assert _vector_loops(schedule(func, [gpu.Matmul()])) == [2, 2]  # rows of 64: aligned whatever m is
    (cpu,), (dev,) = run_both(func, [gpu.Matmul()], [2], shapes={0: (37, 64), 2: (37, 64)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)
