"""RemovePurityChecking: mark pure functions `relax.force_pure` before low-level lowering (TVM's pass).

The VM lowering passes put impure calls (kills, direct PrimFunc calls, checks) into
functions declared pure; the attribute records that purity is no longer tracked from here
on. (graphc has no pure-override operators such as `call_pure_packed` to unwrap.)

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     _ = bb.emit_func_output(x)
>>> RemovePurityChecking()(bb.get())["main"].attrs["relax.force_pure"]
True
"""

from __future__ import annotations

from ...ir.transform import module_pass
from .. import expr as relax_expr
from .vm_lowering_utils import rewrite_functions


@module_pass(opt_level=0, name="RemovePurityChecking")
class RemovePurityChecking:
    """Set `relax.force_pure` on every pure Relax function."""

    def transform_module(self, mod, ctx):
        def rewrite(gv, func: relax_expr.Function):
            if not func.is_pure or func.attrs.get("relax.force_pure"):
                return func
            return func.with_attr("relax.force_pure", True)

        return rewrite_functions(mod, rewrite)


__all__ = ["RemovePurityChecking"]
