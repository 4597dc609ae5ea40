"""CallTIRRewrite: make the output allocation of `call_tir` explicit (destination passing).

`lv = R.call_tir(cls.f, (x, w), out_sinfo=R.Tensor((n, 4), "float32"))` becomes

    alloc = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    _ = cls.f(x, w, alloc)
    lv = alloc

One `alloc` per output tensor (a tuple output binds `lv` to a Tuple of them). With
`tir_vars` the PrimFunc is called through `R.vm.call_tir_dyn(cls.f, (x, w, alloc, R.shape([m])))`,
whose trailing shape passes its values as scalar integers (TVM's form).
`R.call_dps_packed`, when registered, is rewritten the same way into a packed call.

>>> from graphc import relax, tir
>>> from graphc.ir import IRModule
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder(IRModule({"f": tir.PrimFunc([], tir.Evaluate(0))}))
>>> with bb.function("main", [x]):
...     gv = bb.emit(relax.op.call_tir(bb.get().get_global_var("f"), [x], x.struct_info))
...     _ = bb.emit_func_output(gv)
>>> for b in CallTIRRewrite()(bb.get())["main"].body.blocks[0].bindings:
...     print(b.value)
R.builtin.alloc_tensor(R.shape([2]), R.dtype("float32"), R.prim_value(0), R.str("global"))
f(x, alloc)
alloc
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..op.builtin import alloc_tensor
from ..op.vm import call_tir_dyn
from ..struct_info import TensorStructInfo, TupleStructInfo
from .vm_lowering_utils import is_op, rewrite_functions

_DPS_OPS = ("relax.call_tir", "relax.call_dps_packed")


class _CallTIRMutator(ExprMutator):
    def visit_Call(self, call: relax_expr.Call):
        call = super().visit_Call(call)
        if not any(is_op(call, name) for name in _DPS_OPS):
            return call
        outs = [self.builder.emit(alloc_tensor(s.shape, s.dtype, 0, "global"), "alloc")
                for s in _output_sinfos(call)]
        callee, args = call.args[0], call.args[1]
        if isinstance(args, relax_expr.Tuple):
            new_args = [*args.fields, *outs]
        else:
            new_args = [args, *outs]
        if len(call.args) == 3:
            self.builder.emit(call_tir_dyn(callee, [*new_args, call.args[2]]), "_")
        else:
            self.builder.emit(relax_expr.Call(callee, new_args), "_")
        return outs[0] if len(outs) == 1 and isinstance(call.struct_info,
                                                        TensorStructInfo) else relax_expr.Tuple(outs)


def _output_sinfos(call: relax_expr.Call) -> list:
    sinfo = call.struct_info
    fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else (sinfo,)
    for field in fields:
        if not isinstance(field, TensorStructInfo) or field.shape_values is None or field.is_unknown_dtype:
            raise TypeInferenceError(
                f"CallTIRRewrite needs outputs with known shapes and dtypes to allocate them; "
                f"{call.op.name.removeprefix('relax.')} of {call.args[0]!r} declares {sinfo}")
    return list(fields)


@module_pass(opt_level=0, name="CallTIRRewrite")
class CallTIRRewrite:
    """Allocate `call_tir` outputs with `R.builtin.alloc_tensor` and call the PrimFunc directly."""

    def transform_module(self, mod, ctx):
        mutator = _CallTIRMutator(mod)
        return rewrite_functions(mod, lambda gv, func: mutator.visit_expr(func))


__all__ = ["CallTIRRewrite"]
