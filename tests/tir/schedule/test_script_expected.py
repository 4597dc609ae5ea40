"""Before/Expected tests in script syntax: each primitive's result is exactly the expected PrimFunc."""

import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.script import tir as T


def assert_func_equal(got, expected):
    got, expected = got.without_attr("global_symbol"), expected.without_attr("global_symbol")
    assert structural_equal(got, expected), got.script()


@T.prim_func
def two_stage(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_split_compute_at_with_predicate():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), "float32")
        for i_0 in range(3):
            for ax0, ax1 in T.grid(6, 16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i_0 * 6 + ax0)
                    vj = T.axis.spatial(16, ax1)
                    T.where(i_0 * 6 + ax0 < 16)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for i_1, j in T.grid(6, 16):
                with T.block("C"):
                    vi = T.axis.spatial(16, i_0 * 6 + i_1)
                    vj = T.axis.spatial(16, j)
                    T.where(i_0 * 6 + i_1 < 16)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)

    sch = tir.Schedule(two_stage)
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, factors=[None, 6])
    sch.compute_at(sch.get_block("B"), io)
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(two_stage, sch.mod["main"])


def test_fuse_split_reverse_compute_at():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), "float32")
        for i_j_fused_0 in range(32):
            for i_j_fused_1 in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(16, (i_j_fused_0 * 8 + i_j_fused_1) // 16)
                    vj = T.axis.spatial(16, (i_j_fused_0 * 8 + i_j_fused_1) % 16)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for ax0 in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(16, i_j_fused_0 // 2)
                    vj = T.axis.spatial(16, i_j_fused_0 % 2 * 8 + ax0)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)

    sch = tir.Schedule(two_stage)
    i, j = sch.get_loops(sch.get_block("B"))
    o, _ = sch.split(sch.fuse(i, j), factors=[None, 8])
    sch.reverse_compute_at(sch.get_block("C"), o)
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(two_stage, sch.mod["main"])


def test_compute_inline_script():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)

    sch = tir.Schedule(two_stage)
    sch.compute_inline(sch.get_block("B"))
    assert_func_equal(sch.mod["main"], expected)


def test_gpu_tiling_with_decompose_reduction():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")
    ):
        for i_0 in T.thread_binding(2, thread="blockIdx.x"):
            for j_0 in T.thread_binding(2, thread="threadIdx.x"):
                for i_1_init in range(4):
                    for j_1_init in T.vectorized(4):
                        with T.block("C_init"):
                            vi = T.axis.spatial(8, i_0 * 4 + i_1_init)
                            vj = T.axis.spatial(8, j_0 * 4 + j_1_init)
                            T.reads()
                            T.writes(C[vi, vj])
                            C[vi, vj] = T.float32(0.0)
                for k, i_1 in T.grid(8, 4):
                    for j_1 in T.vectorized(4):
                        with T.block("C_update"):
                            vi = T.axis.spatial(8, i_0 * 4 + i_1)
                            vj = T.axis.spatial(8, j_0 * 4 + j_1)
                            vk = T.axis.reduce(8, k)
                            T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    sch = tir.Schedule(matmul)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "threadIdx.x")
    sch.vectorize(j1)
    sch.decompose_reduction(c, k)
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(matmul, sch.mod["main"])


def test_script_round_trip_of_scheduled_function():
    import graphc.script

    sch = tir.Schedule(matmul)
    c = sch.get_block("C")
    a_index = [r.buffer.name for r in sch.get(c).reads].index("A")
    sch.cache_read(c, a_index, "shared")
    i, j, k = sch.get_loops(c)
    sch.split(j, factors=[None, 3])
    sch.parallel(i)
    f = sch.mod["main"]
    assert structural_equal(graphc.script.from_source(f.script()), f)
