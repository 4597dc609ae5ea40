"""ApplyDefaultSchedule: which functions it schedules, how it treats rules that fail, targets."""

import warnings

import dlight_programs as P
import pytest

from graphc import IRModule, dlight, tir
from graphc.errors import ScheduleError
from graphc.ir import structural_equal
from graphc.ir.transform import PassContext, Sequential
from graphc.target import Target
from graphc.tir.analysis import verify_well_formed

CPU_RULES = tuple(dlight.default_rules("llvm"))


def _module(**programs):
    return IRModule({name: make()[0].with_attr("global_symbol", name) for name, make in programs.items()})


def test_schedules_and_marks_every_function():
    mod = _module(add=P.elementwise, rsum=P.row_reduce)
    out = dlight.ApplyDefaultSchedule(*CPU_RULES)(mod)
    for gv, func in out.items():
        assert func.attrs["tir.is_scheduled"] is True
        assert func.attrs["global_symbol"] == gv.name_hint
    assert not structural_equal(out["add"], mod["add"])
    assert "tir.is_scheduled" not in mod["add"].attrs  # the input module is untouched


def test_skips_functions_marked_scheduled():
    mod = _module(add=P.elementwise, rsum=P.row_reduce)
    mod["add"] = mod["add"].with_attr("tir.is_scheduled", True)
    before = mod["add"]
    out = dlight.ApplyDefaultSchedule(*CPU_RULES)(mod)
    assert out["add"] is before
    assert out["rsum"].attrs["tir.is_scheduled"] is True


def test_first_matching_rule_wins():
    calls = []

    def record(name, result):
        def fn(func, target, tunable):
            calls.append(name)
            return result(func) if result else None

        return dlight.ScheduleRule.from_callable(name, fn)

    decline = record("Decline", None)
    take = record("Take", tir.Schedule)
    never = record("Never", tir.Schedule)
    out = dlight.ApplyDefaultSchedule(decline, take, never)(_module(main=P.tiny))
    assert calls == ["Decline", "Take"] and out["main"].attrs["tir.is_scheduled"]


def test_no_rule_applies_leaves_the_function_unmarked():
    mod = _module(main=P.elementwise)
    out = dlight.ApplyDefaultSchedule(dlight.cpu.Reduction())(mod)
    assert out["main"] is mod["main"] and "tir.is_scheduled" not in out["main"].attrs


def test_a_rule_raising_schedule_error_is_skipped_with_a_warning():
    @dlight.ScheduleRule.from_callable("Broken")
    def broken(func, target, tunable):
        sch = tir.Schedule(func)
        sch.get_block("no_such_block")  # raises ScheduleError
        return sch

    with pytest.warns(dlight.ScheduleRuleWarning, match="Broken"):
        out = dlight.ApplyDefaultSchedule(broken, dlight.cpu.Fallback())(_module(main=P.elementwise))
    assert P.loop_kinds(tir.Schedule(out["main"]), "C")[-1] == "vectorized"


def test_other_exceptions_propagate_with_the_rule_name():
    @dlight.ScheduleRule.from_callable("Buggy")
    def buggy(func, target, tunable):
        raise KeyError("oops")

    with pytest.raises(KeyError) as info:
        dlight.ApplyDefaultSchedule(buggy)(_module(main=P.tiny))
    assert any("schedule rule Buggy" in note for note in info.value.__notes__)


def test_rules_must_be_schedule_rules():
    with pytest.raises(TypeError, match="from_callable"):
        dlight.ApplyDefaultSchedule(lambda f, t, u: None)


def test_a_rule_returning_a_list_uses_the_first_schedule():
    rule = dlight.ScheduleRule.from_callable("Space", lambda f, t, u: [dlight.cpu.Fallback().apply(f, t, u)])
    out = dlight.ApplyDefaultSchedule(rule)(_module(main=P.elementwise))
    assert P.loop_kinds(tir.Schedule(out["main"]), "C") == ["parallel", "serial", "vectorized"]


def test_target_comes_from_the_argument_then_the_current_target():
    seen = []
    spy = dlight.ScheduleRule.from_callable("Spy", lambda f, t, u: seen.append(str(t)))
    mod = _module(main=P.tiny)
    dlight.ApplyDefaultSchedule(spy, target="llvm -mcpu=haswell")(mod)
    with Target("llvm -mcpu=x86-64 -mattr=+sse2"):
        dlight.ApplyDefaultSchedule(spy)(mod)
    dlight.ApplyDefaultSchedule(spy)(mod)
    assert seen == ["llvm -mcpu=haswell", "llvm -mattr=+sse2 -mcpu=x86-64", "llvm"]


def test_vector_width_follows_the_current_target():
    mod = _module(main=P.elementwise)
    with Target("llvm -mcpu=x86-64 -mattr=+sse2"):
        out = dlight.ApplyDefaultSchedule(*CPU_RULES)(mod)
    assert P.loop_extents(tir.Schedule(out["main"]), "C")[-1].value == 4 * 4  # 4 lanes, 4 registers


def test_runs_inside_a_sequential_pipeline():
    seq = Sequential([dlight.ApplyDefaultSchedule(*CPU_RULES)])
    with PassContext(opt_level=0):
        out = seq(_module(main=P.broadcast))
    assert out["main"].attrs["tir.is_scheduled"]


@pytest.mark.parametrize("name", sorted(P.ALL))
@pytest.mark.parametrize("rules", ["both", "fallback"])
def test_never_crashes_and_keeps_numerics(name, rules):
    func, inputs, ref = P.ALL[name]()
    chosen = CPU_RULES if rules == "both" else (dlight.cpu.Fallback(),)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dlight.ScheduleRuleWarning)  # no rule may hit a ScheduleError
        out = dlight.ApplyDefaultSchedule(*chosen, target=P.AVX512)(IRModule({"main": func}))
    assert out["main"].attrs["tir.is_scheduled"] is True
    assert verify_well_formed(out["main"])
    P.check_numerics(out, inputs, ref)


def test_schedule_error_is_the_only_decline_exception():
    assert issubclass(ScheduleError, ValueError)


SHAPES = [(1, 1), (1, 17), (3, 5), (17, 33), (130, 3), (2, 4100), (257, 64)]


@pytest.mark.parametrize("n, m", SHAPES)
@pytest.mark.parametrize("program", [P.broadcast, P.row_reduce, P.col_sum, P.softmax])
def test_odd_shapes_schedule_and_stay_correct(program, n, m):
    func, inputs, ref = program(n=n, m=m)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dlight.ScheduleRuleWarning)
        out = dlight.ApplyDefaultSchedule(*CPU_RULES, target=P.AVX2)(IRModule({"main": func}))
    assert verify_well_formed(out["main"])
    P.check_numerics(out, inputs, ref, rtol=1e-3, atol=1e-4)


def test_functions_without_blocks_are_left_alone():
    import graphc

    lowered = graphc.lower(P.elementwise()[0])["main"]
    body = tir.PrimFunc([], tir.Evaluate(0))
    mod = IRModule({"lowered": lowered, "empty": body})
    with warnings.catch_warnings():
        warnings.simplefilter("error", dlight.ScheduleRuleWarning)
        out = dlight.ApplyDefaultSchedule(*CPU_RULES)(mod)
    assert structural_equal(out["lowered"].body, lowered.body)
    assert structural_equal(out["empty"].body, body.body)
