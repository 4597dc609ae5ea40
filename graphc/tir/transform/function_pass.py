"""`prim_func_pass`: passes that transform every PrimFunc of a module one at a time.

>>> from graphc import IRModule, tir
>>> @prim_func_pass(opt_level=0, name="MarkLowered")
... def mark(func, mod, ctx):
...     return func.with_attr("lowered", True)
>>> mod = IRModule({"main": tir.PrimFunc([], tir.Evaluate(0))})
>>> mark(mod)["main"].attrs
{'lowered': True}
>>> "lowered" in mod["main"].attrs  # the input module is untouched
False
"""

from __future__ import annotations

from ...ir.transform import FunctionPass, make_pass_decorator
from ..function import PrimFunc


class PrimFuncPass(FunctionPass):
    """A pass applying `pass_func(func, mod, ctx) -> func` to each PrimFunc (None removes it)."""

    function_types = (PrimFunc,)


def prim_func_pass(pass_func=None, opt_level=0, name=None, required=None, traceable=False):
    """Make a PrimFunc pass from a function `(func, mod, ctx) -> func` or a class with
    `transform_function` (TVM's `tvm.tir.transform.prim_func_pass`).

    >>> @prim_func_pass(name="Noop")
    ... class Noop:
    ...     def transform_function(self, func, mod, ctx):
    ...         return func
    >>> Noop().info.name
    'Noop'
    """
    return make_pass_decorator(
        PrimFuncPass, "transform_function", pass_func, opt_level, name, required, traceable
    )
