"""VMLoweringPipeline: the passes between an optimized module and VM bytecode (TVM's build pipeline).

In order (TVM's `default_build_pipeline`, less its CUDA-graph and sampling steps):

    LegalizeOps            remaining high-level operators -> call_tir
    RewriteDataflowReshape call_tir of a pure reshape PrimFunc -> R.reshape (no copy)
    ToNonDataflow          dataflow blocks -> binding blocks
    RemovePurityChecking   pure functions get relax.force_pure
    CallTIRRewrite         call_tir -> builtin.alloc_tensor + direct PrimFunc call
    StaticPlanBlockMemory  reusable memory.alloc_storage / memory.alloc_tensor
    LowerAllocTensor       remaining builtin.alloc_tensor -> memory.alloc_storage + alloc_tensor
    KillAfterLastUse       memory.kill_tensor / kill_storage / vm.kill_object after last uses
    VMBuiltinLower         memory.* -> vm.*, reshape -> vm.builtin.reshape
    VMShapeLower           parameter checks, shape heap, make_shape, shape_func PrimFuncs
    AttachGlobalSymbol     global_symbol on every function

The contract with the VM code generator (`graphc.relax.vm_build`). Every Relax function
of the result has `global_symbol` (as does every PrimFunc); its body is a SeqExpr of plain
BindingBlocks (no DataflowBlock, no DataflowVar, no nested Function) whose result is a
leaf or a Tuple of leaves, and every binding is a VarBinding whose value is one of

- `R.vm.alloc_storage(size, runtime_device_index, R.dtype("uint8"), storage_scope)`: `size`
  is a 1-d shape holding the byte count;
- `R.vm.alloc_tensor(storage, offset, shape, dtype)`: a tensor at byte `offset` (a constant
  PrimValue) of `storage`; tensors of one storage never overlap in time;
- `R.vm.kill_object(x)`: drop the register's reference only (the object may live on through
  a tuple, a reshape view or the caller);
- `R.vm.call_tir_dyn(cls.f, (args..., shape))`: call the PrimFunc on `args`, then the
  values of `shape` as scalar int64 arguments (TVM's order: inputs, outputs, scalars);
- `cls.f(args...)`: a direct call of a PrimFunc GlobalVar, destination passing (inputs then
  outputs; the result is unused), including the generated `cls.shape_func(shape_heap)`
  (attribute `tir.is_host_func`), which reads and writes the int64 heap tensor;
- `R.call_packed("vm.builtin.<name>", args..., sinfo_args=...)` (an ExternFunc callee), or
  `R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.<name>"), (args...), sinfo_args=...)`
  (the VM context is passed first), with these builtins (codes: `MatchShapeCode`,
  `MakeShapeCode` in `graphc.vm.shape_codes`; `err` is the error-context string, possibly empty):

      alloc_shape_heap(size) -> int64 tensor      (via call_builtin_with_ctx)
      check_tensor_info(x, ndim, dtype, err)      ndim -1 / dtype "void": any
      check_tuple_info(t, size, err)   check_shape_info(s, ndim, err)
      check_prim_value_info(v, dtype, err)   check_func_info(f, err)
      match_shape(x, heap, ndim, code0, value0, ..., err)   x a tensor or a shape
      match_prim_value(v, heap, code, value, err)
      make_shape(heap, ndim, code0, value0, ...) -> shape
      make_prim_value(heap, code, value) -> int
      tuple_getitem(t, index)   reshape(x, shape) -> a view of x   shape_of(x)   tensor_to_shape(x)

  (plus any `call_packed` the input module already had);
- a call of a Relax function (its GlobalVar, or a Var of function type);
- `Tuple`, `TupleGetItem`, `If` (branches are SeqExprs of the same forms), `Var`, `Constant`,
  `ShapeExpr` and `PrimValue` of constants, `StringImm`, `DataTypeImm`, `ExternFunc`,
  `GlobalVar`.

`MatchCast` bindings are kept after their checks: treat them as `var = value`. Arguments
are leaves (Vars, Constants, constant ShapeExprs and PrimValues, StringImm, DataTypeImm,
GlobalVars, ExternFuncs) or Tuples of them: a symbolic shape or scalar has become a Var
bound to `make_shape` / `make_prim_value`, so the size of `vm.alloc_storage`, the shape of
`vm.alloc_tensor` and the trailing shape of `vm.call_tir_dyn` may be such Vars.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         lv = bb.emit(relax.op.add(x, x))
...         gv = bb.emit_output(relax.op.nn.relu(lv))
...     _ = bb.emit_func_output(gv)
>>> mod = VMLoweringPipeline()(bb.get())
>>> for b in mod["main"].body.blocks[0].bindings:
...     print(b.var.name_hint, "=", str(b.value)[:60])
shape_heap = R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.alloc_shape
_ = R.call_packed("vm.builtin.check_tensor_info", x, R.prim_valu
_1 = R.call_packed("vm.builtin.match_shape", x, shape_heap, R.pri
storage = R.vm.alloc_storage(R.shape([24]), R.prim_value(0), R.dtype("
alloc = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]),
_ = R.vm.kill_object(storage)
_ = add(x, alloc)
storage = R.vm.alloc_storage(R.shape([24]), R.prim_value(0), R.dtype("
alloc1 = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]),
_ = R.vm.kill_object(storage)
_1 = relu(alloc, alloc1)
_ = R.vm.kill_object(alloc)
"""

from __future__ import annotations

from ...ir.transform import Sequential
from .attach_global_symbol import AttachGlobalSymbol
from .call_tir_rewrite import CallTIRRewrite
from .kill_after_last_use import KillAfterLastUse
from .legalize_ops import LegalizeOps
from .lower_alloc_tensor import LowerAllocTensor
from .remove_purity_checking import RemovePurityChecking
from .rewrite_dataflow_reshape import RewriteDataflowReshape
from .static_plan_block_memory import StaticPlanBlockMemory
from .to_non_dataflow import ToNonDataflow
from .vm_builtin_lower import VMBuiltinLower
from .vm_shape_lower import VMShapeLower


def VMLoweringPipeline(emit_err_ctx: bool = True) -> Sequential:  # noqa: N802 - a pass, TVM's style
    """The Sequential lowering an optimized Relax module to the forms the VM code generator takes."""
    return Sequential([
        LegalizeOps(),
        RewriteDataflowReshape(),
        ToNonDataflow(),
        RemovePurityChecking(),
        CallTIRRewrite(),
        StaticPlanBlockMemory(),
        LowerAllocTensor(),
        KillAfterLastUse(),
        VMBuiltinLower(),
        VMShapeLower(emit_err_ctx=emit_err_ctx),
        AttachGlobalSymbol(),
    ], name="VMLoweringPipeline")


# Passes of the pipeline that live in modules of their own, exported with it.
__all__ = ["RemovePurityChecking", "RewriteDataflowReshape", "VMLoweringPipeline"]
