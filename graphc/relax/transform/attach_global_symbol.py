"""AttachGlobalSymbol: name every function of the module for code generation (TVM's pass).

Each Relax function and PrimFunc gets the attribute `global_symbol` = its GlobalVar's name
(PrimFuncs prefixed by the module attribute `system_lib_prefix`, if any), so that the VM
and the kernel library find them by name. Functions already named so are left as they are.

>>> from graphc import tir
>>> from graphc.ir import IRModule
>>> mod = IRModule({"add": tir.PrimFunc([], tir.Evaluate(0))})
>>> AttachGlobalSymbol()(mod)["add"].attrs["global_symbol"]
'add'
"""

from __future__ import annotations

from ...ir.transform import module_pass
from ...tir.function import PrimFunc
from .. import expr as relax_expr


@module_pass(opt_level=0, name="AttachGlobalSymbol")
class AttachGlobalSymbol:
    """Set `global_symbol` of every Relax function and PrimFunc to its name in the module."""

    def transform_module(self, mod, ctx):
        prefix = mod.get_attr("system_lib_prefix") or ""
        new_mod = None
        for gv, func in mod.items():
            if isinstance(func, PrimFunc):
                name = prefix + gv.name_hint
            elif isinstance(func, relax_expr.Function):
                name = gv.name_hint
            else:
                continue
            if func.attrs.get("global_symbol") == name:
                continue
            if new_mod is None:
                new_mod = mod.copy()
            new_mod[gv] = func.with_attr("global_symbol", name)
        return mod if new_mod is None else new_mod


__all__ = ["AttachGlobalSymbol"]
