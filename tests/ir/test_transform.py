"""The pass infrastructure: decorators, Sequential, PassContext, instruments, error notes."""

import io

import pytest

from graphc import IRModule, tir
from graphc.errors import GraphcError, TIRError
from graphc.ir.transform import (
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PassInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
    Sequential,
    get_pass,
    module_pass,
    pass_instrument,
)  # fmt: skip


def _mod():
    return IRModule({"main": tir.PrimFunc([], tir.Evaluate(0))})


def _appender(tag, opt_level=0, required=None):
    @module_pass(opt_level=opt_level, name=f"Append{tag}", required=required)
    def append(mod, ctx):
        return mod.with_attr("trace", mod.get_attr("trace", ()) + (tag,))

    return append


def test_function_decorator_makes_a_pass():
    p = _appender("A", opt_level=1)
    assert isinstance(p, ModulePass) and isinstance(p, Pass)
    assert p.info == PassInfo(1, "AppendA")
    assert p(_mod()).get_attr("trace") == ("A",)


def test_decorator_without_arguments_uses_the_function_name():
    @module_pass
    def my_pass(mod, ctx):
        return mod

    assert my_pass.info.name == "my_pass" and my_pass.info.opt_level == 0


def test_pass_never_mutates_its_input():
    @module_pass
    def mutate(mod, ctx):
        mod["other"] = tir.PrimFunc([], tir.Evaluate(0))
        mod.attrs["x"] = 1
        return mod

    mod = _mod()
    out = mutate(mod)
    assert "other" in out and "other" not in mod and "x" not in mod.attrs


def test_class_decorator_options_become_init_args():
    @module_pass(opt_level=2, name="SetAttr")
    class SetAttr:
        """Set one module attribute."""

        def __init__(self, key, value=1):
            self.key, self.value = key, value

        def transform_module(self, mod, ctx):
            return mod.with_attr(self.key, self.value)

    p = SetAttr("k", value=5)
    assert isinstance(p, Pass) and isinstance(p, SetAttr)
    assert p.info.name == "SetAttr" and p.info.opt_level == 2
    assert p.key == "k" and SetAttr.__doc__ == "Set one module attribute."
    assert p(_mod()).get_attr("k") == 5


def test_class_without_transform_module_is_rejected():
    with pytest.raises(TypeError, match="transform_module"):

        @module_pass
        class Bad:
            pass


def test_sequential_runs_in_order():
    seq = Sequential([_appender("A"), _appender("B"), _appender("C")])
    assert seq(_mod()).get_attr("trace") == ("A", "B", "C")
    with pytest.raises(TypeError, match="Pass objects"):
        Sequential([lambda m: m])


def test_opt_level_skips_passes_in_sequential():
    seq = Sequential([_appender("low", opt_level=1), _appender("high", opt_level=3)])
    assert seq(_mod()).get_attr("trace") == ("low",)  # default context: opt_level 2
    with PassContext(opt_level=3):
        assert seq(_mod()).get_attr("trace") == ("low", "high")
    with PassContext(opt_level=0):
        assert seq(_mod()).get_attr("trace") is None


def test_required_and_disabled_passes():
    seq = Sequential([_appender("low", opt_level=1), _appender("high", opt_level=3)])
    with PassContext(opt_level=0, required_pass=["Appendhigh"]):
        assert seq(_mod()).get_attr("trace") == ("high",)
    with PassContext(opt_level=3, disabled_pass=["Appendlow"]):
        assert seq(_mod()).get_attr("trace") == ("high",)


def test_pass_info_required_runs_the_named_pass_first():
    _appender("Dep")
    seq = Sequential([_appender("Main", required=["AppendDep"])])
    assert seq(_mod()).get_attr("trace") == ("Dep", "Main")
    with pytest.raises(GraphcError, match="no pass named 'Missing'"):
        get_pass("Missing")


def test_pass_context_current_and_config():
    assert PassContext.current().opt_level == 2
    seen = {}

    @module_pass
    def read_config(mod, ctx):
        seen["cfg"] = ctx.config.get("my.option")
        seen["current"] = PassContext.current()
        return mod

    with PassContext(opt_level=1, config={"my.option": 7}) as ctx:
        read_config(_mod())
        with PassContext(opt_level=3) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is ctx
    assert seen == {"cfg": 7, "current": ctx}
    assert PassContext.current() is not ctx


def test_errors_get_a_note_naming_the_pass():
    @module_pass(name="Exploding")
    def explode(mod, ctx):
        raise TIRError("bad IR")

    with pytest.raises(TIRError) as info:
        Sequential([_appender("A"), explode])(_mod())
    assert info.value.__notes__ == ["while running pass Exploding"]


def test_a_pass_must_return_a_module():
    @module_pass(name="ReturnsNone")
    def returns_none(mod, ctx):
        return None

    with pytest.raises(TypeError, match="ReturnsNone returned NoneType"):
        returns_none(_mod())


def test_instrument_hooks_are_called_in_order():
    events = []

    @pass_instrument
    class Recorder:
        def enter_pass_ctx(self):
            events.append("enter")

        def exit_pass_ctx(self):
            events.append("exit")

        def run_before_pass(self, mod, info):
            events.append(f"before {info.name}")

        def run_after_pass(self, mod, info):
            events.append(f"after {info.name}")

    assert isinstance(Recorder(), PassInstrument)
    with PassContext(instruments=[Recorder()]):
        Sequential([_appender("A")], name="seq")(_mod())
    assert events == ["enter", "before seq", "before AppendA", "after AppendA", "after seq", "exit"]


def test_should_run_false_skips_the_pass():
    class SkipB(PassInstrument):
        def should_run(self, mod, info):
            return info.name != "AppendB"

    with PassContext(instruments=[SkipB()]):
        out = Sequential([_appender("A"), _appender("B")])(_mod())
    assert out.get_attr("trace") == ("A",)


def test_print_instruments():
    before, after = io.StringIO(), io.StringIO()
    with PassContext(instruments=[PrintBeforeAll(file=before), PrintAfterAll(file=after)]):
        _appender("A")(_mod())
    assert before.getvalue().startswith("Before Running Pass: AppendA")
    assert after.getvalue().startswith("After Running Pass: AppendA")
    assert "main" in after.getvalue()


def test_print_after_all_defaults_to_stdout(capsys):
    with PassContext(instruments=[PrintAfterAll()]):
        _appender("A")(_mod())
    assert "After Running Pass: AppendA" in capsys.readouterr().out


def test_timing_instrument_renders_nested_table():
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        Sequential([_appender("A"), _appender("B")], name="outer")(_mod())
    assert [(name, depth) for name, depth, _ in timing.timings] == [
        ("outer", 0),
        ("AppendA", 1),
        ("AppendB", 1),
    ]
    assert all(seconds >= 0 for _, _, seconds in timing.timings)
    table = timing.render().splitlines()
    assert table[0].startswith("Total: ") and table[1].strip().startswith("outer:")
    assert table[2].startswith("    AppendA:") and "ms [" in table[2]


def test_override_instruments_and_bad_config():
    timing = PassTimingInstrument()
    ctx = PassContext()
    ctx.override_instruments([timing])
    with ctx:
        _appender("A")(_mod())
    assert [name for name, _, _ in timing.timings] == ["AppendA"]
    with pytest.raises(GraphcError, match="opt_level must be an int"):
        PassContext(opt_level="3")
    with pytest.raises(GraphcError, match="config keys must be strings"):
        PassContext(config={1: 2})


def test_sequential_rejects_a_pass_class_with_a_hint():
    @module_pass(name="AsClass")
    class AsClass:
        def transform_module(self, mod, ctx):
            return mod

    with pytest.raises(TypeError, match=r"got the class AsClass; use AsClass\(\)"):
        Sequential([AsClass])
    assert Sequential([AsClass()])(_mod()) is not None


def test_function_pass_visits_every_function_and_subclasses_filter():
    from graphc.ir.transform import FunctionPass, function_pass
    from graphc.tir.transform import prim_func_pass

    class Other:
        """Stands in for a non-TensorIR function (a Relax function, later)."""

    mod = _mod()
    mod["other"] = Other()
    seen = []

    @function_pass(name="SeeAll")
    def see_all(func, mod, ctx):
        seen.append(type(func).__name__)
        return None if isinstance(func, Other) else func

    out = see_all(mod)
    assert sorted(seen) == ["Other", "PrimFunc"] and "other" not in out and "main" in out
    assert isinstance(see_all, FunctionPass)

    @prim_func_pass(name="SeePrim")
    def see_prim(func, mod, ctx):
        seen.append("prim")
        return func

    seen.clear()
    assert "other" in see_prim(mod) and seen == ["prim"]
