"""IRModule: look-up by name and GlobalVar, updates, attributes, repr."""

import pytest

import graphc
from graphc import tir
from graphc.ir import GlobalVar, IRModule


def _func():
    return tir.PrimFunc([], tir.Evaluate(0))


def test_lookup_by_name_and_global_var():
    f, g = _func(), _func()
    mod = IRModule({"main": f, "other": g})
    gv = mod.get_global_var("main")
    assert mod["main"] is f and mod[gv] is f and mod[GlobalVar("main")] is f
    assert [v.name_hint for v in mod.get_global_vars()] == ["main", "other"]
    assert "main" in mod and gv in mod and len(mod) == 2
    assert graphc.IRModule is IRModule


def test_update_func_and_delete():
    mod = IRModule({"main": _func()})
    new = _func()
    mod.update_func(mod.get_global_var("main"), new)
    assert mod["main"] is new and len(mod) == 1
    del mod["main"]
    assert len(mod) == 0


def test_missing_name_lists_the_available_ones():
    mod = IRModule({"main": _func()})
    with pytest.raises(KeyError, match="has: main"):
        mod["nope"]


def test_attrs_and_copy():
    mod = IRModule({"main": _func()}, attrs={"a": 1})
    mod2 = mod.with_attr("b", 2)
    assert mod.attrs == {"a": 1} and mod2.attrs == {"a": 1, "b": 2}
    assert mod2["main"] is mod["main"]


def test_repr_names_functions():
    assert repr(IRModule({"main": _func()})) == "<IRModule functions=[main]>"


def test_bad_key_type():
    with pytest.raises(TypeError, match="names or GlobalVars"):
        IRModule()[3] = _func()
