"""The `I.` namespace of the script syntax (`from graphc.script import ir as I`).

`@I.ir_module` turns a class whose methods are `@T.prim_func`s into an IRModule by parsing
the class source (the methods never run).
"""

from __future__ import annotations

from ..errors import ScriptError
from ..ir.module import DummyGlobalInfo, GlobalVar, IRModule  # noqa: F401 - re-exported as I.GlobalVar


def ir_module(cls=None, *, check_well_formed: bool = True, s_tir: bool = True):
    """Parse a class of script functions into an IRModule (functions keyed by method name)."""
    from .parser.entry import ir_module_decorator

    if cls is None:
        return lambda c: ir_module_decorator(c)
    return ir_module_decorator(cls)


def module_attrs(attrs: dict):
    """Module attributes; the `@I.ir_module` parser reads them from the class body."""
    if not isinstance(attrs, dict):
        raise ScriptError(f"I.module_attrs expects a dict, got {type(attrs).__name__}")
    return attrs


def module_global_infos(infos: dict):
    """Module global infos (`{name: [info, ...]}`); the `@I.ir_module` parser reads them."""
    if not isinstance(infos, dict):
        raise ScriptError(f"I.module_global_infos expects a dict, got {type(infos).__name__}")
    return infos


def dummy_global_info() -> DummyGlobalInfo:
    """A global info that carries nothing."""
    return DummyGlobalInfo()


def vdevice(*args, **kwargs):
    """TVM's virtual devices: graphc chooses devices when it compiles, so it has none."""
    raise ScriptError("I.vdevice is not supported by graphc: the device is chosen when the module is "
                      "compiled (graphc.compile(mod, target=...))")
