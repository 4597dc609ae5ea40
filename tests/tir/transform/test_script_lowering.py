"""Before/Expected tests of the lowering passes written in the script syntax."""

import numpy as np

from graphc import IRModule
from graphc.ir import assert_structural_equal
from graphc.script import tir as T
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import FlattenBuffer, LowerOpaqueBlock, lower_primfunc


def _apply(pass_, func):
    return pass_()(IRModule({"main": func}))["main"]


def test_lower_opaque_block_reduction():
    @T.prim_func(private=True)
    def before(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 6):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 6):
            if k == 0:
                B[i] = T.float32(0)
            B[i] = B[i] + A[i, k]

    assert_structural_equal(_apply(LowerOpaqueBlock, before), expected)


def test_flatten_buffer_after_lowering():
    @T.prim_func(private=True)
    def before(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 6):
            B[i] = B[i] + A[i, k]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        A_1 = T.Buffer((24,), "float32", data=A.data)
        for i, k in T.grid(4, 6):
            B[i] = B[i] + A_1[i * 6 + k]

    assert_structural_equal(_apply(FlattenBuffer, before), expected)


def test_full_pipeline_guarded_split_with_intermediate():
    @T.prim_func(private=True)
    def before(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        B = T.alloc_buffer((10,), "float32")
        for i_0, i_1 in T.grid(3, 4):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 4 + i_1)
                T.where(i_0 * 4 + i_1 < 10)
                B[vi] = A[vi] * T.float32(2)
        for i in range(10):
            with T.block("C"):
                vi = T.axis.spatial(10, i)
                C[vi] = B[vi] + T.float32(1)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        B = T.allocate([10], "float32", "global")
        B_1 = T.Buffer((10,), "float32", data=B)
        for i_0, i_1 in T.grid(3, 4):
            if i_0 * 4 + i_1 < 10:
                B_1[i_0 * 4 + i_1] = A[i_0 * 4 + i_1] * T.float32(2)
        for i in range(10):
            C[i] = B_1[i] + T.float32(1)

    lowered = lower_primfunc(before)
    assert_structural_equal(lowered, expected)
    x, y = np.arange(10, dtype="float32"), np.zeros(10, dtype="float32")
    run_primfunc(lowered, x, y)
    np.testing.assert_array_equal(y, x * 2 + 1)


def test_symbolic_matmul_lowers_and_runs():
    @T.prim_func(private=True)
    def mm(a: T.handle, B: T.Buffer((8, 8), "float32"), c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 8), "float32")
        C = T.match_buffer(c, (n, 8), "float32")
        for i, j, k in T.grid(n, 8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    lowered = lower_primfunc(mm)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 8)).astype("float32"), rng.standard_normal((8, 8)).astype("float32")
    c1, c2 = np.zeros((3, 8), "float32"), np.zeros((3, 8), "float32")
    run_primfunc(mm, a, b, c1)
    run_primfunc(lowered, a, b, c2)
    np.testing.assert_allclose(c1, a @ b, rtol=1e-5)
    np.testing.assert_allclose(c2, c1, rtol=1e-6)
    assert lowered.buffer_map == mm.buffer_map
