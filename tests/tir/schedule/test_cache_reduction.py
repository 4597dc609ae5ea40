"""cache_read / cache_write / set_scope / decompose_reduction / rfactor / storage_align / small look-ups."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.script import tir as T
from graphc.tir import ScheduleError


def test_cache_read_input_then_compute_at():
    f = P.matmul(8, 8, 4)
    sch = tir.Schedule(f)
    c = sch.get_block("C")
    a_shared = sch.cache_read(c, 0, "shared")
    assert a_shared.name == "A_shared"
    blk = sch.get(c)
    assert [r.buffer.name for r in blk.reads] == ["A_shared", "B"]
    alloc = sch.get(sch.get_block("root")).alloc_buffers
    assert [(b.name, b.scope) for b in alloc] == [("A_shared", "shared")]
    assert [b.name for b in sch.get_producers(c)] == ["A_shared"]
    P.assert_same_result(f, sch.mod["main"])
    i, j, k = sch.get_loops(c)
    sch.compute_at(a_shared, i)
    assert [sch.get(lp).extent.value for lp in sch.get_loops(a_shared)] == [8, 4]
    P.assert_same_result(f, sch.mod["main"])


def test_cache_write_then_reverse_compute_at():
    f = P.matmul(8, 8, 4)
    sch = tir.Schedule(f)
    c = sch.get_block("C")
    c_local = sch.cache_write(c, 0, "local")
    assert c_local.name == "C_local"
    assert [w.buffer.name for w in sch.get(c).writes] == ["C_local"]
    assert [b.name for b in sch.get_consumers(c)] == ["C_local"]
    P.assert_same_result(f, sch.mod["main"])
    i, j, k = sch.get_loops(c)
    sch.reverse_compute_at(c_local, j)
    assert len(sch.get_loops(c_local)) == 2
    P.assert_same_result(f, sch.mod["main"])


def test_cache_errors():
    sch = tir.Schedule(P.two_stage())
    c, b = sch.get_block("C"), sch.get_block("B")
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="out of range"):
        sch.cache_read(c, 3, "shared")
    with pytest.raises(ScheduleError, match="out of range"):
        sch.cache_write(c, 1, "local")
    P.assert_unchanged(sch, before)
    ci, _ = sch.get_loops(c)
    sch.compute_at(b, ci)
    # after compute_at the copies go inside the shared loop nest, as TVM places them
    sch.cache_read(c, 0, "shared")
    sch.cache_write(b, 0, "local")
    assert [sch.get(blk).name_hint for blk in sch.get_child_blocks(ci)] == ["B", "B_local", "B_shared", "C"]
    P.assert_same_result(P.two_stage(), sch.mod["main"])


def test_set_scope():
    f = P.two_stage()
    sch = tir.Schedule(f)
    sch.set_scope(sch.get_block("B"), 0, "shared")
    (buf,) = sch.get(sch.get_block("root")).alloc_buffers
    assert buf.scope == "shared"
    assert sch.get(sch.get_block("C")).reads[0].buffer is buf
    P.assert_same_result(f, sch.mod["main"])
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="parameter of the function"):
        sch.set_scope(sch.get_block("C"), 0, "shared")
    P.assert_unchanged(sch, before)


def test_decompose_reduction():
    f = P.matmul(4, 4, 4)
    sch = tir.Schedule(f)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    init = sch.decompose_reduction(c, k)
    assert init.name == "C_init"
    assert sch.get(c).name_hint == "C_update" and sch.get(c).init is None
    assert [b.name for b in sch.get_child_blocks(i)] == ["C_init", "C_update"]
    assert len(sch.get_loops(init)) == 2
    P.assert_same_result(f, sch.mod["main"])
    sch2 = tir.Schedule(f)
    c2 = sch2.get_block("C")
    i2, _, _ = sch2.get_loops(c2)
    init2 = sch2.decompose_reduction(c2, i2)
    assert [sch2.get(lp).extent.value for lp in sch2.get_loops(init2)] == [4, 4]
    sch2.parallel(sch2.get_loops(c2)[0])  # spatial loop of the update can still be parallel
    P.assert_same_result(f, sch2.mod["main"])


def test_decompose_reduction_errors():
    sch = tir.Schedule(P.two_stage())
    b = sch.get_block("B")
    bi, _ = sch.get_loops(b)
    ci, _ = sch.get_loops(sch.get_block("C"))
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="no init"):
        sch.decompose_reduction(b, bi)
    P.assert_unchanged(sch, before)
    sch = tir.Schedule(P.mm_relu(4))
    y = sch.get_block("Y")
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="not one of the loops around the block"):
        sch.decompose_reduction(y, sch.get_loops(sch.get_block("C"))[0])
    _, _, k = sch.get_loops(y)
    k0, k1 = sch.split(k, factors=[2, 2])
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="loop k_0 above it drives a reduce iter"):
        sch.decompose_reduction(y, k1)
    P.assert_unchanged(sch, before)


def test_get_output_blocks_and_add_unit_loop():
    f = P.two_stage()
    sch = tir.Schedule(f)
    assert [b.name for b in sch.get_output_blocks(sch.get_block("root"))] == ["C"]
    c = sch.get_block("C")
    u = sch.add_unit_loop(c)
    loops = sch.get_loops(c)
    assert loops[-1].var is u.var and sch.get(u).extent.value == 1
    with pytest.raises(ScheduleError, match="root block"):
        sch.add_unit_loop(sch.get_block("root"))
    P.assert_same_result(f, sch.mod["main"])


def test_trace_replays_cache_and_decompose():
    f = P.matmul(4, 4, 4)
    sch = tir.Schedule(f)
    c = sch.get_block("C")
    sch.cache_read(c, 1, "shared")
    i, j, k = sch.get_loops(c)
    sch.decompose_reduction(c, k)
    replay = tir.Schedule(f)
    sch.trace.apply_to(replay)
    from graphc.ir import structural_equal

    assert structural_equal(replay.mod["main"], sch.mod["main"])
    assert 'sch.cache_read(b0, 1, "shared")' in str(sch.trace)


def test_compute_at_after_decompose_is_not_a_stage_pipeline():
    f = P.matmul(4, 4, 4)
    sch = tir.Schedule(f)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    init = sch.decompose_reduction(c, i)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="not a stage pipeline"):
        sch.compute_at(init, k)  # the init would run again on every step of k
    P.assert_unchanged(sch, before)


def test_decompose_reduction_drops_reduction_guards_from_init():
    f = P.matmul(4, 4, 4)
    sch = tir.Schedule(f)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.split(k, factors=[None, 3])  # guarded by k_0 * 3 + k_1 < 4
    init = sch.decompose_reduction(c, i)
    assert isinstance(sch.get(sch.get_loops(init)[-1]).body.predicate, tir.IntImm)
    P.assert_same_result(f, sch.mod["main"])


def test_rfactor_row_sum_structure():
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0.0
                B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        B_rf = T.alloc_buffer((4, 4), "float32")
        for i, k_0, k_1 in T.grid(4, 2, 4):
            with T.block("B_rf"):
                vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                T.reads(A[vi, vk_0 * 4 + vk_1])
                T.writes(B_rf[vk_1, vi])
                with T.init():
                    B_rf[vk_1, vi] = T.float32(0.0)
                B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
        for i, k_1 in T.grid(4, 4):
            with T.block("B"):
                vk_1, vi = T.axis.remap("RS", [k_1, i])  # TVM: the rf iter first
                T.reads(B_rf[vk_1, vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + B_rf[vk_1, vi]

    sch = tir.Schedule(before)
    _, k = sch.get_loops(sch.get_block("B"))
    _, k1 = sch.split(k, factors=[None, 4])
    rf = sch.rfactor(k1, 0)
    assert rf.name == "B_rf"
    got = sch.mod["main"].without_attr("global_symbol")
    assert structural_equal(got, expected.without_attr("global_symbol")), got.script()
    P.assert_same_result(before, sch.mod["main"])
    sch.parallel(sch.get_loops(rf)[0])  # i: the partial sums are spatial in i
    P.assert_same_result(before, sch.mod["main"])


def test_rfactor_matmul_and_errors():
    f = P.matmul(4, 4, 4)
    sch = tir.Schedule(f)
    i, j, k = sch.get_loops(sch.get_block("C"))
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="reduce iters only"):
        sch.rfactor(j, 0)
    with pytest.raises(ScheduleError, match="factor_axis 5 is out of range"):
        sch.rfactor(k, 5)
    P.assert_unchanged(sch, before)
    sch.rfactor(k, 1)
    rf_buf = sch.get(sch.get_block("root")).alloc_buffers[0]
    assert rf_buf.name == "C_rf" and [int(d) for d in rf_buf.shape] == [4, 4, 4]
    P.assert_same_result(f, sch.mod["main"])
    sch2 = tir.Schedule(P.two_stage())
    with pytest.raises(ScheduleError, match="exactly one reduction block"):
        sch2.rfactor(sch2.get_loops(sch2.get_block("B"))[0], 0)


def test_storage_align_annotation():
    sch = tir.Schedule(P.two_stage())
    b = sch.get_block("B")
    sch.storage_align(b, 0, 0, 32, 8)
    assert sch.get(b).annotations["buffer_dim_align"] == [[0, 0, 32, 8]]
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="axis"):
        sch.storage_align(b, 0, 2, 32, 8)
    P.assert_unchanged(sch, before)
