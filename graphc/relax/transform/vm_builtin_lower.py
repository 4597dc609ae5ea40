"""VMBuiltinLower: map the memory operators and the remaining runtime operators onto VM builtins.

TVM's `LowerRuntimeBuiltin` (formerly `VMBuiltinLower`):

- `R.memory.alloc_storage(size, device, scope, dtype)` -> `R.vm.alloc_storage(size, device,
  R.dtype("uint8"), scope)` (sizes are in bytes);
- `R.memory.alloc_tensor(storage, offset, shape, dtype)` -> `R.vm.alloc_tensor(...)`;
- `R.memory.kill_storage(s)`, `R.memory.kill_tensor(t)` -> `R.vm.kill_object(...)`;
- a direct call of a PrimFunc whose last argument is a shape (of symbolic values) ->
  `R.vm.call_tir_dyn(cls.f, (args..., shape))` (`vm.call_tir_dyn` itself is kept: the VM
  code generator passes the shape's values as scalar integers);
- `R.reshape(x, shape)` -> `R.call_packed("vm.builtin.reshape", x, shape, sinfo_args=...)`,
  likewise `shape_of`, `shape_to_tensor` and `tensor_to_shape`, and `R.print` /
  `R.assert_op` (-> `relax.run.print` / `relax.run.assert_op`, TVM's global functions).

`R.builtin.alloc_tensor` must be gone by then (`LowerAllocTensor`).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     gv = bb.emit(relax.op.reshape(x, (3, 2)))
...     _ = bb.emit_func_output(gv)
>>> VMBuiltinLower()(bb.get())["main"].body.blocks[0].bindings[0].value
R.call_packed("vm.builtin.reshape", x, R.shape([3, 2]), sinfo_args=R.Tensor((3, 2), dtype="float32"))
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..op import vm
from .vm_lowering_utils import is_prim_func_gvar, rewrite_functions

_PACKED = {
    "relax.reshape": "vm.builtin.reshape",
    "relax.shape_of": "vm.builtin.shape_of",
    "relax.tensor_to_shape": "vm.builtin.tensor_to_shape",
    "relax.tensor_to_values": "vm.builtin.tensor_to_values",
    "relax.shape_to_tensor": "vm.builtin.shape_to_tensor",
    "relax.print": "relax.run.print",
    "relax.assert_op": "relax.run.assert_op",
}


class _Lower(ExprMutator):
    def __init__(self, mod):
        super().__init__(mod)
        self.mod = mod

    def visit_Call(self, call: relax_expr.Call):
        call = super().visit_Call(call)
        op_name = getattr(call.op, "name", None) if not isinstance(call.op, relax_expr.Expr) else None
        if op_name == "relax.builtin.alloc_tensor":
            raise TypeInferenceError(
                f"VMBuiltinLower found {call!r}; run relax.transform.LowerAllocTensor() before it")
        if op_name == "relax.memory.alloc_storage":
            size, device, scope, _ = call.args
            return vm.alloc_storage(size, device, "uint8", scope)
        if op_name == "relax.memory.alloc_tensor":
            return vm.alloc_tensor(*call.args)
        if op_name in ("relax.memory.kill_storage", "relax.memory.kill_tensor"):
            return vm.kill_object(call.args[0])
        if op_name in _PACKED:
            return relax_expr.Call(relax_expr.ExternFunc(_PACKED[op_name]), call.args,
                                   sinfo_args=[call.struct_info])
        if is_prim_func_gvar(self.mod, call.op) and call.args and isinstance(call.args[-1],
                                                                             relax_expr.ShapeExpr):
            return vm.call_tir_dyn(call.op, list(call.args))
        return call


@module_pass(opt_level=0, name="VMBuiltinLower")
class VMBuiltinLower:
    """Lower memory operators to `R.vm.*` and runtime operators to `vm.builtin.*` packed calls."""

    def transform_module(self, mod, ctx):
        mutator = _Lower(mod)
        return rewrite_functions(mod, lambda gv, func: mutator.visit_expr(func))


LowerRuntimeBuiltin = VMBuiltinLower  # TVM's current name

__all__ = ["LowerRuntimeBuiltin", "VMBuiltinLower"]
