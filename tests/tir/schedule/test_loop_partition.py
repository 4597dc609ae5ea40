"""loop_partition: exact structure, numerics, renamed blocks and the illegal cases."""

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


def _illegal(sch, fn):
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError) as info:
        fn()
    P.assert_unchanged(sch, before)
    return str(info.value)


@T.prim_func
def elementwise(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
    for i, j in T.grid(16, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0


def test_loop_partition_structure():
    @T.prim_func
    def expected(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
        for i0 in range(2):
            for j in range(4):
                with T.block("B_i0"):
                    vi = T.axis.spatial(16, i0)
                    vj = T.axis.spatial(4, j)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0
        for i1 in range(2, 10):
            for j in range(4):
                with T.block("B_i1"):
                    vi = T.axis.spatial(16, i1)
                    vj = T.axis.spatial(4, j)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0
        for i2 in range(10, 16):
            for j in range(4):
                with T.block("B_i2"):
                    vi = T.axis.spatial(16, i2)
                    vj = T.axis.spatial(4, j)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0

    sch = tir.Schedule(elementwise)
    i, _ = sch.get_loops(sch.get_block("B"))
    loops = sch.loop_partition(i, [2, 8, None])
    assert len(loops) == 3
    assert_func_equal(sch.mod["main"], expected)
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(elementwise, sch.mod["main"])
    assert str(sch.trace).splitlines()[-1] == "l3, l4, l5 = sch.loop_partition(l1, [2, 8, None])"
    replay = tir.Schedule(elementwise)
    sch.trace.apply_to(replay)
    assert structural_equal(replay.mod["main"], sch.mod["main"])


def test_loop_partition_copies_are_independent_and_schedulable():
    f = P.matmul(8, 8, 8)
    sch = tir.Schedule(f)
    _, _, k = sch.get_loops(sch.get_block("C"))
    k0, k1 = sch.loop_partition(k, [3, None])
    c0, c1 = sch.get_block("C_k0"), sch.get_block("C_k1")
    sch.split(sch.get_loops(c1)[0], [None, 4])
    assert sch.get(sch.get_loops(c0)[-1]) is sch.get(k0)
    P.assert_same_result(f, sch.mod["main"])


def test_loop_partition_without_unit_loops():
    sch = tir.Schedule(elementwise)
    i, _ = sch.get_loops(sch.get_block("B"))
    loops = sch.loop_partition(i, [1, None], preserve_unit_iters=False)
    assert len(loops) == 1
    assert len(sch.get_loops(sch.get_block("B_i0"))) == 1
    P.assert_same_result(elementwise, sch.mod["main"])


def test_loop_partition_errors_leave_the_schedule_unchanged():
    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    assert "add up to" in _illegal(sch, lambda: sch.loop_partition(i, [2, 8]))
    assert "at most one" in _illegal(sch, lambda: sch.loop_partition(i, [None, None]))
    assert "leave no iterations" in _illegal(sch, lambda: sch.loop_partition(i, [8, 8, None]))
    assert "positive" in _illegal(sch, lambda: sch.loop_partition(i, [0, None]))
    sch.parallel(j)
    assert "plain serial" in _illegal(sch, lambda: sch.loop_partition(j, [2, 2]))


def test_partitioned_reduction_keeps_its_init_in_the_first_part_only():
    f = P.matmul(4, 4, 4)
    sch = tir.Schedule(f)
    _, _, k = sch.get_loops(sch.get_block("C"))
    sch.loop_partition(k, [1, None])
    P.assert_same_result(f, sch.mod["main"])
    c1 = sch.get_block("C_k1")
    msg = _illegal(sch, lambda: sch.decompose_reduction(c1, sch.get_loops(c1)[-1]))
    assert "never runs its init" in msg
    assert "from 0" in _illegal(sch, lambda: sch.rfactor(sch.get_loops(c1)[-1], 0))
    assert "never runs its init" in _illegal(sch, lambda: sch.blockize(sch.get_loops(c1)[-1]))
    c0 = sch.get_block("C_k0")
    factored = sch.copy()  # the tail C_k1 writes C after the write-back block, which takes C_k0's place
    factored.rfactor(factored.get_loops(factored.get_block("C_k0"))[-1], 0)
    P.assert_same_result(f, factored.mod["main"])
    sch.decompose_reduction(c0, sch.get_loops(c0)[-1])
    P.assert_same_result(f, sch.mod["main"])


@T.prim_func
def with_let(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32")):
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            t: T.float32 = A[vi, vj] * 2.0
            B[vi, vj] = t + 1.0


def test_loop_partition_gives_each_copy_its_own_let_vars():
    """Each copy binds a let Var of its own (one Var bound in two places did not survive a
    print/parse round trip: argmax's tuple reduction, found by the random-schedule test)."""
    from graphc.script import from_source
    from graphc.tir.functor import post_order_visit
    from graphc.tir.stmt import LetStmt

    sch = tir.Schedule(with_let)
    sch.loop_partition(sch.get_loops(sch.get_block("B"))[1], [2, 1, None])
    func = sch.mod["main"]
    lets = []
    post_order_visit(func.body, lambda n: lets.append(n.var) if isinstance(n, LetStmt) else None)
    assert len(lets) == 3 and len({id(v) for v in lets}) == 3
    assert structural_equal(from_source(func.script()), func)
    P.assert_same_result(with_let, func)
