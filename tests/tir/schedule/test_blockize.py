"""blockize: exact structure (TVM's outer/inner division), numerics, and the illegal cases."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.script import tir as T
from graphc.tir import ScheduleError


def _built(f, g):
    P.assert_same_result_built(f.without_attr("global_symbol"), g.without_attr("global_symbol"))


def assert_func_equal(got, expected):
    got, expected = got.without_attr("global_symbol"), expected.without_attr("global_symbol")
    assert structural_equal(got, expected), got.script()


@T.prim_func
def elementwise(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0


@T.prim_func
def matmul(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_blockize_tiled_elementwise():
    @T.prim_func
    def expected(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        for i_0, j_0 in T.grid(2, 4):
            with T.block("B_o"):
                vi_o, vj_o = T.axis.remap("SS", [i_0, j_0])
                T.reads(A[vi_o * 16 : vi_o * 16 + 16, vj_o * 8 : vj_o * 8 + 8])
                T.writes(B[vi_o * 16 : vi_o * 16 + 16, vj_o * 8 : vj_o * 8 + 8])
                for i_1, j_1 in T.grid(16, 8):
                    with T.block("B"):
                        vi_i, vj_i = T.axis.remap("SS", [i_1, j_1])
                        T.reads(A[vi_o * 16 + vi_i, vj_o * 8 + vj_i])
                        T.writes(B[vi_o * 16 + vi_i, vj_o * 8 + vj_i])
                        B[vi_o * 16 + vi_i, vj_o * 8 + vj_i] = A[vi_o * 16 + vi_i, vj_o * 8 + vj_i] * 2.0

    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, i1, j1)
    outer = sch.blockize(i1)
    assert sch.get(outer).name_hint == "B_o"
    assert_func_equal(sch.mod["main"], expected)
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("B"))] == ["i_1", "j_1"]
    assert len(sch.get_loops(outer)) == 2
    P.assert_same_result(elementwise, sch.mod["main"])
    _built(elementwise, sch.mod["main"])


def test_blockize_whole_nest_keeps_unit_outer_iters():
    @T.prim_func
    def expected(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        with T.block("B_o"):
            vi_o = T.axis.spatial(1, 0)  # noqa: F841
            vj_o = T.axis.spatial(1, 0)  # noqa: F841
            T.reads(A[0:32, 0:32])
            T.writes(B[0:32, 0:32])
            for i, j in T.grid(32, 32):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0

    sch = tir.Schedule(elementwise)
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.blockize(i)
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(elementwise, sch.mod["main"])


def test_blockize_without_unit_iters():
    @T.prim_func
    def expected(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        for i in range(32):
            with T.block("B_o"):
                vi_o = T.axis.spatial(32, i)
                vj_o = T.axis.spatial(1, 0)  # noqa: F841 - TVM keeps a unit outer iter, bound to its one value
                T.reads(A[vi_o, 0:32])
                T.writes(B[vi_o, 0:32])
                for j in range(32):
                    with T.block("B"):
                        vj = T.axis.spatial(32, j)
                        T.reads(A[vi_o, vj])
                        T.writes(B[vi_o, vj])
                        B[vi_o, vj] = A[vi_o, vj] * 2.0

    sch = tir.Schedule(elementwise)
    _, j = sch.get_loops(sch.get_block("B"))
    sch.blockize(j, preserve_unit_iters=False)
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(elementwise, sch.mod["main"])


@pytest.mark.parametrize("preserve", [True, False])
def test_blockize_under_a_unit_loop(preserve):
    """A unit loop outside: the outer iter stays, bound to the loop or (not preserving) to 0."""

    @T.prim_func
    def before(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
        for i0, j0, i1, j1 in T.grid(1, 2, 16, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i0 * 16 + i1)
                vj = T.axis.spatial(32, j0 * 16 + j1)
                B[vi, vj] = A[vi, vj] + 1.0

    @T.prim_func
    def expected(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
        for i0, j0 in T.grid(1, 2):
            with T.block("B_o"):
                vi_o = T.axis.spatial(1, i0 if preserve else 0)  # noqa: F841
                vj_o = T.axis.spatial(2, j0)
                T.reads(A[0:16, vj_o * 16 : vj_o * 16 + 16])
                T.writes(B[0:16, vj_o * 16 : vj_o * 16 + 16])
                for i1, j1 in T.grid(16, 16):
                    with T.block("B"):
                        vi, vj_i = T.axis.remap("SS", [i1, j1])
                        T.reads(A[vi, vj_o * 16 + vj_i])
                        T.writes(B[vi, vj_o * 16 + vj_i])
                        B[vi, vj_o * 16 + vj_i] = A[vi, vj_o * 16 + vj_i] + 1.0

    sch = tir.Schedule(before)
    sch.blockize(sch.get_loops(sch.get_block("B"))[2], preserve_unit_iters=preserve)
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(before, sch.mod["main"])


def test_blockize_matmul_tile_moves_init_to_outer_block():
    @T.prim_func
    def expected(
        A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
    ):
        for i_0, j_0, k_0 in T.grid(2, 2, 8):
            with T.block("C_o"):
                vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
                T.reads(A[vi_o * 16 : vi_o * 16 + 16, vk_o * 4 : vk_o * 4 + 4],
                        B[vk_o * 4 : vk_o * 4 + 4, vj_o * 16 : vj_o * 16 + 16])  # fmt: skip
                T.writes(C[vi_o * 16 : vi_o * 16 + 16, vj_o * 16 : vj_o * 16 + 16])
                with T.init():
                    for i_1_init, j_1_init in T.grid(16, 16):
                        with T.block("C_init"):
                            vi_i_init, vj_i_init = T.axis.remap("SS", [i_1_init, j_1_init])
                            T.reads()
                            T.writes(C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init])
                            C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0.0)
                for i_1, j_1, k_1 in T.grid(16, 16, 4):
                    with T.block("C"):
                        vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k_1])
                        T.reads(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i], A[vi_o * 16 + vi_i, vk_o * 4 + vk_i],
                                B[vk_o * 4 + vk_i, vj_o * 16 + vj_i])  # fmt: skip
                        T.writes(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i])
                        C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = (
                            C[vi_o * 16 + vi_i, vj_o * 16 + vj_i]
                            + A[vi_o * 16 + vi_i, vk_o * 4 + vk_i] * B[vk_o * 4 + vk_i, vj_o * 16 + vj_i]
                        )

    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.blockize(i1)
    assert_func_equal(sch.mod["main"], expected)
    _built(matmul, sch.mod["main"])
    replay = tir.Schedule(matmul)
    sch.trace.apply_to(replay)
    assert structural_equal(replay.mod["main"], sch.mod["main"])
    assert "sch.blockize(" in str(sch.trace)


def test_blockize_then_schedule_inner_loops():
    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.blockize(j)
    jj, kk = sch.get_loops(sch.get_block("C"))
    sch.reorder(kk, jj)
    sch.split(jj, [None, 8])
    _built(matmul, sch.mod["main"])


def _illegal(sch, fn):
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError) as info:
        fn()
    P.assert_unchanged(sch, before)
    return str(info.value)


def test_blockize_two_blocks_is_an_error():
    f = P.two_stage()
    sch = tir.Schedule(f)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    (i, _) = sch.get_loops(sch.get_block("C"))
    assert "exactly one block" in _illegal(sch, lambda: sch.blockize(i))


def test_blockize_non_dividing_split_is_an_error():
    sch = tir.Schedule(P.elementwise(10, 4))
    i, _ = sch.get_loops(sch.get_block("B"))
    _, i1 = sch.split(i, [None, 4])
    assert "non-dividing" in _illegal(sch, lambda: sch.blockize(i1))


def test_blockize_non_dense_inner_part_is_an_error():
    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [4, None])
    sch.reorder(i1, i0)
    msg = _illegal(sch, lambda: sch.blockize(i0))
    assert "dense" in msg or "multiple" in msg


def test_blockize_twice_is_an_error_and_block_lists_are_refused():
    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.blockize(j)
    assert "already exists" in _illegal(sch, lambda: sch.blockize(j))
    assert "list of blocks" in _illegal(sch, lambda: sch.blockize([sch.get_block("B")]))


def test_blockize_reduction_with_predicate_on_reduction_loops():
    f = P.row_sum(4, 6)
    sch = tir.Schedule(f)
    _, k = sch.get_loops(sch.get_block("B"))
    sch.split(k, [None, 2, 2])
    i = sch.get_loops(sch.get_block("B"))[0]
    outer = sch.blockize(i, preserve_unit_iters=False)
    init = sch.get(outer).init
    from graphc.tir.schedule.state import walk

    (init_realize,) = [s for s in walk(init) if isinstance(s, tir.BlockRealize)]
    assert isinstance(init_realize.predicate, tir.IntImm)  # the k condition is not the init's
    from graphc.tir.analysis.verify_well_formed import verify_well_formed

    verify_well_formed(sch.mod["main"])
    P.assert_same_result(f, sch.mod["main"])


def test_compute_inline_into_a_blockized_consumer_refreshes_outer_reads():
    f = P.scale_then_sum(4, 4)
    sch = tir.Schedule(f)
    i, _ = sch.get_loops(sch.get_block("B"))
    outer = sch.blockize(i, preserve_unit_iters=False)
    sch.compute_inline(sch.get_block("S"))
    assert [r.buffer.name for r in sch.get(outer).reads] == ["A"]
    assert "S" not in [r.buffer.name for r in sch.get(sch.get_block("B")).reads]
    from graphc.tir.analysis.verify_well_formed import verify_well_formed

    verify_well_formed(sch.mod["main"])
    P.assert_same_result(f, sch.mod["main"])


def test_dropped_unit_outer_iter_becomes_its_value_not_the_loop_var():
    # conv2d with batch 1: blockizing below the unit batch loop without preserve_unit_iters
    # once left the batch loop var itself inside the new outer block (and its init).
    from graphc import te
    from graphc.tir.analysis.verify_well_formed import verify_well_formed

    data, weight = te.placeholder((1, 2, 6, 6), name="data"), te.placeholder((3, 2, 3, 3), name="weight")
    rc, ry, rx = te.reduce_axis((0, 2), "rc"), te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx")
    out = te.compute(
        (1, 3, 4, 4),
        lambda n, f, y, x: te.sum(data[n, rc, y + ry, x + rx] * weight[f, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    f = te.create_prim_func([data, weight, out])
    sch = tir.Schedule(f)
    loops = sch.get_loops(sch.get_block("conv"))
    sch.blockize(loops[1], preserve_unit_iters=False)
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(f, sch.mod["main"])
