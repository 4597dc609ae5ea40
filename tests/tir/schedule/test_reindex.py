"""reindex: exact structure (TVM's copy blocks over the iters the access uses), numerics, illegal cases."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.script import tir as T
from graphc.tir import ScheduleError
from graphc.tir.analysis.verify_well_formed import verify_well_formed


def assert_func_equal(got, expected):
    got, expected = got.without_attr("global_symbol"), expected.without_attr("global_symbol")
    assert structural_equal(got, expected), got.script()


@T.prim_func
def matmul_nt(A: T.Buffer((8, 6), "float32"), B: T.Buffer((4, 6), "float32"), C: T.Buffer((8, 4), "float32")):
    for i, j, k in T.grid(8, 4, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def _illegal(sch, fn):
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError) as info:
        fn()
    P.assert_unchanged(sch, before)
    return str(info.value)


def test_reindex_transposed_read():
    @T.prim_func
    def before(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi] * 2.0

    @T.prim_func
    def expected(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32")):
        A_reindex = T.alloc_buffer((4, 8), "float32")
        for ax0, ax1 in T.grid(4, 8):
            with T.block("A_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v1, v0])
                T.writes(A_reindex[v0, v1])
                A_reindex[v0, v1] = A[v1, v0]
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A_reindex[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A_reindex[vi, vj] * 2.0

    sch = tir.Schedule(before)
    rv = sch.reindex(sch.get_block("B"), ("read", 0))
    assert sch.get(rv).name_hint == "A_reindex"
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(before, sch.mod["main"])


def test_reindex_matmul_write_and_read():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 6), "float32"), B: T.Buffer((4, 6), "float32"), C: T.Buffer((8, 4), "float32")
    ):
        C_reindex = T.alloc_buffer((8, 4), "float32")
        A_reindex = T.alloc_buffer((8, 6), "float32")
        for ax0, ax2 in T.grid(8, 6):
            with T.block("A_reindex"):
                v0, v2 = T.axis.remap("SS", [ax0, ax2])
                T.reads(A[v0, v2])
                T.writes(A_reindex[v0, v2])
                A_reindex[v0, v2] = A[v0, v2]
        for i, j, k in T.grid(8, 4, 6):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A_reindex[vi, vk], B[vj, vk])
                T.writes(C_reindex[vi, vj])
                with T.init():
                    C_reindex[vi, vj] = T.float32(0.0)
                C_reindex[vi, vj] = C_reindex[vi, vj] + A_reindex[vi, vk] * B[vj, vk]
        for ax0, ax1 in T.grid(8, 4):
            with T.block("C_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(C_reindex[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_reindex[v0, v1]

    sch = tir.Schedule(matmul_nt)
    c = sch.get_block("C")
    sch.reindex(c, ("write", 0))
    sch.reindex(c, ("read", 0))
    assert_func_equal(sch.mod["main"], expected)
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(matmul_nt, sch.mod["main"])
    assert str(sch.trace).splitlines()[1:] == [
        'b1 = sch.reindex(b0, ("write", 0))',
        'b2 = sch.reindex(b0, ("read", 0))',
    ]
    replay = tir.Schedule(matmul_nt)
    sch.trace.apply_to(replay)
    assert structural_equal(replay.mod["main"], sch.mod["main"])


def test_reindex_of_a_buffer_another_loop_nest_writes():
    """The copy runs right before the consumer's loop nest, after the producer's (TVM's conv2d
    PadInput case); blocks and buffers may be given by name."""
    f = P.two_stage()
    sch = tir.Schedule(f)
    rv = sch.reindex("C", "B")
    assert sch.get(rv).name_hint == "B_reindex"
    assert [str(r) for r in sch.get(sch.get_block("C")).reads] == ["B_reindex[vi, vj]"]
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(f, sch.mod["main"])


def test_reindex_errors_leave_the_schedule_unchanged():
    sch = tir.Schedule(P.two_stage())
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[1])
    msg = _illegal(sch, lambda: sch.reindex(sch.get_block("C"), ("read", 0)))
    assert "reindex read buffer 0 of block 'C'" in msg
    assert "B is also accessed by block(s) B under the same loops" in msg
    msg = _illegal(sch, lambda: sch.reindex("C", "Z"))
    assert "reindex 'Z' of block 'C'" in msg and "no buffer of that name" in msg
    assert "('read' | 'write', index)" in _illegal(sch, lambda: sch.reindex("C", 0))
    s2 = tir.Schedule(matmul_nt)
    c = s2.get_block("C")
    assert "out of range" in _illegal(s2, lambda: s2.reindex(c, ("read", 7)))

    @T.prim_func
    def stencil(A: T.Buffer((9,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + A[vi + 1]

    s3 = tir.Schedule(stencil)
    assert "exactly one index tuple" in _illegal(s3, lambda: s3.reindex(s3.get_block("B"), ("read", 0)))


def test_reindex_of_a_non_leaf_block_is_an_error():
    sch = tir.Schedule(P.elementwise())
    i, _ = sch.get_loops(sch.get_block("B"))
    outer = sch.blockize(i)
    assert "not a leaf block" in _illegal(sch, lambda: sch.reindex(outer, ("read", 0)))


def test_reindex_of_a_guarded_access_that_may_leave_the_buffer_is_an_error():
    @T.prim_func
    def guarded(A: T.Buffer((4,), "float32"), B: T.Buffer((6,), "float32")):
        for i in range(6):
            with T.block("B"):
                vi = T.axis.spatial(6, i)
                B[vi] = T.if_then_else(vi < 4, A[vi], T.float32(0))

    sch = tir.Schedule(guarded)
    assert "out of bounds" in _illegal(sch, lambda: sch.reindex(sch.get_block("B"), ("read", 0)))


def test_rfactor_with_a_consumer_in_the_loop_nest():
    """The write-back block stays where the block was (TVM's placement), so the reindex copy
    after it in the same nest reads finished sums."""
    f = P.row_sum(4, 6)
    sch = tir.Schedule(f)
    b = sch.get_block("B")
    r = sch.reindex(b, ("write", 0))
    sch.compute_at(b, sch.get_loops(r)[0])
    P.assert_same_result(f, sch.mod["main"])
    sch.rfactor(sch.get_loops(b)[1], 0)
    P.assert_same_result(f, sch.mod["main"])
    assert len(sch.get_loops(r)) == 1 and len(sch.get_loops(b)) == 2


@T.prim_func
def _row_sums(A: T.Buffer((5, 8), "float32"), C: T.Buffer((5,), "float32")):
    for i, k in T.grid(5, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = 0.0
            C[vi] = C[vi] + A[vi, vk]


@pytest.mark.parametrize("how", ["loop_partition", "decompose_reduction"])
def test_reindex_write_of_an_update_without_its_init_is_refused(how):
    """The part of a reduction that accumulates onto what another block wrote (the second part
    of a partitioned reduction loop, or decompose_reduction's update) cannot be reindexed: the
    fresh buffer would not start from those values. The part with the init can."""
    sch = tir.Schedule(_row_sums)
    if how == "loop_partition":
        i, k = sch.get_loops("C")
        sch.reorder(k, i)
        sch.loop_partition(k, [None, 3])
        first, second = sch.get_child_blocks(sch.get_block("root"))
        update = second
    else:
        i, _ = sch.get_loops("C")
        first = sch.decompose_reduction("C", i)
        update = sch.get_block("C_update")
    before = P.snapshot(sch)
    why = "never reach the start of reduce iter vk" if how == "loop_partition" else "has no init"
    with pytest.raises(ScheduleError, match=rf"reindex write buffer 0 of block .*{why}"):
        sch.reindex(update, ("write", 0))
    P.assert_unchanged(sch, before)
    if how == "loop_partition":
        sch.reindex(first, ("write", 0))  # the part holding the init
        P.assert_same_result(_row_sums, sch.mod["main"])


def test_reindex_of_one_part_of_a_partitioned_loop_is_refused():
    """After loop_partition of a spatial loop each part writes some rows of the buffer: a copy
    over the whole domain from one part's reindex buffer would overwrite the other part's rows
    (found by benchmarks/schedule_fuzz.py)."""
    sch = tir.Schedule(_row_sums)
    i, _ = sch.get_loops("C")
    sch.loop_partition(i, [None, 2])
    _, second = sch.get_child_blocks(sch.get_block("root"))
    before = P.snapshot(sch)
    with pytest.raises(
        ScheduleError, match=r"reindex write buffer 0 of block .*visit only part of the domain of vi"
    ):
        sch.reindex(second, ("write", 0))
    P.assert_unchanged(sch, before)
