"""prim_func_pass: per-function passes from functions and classes."""

import pytest

from graphc import IRModule, tir
from graphc.errors import TIRError
from graphc.ir.transform import Pass, PassContext, Sequential
from graphc.tir.transform import PrimFuncPass, prim_func_pass


def _mod():
    return IRModule({"a": tir.PrimFunc([], tir.Evaluate(0)), "b": tir.PrimFunc([], tir.Evaluate(1))})


def test_function_form_visits_every_primfunc():
    seen = []

    @prim_func_pass(opt_level=1, name="Collect")
    def collect(func, mod, ctx):
        seen.append(func.body.value.value)
        return func.with_attr("seen", True)

    assert isinstance(collect, PrimFuncPass) and collect.info.opt_level == 1
    out = collect(_mod())
    assert sorted(seen) == [0, 1]
    assert all(f.attrs == {"seen": True} for _, f in out.items())


def test_class_form_with_options_and_context_config():
    @prim_func_pass(name="Tag")
    class Tag:
        def __init__(self, value):
            self.value = value

        def transform_function(self, func, mod, ctx):
            return func.with_attr("tag", (self.value, ctx.config.get("tag.suffix")))

    p = Tag("x")
    assert isinstance(p, Pass) and p.value == "x"
    with PassContext(config={"tag.suffix": "!"}):
        out = p(_mod())
    assert out["a"].attrs["tag"] == ("x", "!")


def test_returning_none_removes_the_function_and_same_object_is_kept():
    @prim_func_pass
    def drop_b(func, mod, ctx):
        return None if func.body.value.value == 1 else func

    mod = _mod()
    out = drop_b(mod)
    assert "b" not in out and out["a"] is mod["a"] and "b" in mod


def test_errors_are_noted_with_the_pass_name():
    @prim_func_pass(name="Fails")
    def fails(func, mod, ctx):
        raise TIRError("broken")

    with pytest.raises(TIRError, match="broken") as info:
        Sequential([fails])(_mod())
    assert "while running pass Fails" in info.value.__notes__
