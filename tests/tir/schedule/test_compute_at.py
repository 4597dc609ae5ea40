"""compute_at / reverse_compute_at: regions, structure, numerics and the illegal cases."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.tir import ScheduleError


def _realize(f, name):
    from graphc.tir.schedule.state import find_block_path

    return find_block_path(f.body, name)[-1]


def test_compute_at_outer_loop_structure():
    f = P.two_stage()
    sch = tir.Schedule(f)
    ci, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), ci)
    b, c = _realize(f, "B").block, _realize(f, "C").block
    i, ax0, j = tir.Var("i"), tir.Var("ax0"), tir.Var("j")
    body = P.loop(i, 8, tir.SeqStmt((
        P.loop(ax0, 8, tir.BlockRealize((i, ax0), P.TRUE, b)),
        P.loop(j, 8, tir.BlockRealize((i, j), P.TRUE, c)),
    )))  # fmt: skip
    assert structural_equal(sch.mod["main"], P.with_root_body(f, body))
    P.assert_same_result(f, sch.mod["main"])


def test_compute_at_inner_loop_drops_unit_loops_unless_preserved():
    f = P.two_stage()
    sch = tir.Schedule(f)
    _, cj = sch.get_loops(sch.get_block("C"))
    keep = sch.copy()
    sch.compute_at(sch.get_block("B"), cj)
    assert len(sch.get_loops(sch.get_block("B"))) == 2
    b, c = _realize(f, "B").block, _realize(f, "C").block
    i, j = tir.Var("i"), tir.Var("j")
    body = P.loop(i, 8, P.loop(j, 8, tir.SeqStmt((
        tir.BlockRealize((i, j), P.TRUE, b), tir.BlockRealize((i, j), P.TRUE, c),
    ))))  # fmt: skip
    assert structural_equal(sch.mod["main"], P.with_root_body(f, body))
    keep.compute_at(keep.get_block("B"), cj, preserve_unit_loops=True)
    loops = keep.get_loops(keep.get_block("B"))
    assert [keep.get(lp).extent.value for lp in loops] == [8, 8, 1, 1]
    P.assert_same_result(f, sch.mod["main"])
    P.assert_same_result(f, keep.mod["main"])


def test_compute_at_tiled_consumer_covers_tile():
    f = P.two_stage(8, 8)
    sch = tir.Schedule(f)
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, i1, j1)
    sch.compute_at(sch.get_block("B"), j0)
    loops = sch.get_loops(sch.get_block("B"))
    assert [sch.get(lp).extent.value for lp in loops] == [2, 2, 4, 4]
    P.assert_same_result(f, sch.mod["main"])


def test_compute_at_non_dividing_split_adds_predicate():
    f = P.two_stage(8, 8)
    sch = tir.Schedule(f)
    _, j = sch.get_loops(sch.get_block("C"))
    j0, _ = sch.split(j, factors=[None, 3])
    sch.compute_at(sch.get_block("B"), j0)
    realize = _realize(sch.mod["main"], "B")
    assert not isinstance(realize.predicate, tir.IntImm)
    P.assert_same_result(f, sch.mod["main"])


def test_reverse_compute_at_mlc_mm_relu():
    f = P.mm_relu(8)
    sch = tir.Schedule(f)
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C"), j0)
    loops = sch.get_loops(sch.get_block("C"))
    assert [sch.get(lp).loop_var for lp in loops[:2]] == [i.var, j0.var]
    assert sch.get(loops[2]).extent.value == 4
    P.assert_same_result(f, sch.mod["main"])


def test_reverse_compute_at_structure():
    f = P.two_stage()
    sch = tir.Schedule(f)
    bi, _ = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(sch.get_block("C"), bi)
    b, c = _realize(f, "B").block, _realize(f, "C").block
    i, j, ax0 = tir.Var("i"), tir.Var("j"), tir.Var("ax0")
    body = P.loop(i, 8, tir.SeqStmt((
        P.loop(j, 8, tir.BlockRealize((i, j), P.TRUE, b)),
        P.loop(ax0, 8, tir.BlockRealize((i, ax0), P.TRUE, c)),
    )))  # fmt: skip
    assert structural_equal(sch.mod["main"], P.with_root_body(f, body))
    P.assert_same_result(f, sch.mod["main"])


def test_compute_at_reduction_producer():
    f = P.mm_relu(4)
    sch = tir.Schedule(f)
    ci, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("Y"), ci)
    loops = sch.get_loops(sch.get_block("Y"))
    assert [sch.get(lp).extent.value for lp in loops] == [4, 4, 4]
    P.assert_same_result(f, sch.mod["main"])


def test_compute_at_errors_leave_schedule_unchanged():
    sch = tir.Schedule(P.two_stage())
    b, c = sch.get_block("B"), sch.get_block("C")
    bi, bj = sch.get_loops(b)
    ci, _ = sch.get_loops(c)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="already an ancestor"):
        sch.compute_at(b, bi)
    with pytest.raises(ScheduleError, match="no consumers"):
        sch.compute_at(c, bi)
    with pytest.raises(ScheduleError, match="no producers"):
        sch.reverse_compute_at(b, ci)
    with pytest.raises(ScheduleError, match="root block"):
        sch.compute_at(sch.get_block("root"), ci)
    P.assert_unchanged(sch, before)


def test_compute_at_to_loop_not_above_consumer():
    f = P.mm_relu(4)
    sch = tir.Schedule(f)
    y, c = sch.get_block("Y"), sch.get_block("C")
    ci, cj = sch.get_loops(c)
    sch.compute_at(y, ci)
    _, yj, yk = sch.get_loops(y)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="drives the reduction iter vk"):
        sch.reverse_compute_at(c, yk)  # C would read Y before its reduction is complete
    P.assert_unchanged(sch, before)
    sch.reverse_compute_at(c, yj)  # after the whole reduction over k: legal
    P.assert_same_result(f, sch.mod["main"])


def test_compute_at_consumer_not_under_loop():
    f = P.two_stage()
    sch = tir.Schedule(f)
    c = sch.get_block("C")
    ci, cj = sch.get_loops(c)
    cj0, cj1 = sch.split(cj, factors=[2, 4])
    sch2 = sch.copy()
    before = P.snapshot(sch)
    # the loop must be above every consumer: a loop of the producer itself is not
    with pytest.raises(ScheduleError):
        sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[1])
    P.assert_unchanged(sch, before)
    sch2.compute_at(sch2.get_block("B"), cj0)
    P.assert_same_result(f, sch2.mod["main"])


def test_compute_at_symbolic_extent_under_parallel_tiles():
    import numpy as np

    from graphc.script import tir as T
    from graphc.tir.interpreter import run_primfunc

    @T.prim_func
    def f(a: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 8), "float32")
        C = T.match_buffer(c, (n, 8), "float32")
        B = T.alloc_buffer((n, 8), "float32")
        for i, j in T.grid(n, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(n, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = tir.Schedule(f)
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, factors=[None, 4])
    sch.compute_at(sch.get_block("B"), io)
    sch.parallel(io)
    assert [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("B"))[1:]] == [4, 8]
    for n in (3, 9):
        a = np.random.default_rng(n).standard_normal((n, 8)).astype("float32")
        c = np.zeros_like(a)
        run_primfunc(sch.mod["main"], a, c)
        np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


# -- accesses that are bijective affine maps of the block iters (TVM's affine case) --------

from graphc.script import tir as T  # noqa: E402
from graphc.tir.schedule.testing import assert_structural_equal_ignore_global_symbol  # noqa: E402


@T.prim_func
def reversed_producer(X: T.Buffer((6, 6), "float32"), Z: T.Buffer((6, 6), "float32")):
    Y = T.alloc_buffer((6, 6), "float32")
    for i, j in T.grid(6, 6):
        with T.block("b0"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[5 - vi, 5 - vj] = X[vi, vj] + 1.0
    for i, j in T.grid(6, 6):
        with T.block("b1"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vj, vi] + 2.0


@T.prim_func
def reversed_producer_computed_at(X: T.Buffer((6, 6), "float32"), Z: T.Buffer((6, 6), "float32")):
    Y = T.alloc_buffer((6, 6))
    for i in range(6):
        for ax0 in range(6):
            with T.block("b0"):
                vi = T.axis.spatial(6, ax0)
                vj = T.axis.spatial(6, 5 - i)
                T.reads(X[vi, vj])
                T.writes(Y[5 - vi, 5 - vj])
                Y[5 - vi, 5 - vj] = X[vi, vj] + T.float32(1.0)
        for j in range(6):
            with T.block("b1"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(Y[vj, vi])
                T.writes(Z[vi, vj])
                Z[vi, vj] = Y[vj, vi] + T.float32(2.0)


@T.prim_func
def flattening_consumer(X: T.Buffer((4, 4), "float32"), Y: T.Buffer((16,), "float32")):
    temp = T.alloc_buffer((4, 4), "float32")
    for i, j in T.grid(4, 4):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            temp[vi, vj] = X[vj, vi] + 1.0
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            Y[vi] = temp[vi // 4, vi % 4]


@T.prim_func
def flattening_consumer_at_row(X: T.Buffer((4, 4), "float32"), Y: T.Buffer((16,), "float32")):
    temp = T.alloc_buffer((4, 4))
    for i in range(4):
        for j in range(4):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vj, vi])
                T.writes(temp[vi, vj])
                temp[vi, vj] = X[vj, vi] + T.float32(1.0)
        for ax0 in range(4):
            with T.block("B"):
                vi = T.axis.spatial(16, i * 4 + ax0)
                T.reads(temp[vi // 4, vi % 4])
                T.writes(Y[vi])
                Y[vi] = temp[vi // 4, vi % 4]


def test_compute_at_a_producer_that_writes_reversed_indices():
    sch = tir.Schedule(reversed_producer)
    sch.compute_at("b0", sch.get_loops("b1")[0])
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], reversed_producer_computed_at)
    P.assert_same_result(reversed_producer, sch.mod["main"])


def test_reverse_compute_at_a_consumer_that_reads_through_floordiv_and_floormod():
    sch = tir.Schedule(flattening_consumer)
    sch.reverse_compute_at("B", sch.get_loops("A")[0])
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], flattening_consumer_at_row)
    P.assert_same_result(flattening_consumer, sch.mod["main"])
    sch = tir.Schedule(flattening_consumer)
    sch.reverse_compute_at("B", sch.get_loops("A")[1])  # one element per iteration
    P.assert_same_result(flattening_consumer, sch.mod["main"])


def test_reverse_compute_at_refuses_a_region_that_is_not_a_box_of_the_consumer():
    @T.prim_func
    def f(X: T.Buffer((4, 4), "float32"), Y: T.Buffer((16,), "float32")):
        temp = T.alloc_buffer((4, 4), "float32")
        for j, i in T.grid(4, 4):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                temp[vi, vj] = X[vj, vi] + 1.0
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                Y[vi] = temp[vi // 4, vi % 4]

    sch = tir.Schedule(f)
    before = P.snapshot(sch)
    # one iteration of j writes the column temp[0:4, j]: elements 4 apart in Y's order
    with pytest.raises(ScheduleError, match="reverse_compute_at block 'B'.*not one box"):
        sch.reverse_compute_at("B", sch.get_loops("A")[0])
    P.assert_unchanged(sch, before)
