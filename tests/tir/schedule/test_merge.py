"""merge: exact structure, numerics, and the refused (dependent or mismatched) cases."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.script import tir as T
from graphc.tir import ScheduleError


def assert_func_equal(got, expected):
    got, expected = got.without_attr("global_symbol"), expected.without_attr("global_symbol")
    assert structural_equal(got, expected), got.script()


def _illegal(sch, fn):
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError) as info:
        fn()
    P.assert_unchanged(sch, before)
    return str(info.value)


@T.prim_func
def two_outputs(
    A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")
):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + 1.0


def test_merge_independent_nests():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")
    ):
        for i, j in T.grid(8, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * 2.0
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] + 1.0

    sch = tir.Schedule(two_outputs)
    jb = sch.get_loops(sch.get_block("B"))[1]
    jc = sch.get_loops(sch.get_block("C"))[1]
    merged = sch.merge(jc, jb)
    assert sch.get(merged) is sch.get(sch.get_loops(sch.get_block("C"))[1])
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(two_outputs, sch.mod["main"])
    assert str(sch.trace).splitlines()[4] == "l6 = sch.merge(l5, l2)"


def test_merge_outer_level_keeps_inner_loops_separate():
    sch = tir.Schedule(two_outputs)
    ib = sch.get_loops(sch.get_block("B"))[0]
    ic = sch.get_loops(sch.get_block("C"))[0]
    sch.merge(ib, ic)
    loops_b, loops_c = sch.get_loops(sch.get_block("B")), sch.get_loops(sch.get_block("C"))
    assert sch.get(loops_b[0]) is sch.get(loops_c[0]) and sch.get(loops_b[1]) is not sch.get(loops_c[1])
    P.assert_same_result(two_outputs, sch.mod["main"])


def test_merge_pointwise_producer_consumer():
    f = P.two_stage(4, 6)
    sch = tir.Schedule(f)
    sch.merge(sch.get_loops(sch.get_block("B"))[1], sch.get_loops(sch.get_block("C"))[1])
    P.assert_same_result(f, sch.mod["main"])
    replay = tir.Schedule(f)
    sch.trace.apply_to(replay)
    assert structural_equal(replay.mod["main"], sch.mod["main"])


def test_merge_refusals_leave_the_schedule_unchanged():
    f = P.two_stage(4, 4)
    sch = tir.Schedule(f)
    ib, jb = sch.get_loops(sch.get_block("B"))
    ic, jc = sch.get_loops(sch.get_block("C"))
    sch.reorder(jc, ic)  # C now reads B[vi, vj] at (j, i): not the element B wrote this iteration
    ic2, jc2 = sch.get_loops(sch.get_block("C"))
    assert "interleaving" in _illegal(sch, lambda: sch.merge(jb, jc2))
    assert "different depths" in _illegal(sch, lambda: sch.merge(ib, jc2))
    assert "at least two" in _illegal(sch, lambda: sch.merge(ib))
    s2 = tir.Schedule(two_outputs)
    b0, _ = s2.split(s2.get_loops(s2.get_block("B"))[0], [None, 2])
    assert "different extents" in _illegal(s2, lambda: s2.merge(b0, s2.get_loops(s2.get_block("C"))[0]))
    s3 = tir.Schedule(two_outputs)
    s3.parallel(s3.get_loops(s3.get_block("C"))[0])
    ib3, ic3 = s3.get_loops(s3.get_block("B"))[0], s3.get_loops(s3.get_block("C"))[0]
    assert "plain serial" in _illegal(s3, lambda: s3.merge(ib3, ic3))
    s4 = tir.Schedule(P.row_sum(4, 4))
    (i4, k4) = s4.get_loops(s4.get_block("B"))
    assert "different nests" in _illegal(s4, lambda: s4.merge(i4, k4))
