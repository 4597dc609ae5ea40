"""pad_einsum: exact structure, numerics, the tiling it enables, and the illegal cases."""

import numpy as np
import pytest
import sched_programs as P

import graphc
from graphc import te, tir
from graphc.ir import structural_equal
from graphc.script import tir as T
from graphc.tir import ScheduleError
from graphc.tir.analysis.verify_well_formed import verify_well_formed
from graphc.tir.schedule.state import walk


def assert_func_equal(got, expected):
    got, expected = got.without_attr("global_symbol"), expected.without_attr("global_symbol")
    assert structural_equal(got, expected), got.script()


@T.prim_func
def matmul(
    A: T.Buffer((10, 10), "float32"), B: T.Buffer((10, 10), "float32"), C: T.Buffer((10, 10), "float32")
):
    for i, j, k in T.grid(10, 10, 10):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _illegal(sch, fn):
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError) as info:
        fn()
    P.assert_unchanged(sch, before)
    return str(info.value)


def test_pad_einsum_matmul_structure_and_numerics():
    @T.prim_func
    def expected(
        A: T.Buffer((10, 10), "float32"), B: T.Buffer((10, 10), "float32"), C: T.Buffer((10, 10), "float32")
    ):
        A_pad = T.alloc_buffer((12, 12), "float32")
        B_pad = T.alloc_buffer((12, 10), "float32")
        C_pad = T.alloc_buffer((12, 10), "float32")
        for i0, i1 in T.grid(12, 12):
            with T.block("A_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v0, v1])
                T.writes(A_pad[v0, v1])
                A_pad[v0, v1] = T.if_then_else(v0 < 10 and v1 < 10, A[v0, v1], T.float32(0.0))
        for i0, i1 in T.grid(12, 10):
            with T.block("B_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(B[v0, v1])
                T.writes(B_pad[v0, v1])
                B_pad[v0, v1] = T.if_then_else(v0 < 10, B[v0, v1], T.float32(0.0))
        for i, j, k in T.grid(12, 10, 12):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A_pad[vi, vk], B_pad[vk, vj])
                T.writes(C_pad[vi, vj])
                with T.init():
                    C_pad[vi, vj] = T.float32(0.0)
                C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * B_pad[vk, vj]
        for i0, i1 in T.grid(10, 10):
            with T.block("C_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(C_pad[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_pad[v0, v1]

    sch = tir.Schedule(matmul)
    sch.pad_einsum(sch.get_block("C"), [4, 1, 4])
    assert_func_equal(sch.mod["main"], expected)
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(matmul, sch.mod["main"])
    P.assert_same_result_built(
        matmul.without_attr("global_symbol"), sch.mod["main"].without_attr("global_symbol")
    )
    assert str(sch.trace).splitlines()[-1] == "sch.pad_einsum(b0, [4, 1, 4])"


def test_pad_einsum_lets_a_1000_cubed_matmul_tile_by_32_without_predicates():
    n = 1000
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    c = sch.get_block("C")
    sch.pad_einsum(c, [32, 32, 32])
    i, j, kk = sch.get_loops(c)
    assert [sch.get(lp).extent.value for lp in (i, j, kk)] == [1024, 1024, 1024]
    i0, i1 = sch.split(i, [None, 32])
    j0, j1 = sch.split(j, [None, 32])
    k0, k1 = sch.split(kk, [None, 32])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    realizes = [s for s in walk(sch.mod["main"].body) if isinstance(s, tir.BlockRealize)]
    assert all(isinstance(r.predicate, tir.IntImm) and r.predicate.value == 1 for r in realizes)
    lib = graphc.build(sch.mod, target="llvm")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)).astype("float32"), rng.standard_normal((n, n)).astype("float32")
    out = np.zeros((n, n), "float32")
    lib["main"](a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-3, atol=1e-3)


def test_pad_einsum_spatial_block_and_noop():
    f = P.elementwise(6, 5)
    sch = tir.Schedule(f)
    sch.pad_einsum(sch.get_block("B"), [1, 1])
    assert sch.mod["main"] is f or structural_equal(sch.mod["main"], f)
    sch.pad_einsum(sch.get_block("B"), [4, 1])
    loops = sch.get_loops(sch.get_block("B"))
    assert [sch.get(lp).extent.value for lp in loops] == [8, 5]
    P.assert_same_result(f, sch.mod["main"])


def test_pad_einsum_symbolic_extent():
    m = te.var("m")
    A = te.placeholder((m, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    B = te.compute((m,), lambda i: te.sum(A[i, k] * 2.0, axis=k), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    sch.pad_einsum(sch.get_block("B"), [4, 1])
    (i, _) = sch.get_loops(sch.get_block("B"))
    assert str(sch.get(i).extent) == "(m + 3) // 4 * 4"
    lib = graphc.build(sch.mod, target="llvm")
    for rows in (1, 5, 8):
        a = np.random.default_rng(rows).standard_normal((rows, 8)).astype("float32")
        b = np.zeros(rows, "float32")
        lib["main"](a, b)
        np.testing.assert_allclose(b, (a * 2).sum(axis=1), rtol=1e-5, atol=1e-5)


def test_pad_einsum_errors_leave_the_schedule_unchanged():
    sch = tir.Schedule(matmul)
    c = sch.get_block("C")
    assert "3 iter vars" in _illegal(sch, lambda: sch.pad_einsum(c, [4, 4]))
    assert "positive" in _illegal(sch, lambda: sch.pad_einsum(c, [4, 0, 4]))
    i, _, _ = sch.get_loops(c)
    sch.split(i, [None, 5])
    assert "own loop" in _illegal(sch, lambda: sch.pad_einsum(c, [4, 4, 4]))

    @T.prim_func
    def shifted(A: T.Buffer((11,), "float32"), B: T.Buffer((10,), "float32")):
        for i in range(10):
            with T.block("B"):
                vi = T.axis.spatial(10, i)
                B[vi] = A[vi + 1]

    s2 = tir.Schedule(shifted)
    assert "not an einsum" in _illegal(s2, lambda: s2.pad_einsum(s2.get_block("B"), [4]))

    @T.prim_func
    def row_max(A: T.Buffer((10, 10), "float32"), B: T.Buffer((10,), "float32")):
        for i, k in T.grid(10, 10):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(-1e30)
                B[vi] = T.max(B[vi], A[vi, vk])

    s3 = tir.Schedule(row_max)
    assert "only sound" in _illegal(s3, lambda: s3.pad_einsum(s3.get_block("B"), [1, 4]))
    s3.pad_einsum(s3.get_block("B"), [4, 1])  # padding a spatial iter of a max is fine
    P.assert_same_result(row_max, s3.mod["main"])


def test_pad_einsum_of_a_block_without_loops_is_an_error():
    sch = tir.Schedule(P.elementwise(4, 4))
    i, _ = sch.get_loops(sch.get_block("B"))
    outer = sch.blockize(i, preserve_unit_iters=False)
    assert "no loops" in _illegal(sch, lambda: sch.pad_einsum(outer, [1, 1]))


def test_pad_einsum_after_decompose_reduction_is_refused():
    sch = tir.Schedule(matmul)
    c = sch.get_block("C")
    init = sch.decompose_reduction(c, sch.get_loops(c)[0])
    assert "also accesses its output" in _illegal(sch, lambda: sch.pad_einsum(c, [1, 3, 1]))
    assert sch.get(init).name_hint == "C_init"

    @T.prim_func
    def accumulate(A: T.Buffer((6, 6), "float32"), C: T.Buffer((6,), "float32")):
        for i, k in T.grid(6, 6):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + A[vi, vk]

    s2 = tir.Schedule(accumulate)
    assert "without an init" in _illegal(s2, lambda: s2.pad_einsum(s2.get_block("C"), [4, 1]))


@T.prim_func
def conv1d(X: T.Buffer((12,), "float32"), W: T.Buffer((10, 3), "float32"), Y: T.Buffer((10, 10), "float32")):
    for o, i, r in T.grid(10, 10, 3):
        with T.block("Y"):
            vo, vi, vr = T.axis.remap("SSR", [o, i, r])
            with T.init():
                Y[vo, vi] = 0.0
            Y[vo, vi] = Y[vo, vi] + X[vi + vr] * W[vo, vr]


def test_pad_einsum_reads_a_window_no_padded_iter_indexes():
    # a convolution's output channels padded: its input's window index stays as it is
    sch = tir.Schedule(conv1d)
    sch.pad_einsum(sch.get_block("Y"), [8, 1, 1])
    names = [b.name_hint for b in (sch.get(x) for x in sch.get_child_blocks(sch.get_block("root")))]
    assert names == ["W_pad", "Y", "Y_pad"]
    assert [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("Y"))] == [16, 10, 3]
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(conv1d, sch.mod["main"])
    # padding an iter the window uses is refused, saying which access
    s2 = tir.Schedule(conv1d)
    assert "X[vi + vr]" in _illegal(s2, lambda: s2.pad_einsum(s2.get_block("Y"), [1, 4, 1]))
    assert "X[vi + vr]" in _illegal(s2, lambda: s2.pad_einsum(s2.get_block("Y"), [1, 1, 2]))
