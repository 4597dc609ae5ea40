"""LowerAllocTensor: give every remaining `R.builtin.alloc_tensor` a storage of its own.

`alloc = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))`
becomes

    storage = R.memory.alloc_storage(R.shape([n * 16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n, 4]), R.dtype("float32"))

These are the allocations `StaticPlanBlockMemory` left alone (function outputs, symbolic
sizes without an upper bound, ...), so that the VM sees a single allocation scheme.

>>> from graphc import relax
>>> from graphc.relax.op.builtin import alloc_tensor
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     gv = bb.emit(alloc_tensor((2, 3), "float32"))
...     _ = bb.emit_func_output(gv)
>>> [str(b.value) for b in LowerAllocTensor()(bb.get())["main"].body.blocks[0].bindings]
... # doctest: +NORMALIZE_WHITESPACE
['R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("float32"))',
 'R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"))']
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.dtype import DataType
from ...ir.transform import module_pass
from ...tir.arith import Analyzer
from ...tir.expr import IntImm
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..op.memory import alloc_storage, alloc_tensor
from ..struct_info import ShapeStructInfo
from .vm_lowering_utils import is_op, rewrite_functions


def storage_bytes(values, dtype: str, analyzer: Analyzer):
    """The bytes a dense tensor of shape `values` and `dtype` occupies (a simplified PrimExpr)."""
    nbytes = IntImm("int64", DataType(dtype).itemsize)
    for dim in values:
        nbytes = nbytes * dim
    return analyzer.simplify(nbytes)


class _Lower(ExprMutator):
    def visit_Call(self, call: relax_expr.Call):
        call = super().visit_Call(call)
        if not is_op(call, "relax.builtin.alloc_tensor"):
            return call
        shape, dtype, device, scope = call.args
        sinfo = shape.struct_info
        if not isinstance(sinfo, ShapeStructInfo) or sinfo.values is None:
            raise TypeInferenceError(
                f"LowerAllocTensor needs the shape of {call!r} to have known dimensions, got {sinfo}")
        nbytes = storage_bytes(sinfo.values, dtype.value, self.builder.analyzer)
        storage = self.builder.emit(alloc_storage(relax_expr.ShapeExpr([nbytes]), device, scope, dtype),
                                    "storage")
        return alloc_tensor(storage, 0, shape, dtype)


@module_pass(opt_level=0, name="LowerAllocTensor")
class LowerAllocTensor:
    """Replace `builtin.alloc_tensor` by `memory.alloc_storage` plus `memory.alloc_tensor`."""

    def transform_module(self, mod, ctx):
        mutator = _Lower(mod)
        return rewrite_functions(mod, lambda gv, func: mutator.visit_expr(func))


__all__ = ["LowerAllocTensor"]
