"""Schedule state: construction, look-ups, copy, trace printing and replay, work_on."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import IRModule, structural_equal
from graphc.tir import ScheduleError
from graphc.tir.schedule import BlockRV, LoopRV


def test_schedule_from_primfunc_and_irmodule():
    f = P.elementwise()
    sch = tir.Schedule(f)
    assert sch.mod["main"] is f
    mod = IRModule({"add_one": P.two_stage()})
    sch2 = tir.Schedule(mod)
    assert sch2.func_name == "add_one"
    sch2.get_block("C")
    with pytest.raises(ScheduleError, match="needs an IRModule or a PrimFunc"):
        tir.Schedule(42)


def test_lookups():
    sch = tir.Schedule(P.two_stage())
    b, c = sch.get_block("B"), sch.get_block("C")
    assert isinstance(b, BlockRV) and sch.get(b).name_hint == "B"
    assert sch.get_sblock("C").name == "C"
    loops = sch.get_loops(c)
    assert all(isinstance(lp, LoopRV) for lp in loops)
    assert [sch.get(lp).loop_var.name for lp in loops] == ["i", "j"]
    root = sch.get_block("root")
    assert [x.name for x in sch.get_child_blocks(root)] == ["B", "C"]
    assert [x.name for x in sch.get_child_blocks(loops[0])] == ["C"]
    assert [x.name for x in sch.get_producers(c)] == ["B"]
    assert [x.name for x in sch.get_consumers(b)] == ["C"]
    assert sch.get_producers(b) == [] and sch.get_consumers(c) == []
    with pytest.raises(ScheduleError, match="no block named 'D'"):
        sch.get_block("D")
    with pytest.raises(ScheduleError, match="expected a BlockRV or LoopRV"):
        sch.get("B")


def test_mod_changes_only_on_success_and_copy_is_independent():
    sch = tir.Schedule(P.elementwise())
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    mod0 = sch.mod
    other = sch.copy()
    sch.split(i, factors=[2, 4])
    assert sch.mod is not mod0 and mod0["main"] is other.mod["main"]
    assert len(other.get_loops(b)) == 2 and len(sch.get_loops(b)) == 3
    other.fuse(i, j)  # handles from before the copy stay valid in the copy
    assert len(other.get_loops(b)) == 1 and len(sch.get_loops(b)) == 3


def test_trace_text_and_replay():
    f = P.elementwise()
    sch = tir.Schedule(f)
    b0 = sch.get_block("B")
    l1, l2 = sch.get_loops(b0)
    l3, l4 = sch.split(l1, factors=[None, 4])
    sch.reorder(l4, l3)
    sch.parallel(l4)
    sch.annotate(b0, "key", "v")
    assert str(sch.trace).splitlines() == [
        'b0 = sch.get_block("B")',
        "l1, l2 = sch.get_loops(b0)",
        "l3, l4 = sch.split(l1, factors=[None, 4])",
        "sch.reorder(l4, l3)",
        "sch.parallel(l4)",
        'sch.annotate(b0, "key", "v")',
    ]
    fresh = tir.Schedule(f)
    sch.trace.apply_to(fresh)
    assert structural_equal(fresh.mod["main"], sch.mod["main"])
    assert str(fresh.trace) == str(sch.trace)


def test_failed_primitive_is_not_traced():
    sch = tir.Schedule(P.elementwise())
    (i, _) = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError):
        sch.split(i, factors=[None, None])
    assert "split" not in str(sch.trace)


def test_work_on_and_multiple_functions():
    mod = IRModule({"main": P.elementwise(), "other": P.row_sum()})
    sch = tir.Schedule(mod)
    assert sch.func_name == "main"
    sch.work_on("other")
    b = sch.get_block("B")
    assert b.func_name == "other"
    i, _ = sch.get_loops(b)
    sch.parallel(i)
    assert sch.mod["main"] is mod["main"]
    assert sch.get(i).kind == tir.ForKind.PARALLEL
    main_b = sch.get_block("B", func_name="main")
    assert len(sch.get_loops(main_b)) == 2
    with pytest.raises(ScheduleError, match="no PrimFunc named 'nope'"):
        sch.work_on("nope")


def test_show_prints_module(capsys):
    sch = tir.Schedule(P.elementwise(2, 2))
    sch.show()
    assert 'T.block("B")' in capsys.readouterr().out
