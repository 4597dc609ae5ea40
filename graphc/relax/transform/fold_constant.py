"""FoldConstant: evaluate at compile time the calls whose inputs are all constants.

A `call_tir` whose tensor arguments are all `Constant`s (and whose output shapes are static)
is run on the CPU: its PrimFunc is built for `llvm` once per pass run (structurally equal
PrimFuncs share a kernel) and the call becomes the resulting `Constant` (a tuple of them
for several outputs). Inside dataflow blocks, an operator call with constant arguments
is legalized on the side and folded the same way. Variables bound to constants are
replaced by the constants at their uses, shape variables bound to `R.shape([...])` by the
shape, and the bindings left unused are removed. `R.shape_to_tensor` of a constant shape
and `R.tensor_to_shape` of a constant tensor fold to the constant and the shape. PrimFuncs
no longer called after folding (and private) are dropped from the module. PrimFuncs that
fail to build for the CPU (e.g. scheduled for a GPU) are left alone, and so are calls whose
kernel fails a run-time check (a constant index out of range): the model raises that error
when it runs, as its source would.

Folding trades run time for model size, so a call whose output would be large is not
folded when it is also bigger than twice its constant inputs combined (a broadcast, `full`
or `arange` of a big shape): the limit is `max_output_bytes`, given to the pass or set as
the PassContext config ``"relax.FoldConstant.max_output_bytes"`` (default 1 MiB).

>>> import numpy as np
>>> from graphc import relax
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", []):
...     with bb.dataflow():
...         c = relax.const(np.arange(4, dtype="float32"))
...         gv = bb.emit_output(relax.op.add(c, c))
...     _ = bb.emit_func_output(gv)
>>> mod = FoldConstant()(relax.transform.LegalizeOps()(bb.get()))
>>> mod["main"].body.body.data.numpy()
array([0., 2., 4., 6.], dtype=float32)
>>> [gv.name_hint for gv in mod.get_global_vars()]
['main']
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import GraphcError
from ...ir.module import GlobalVar, IRModule
from ...ir.structural import structural_equal, structural_hash
from ...ir.transform import PassContext, module_pass
from ...runtime.device import cpu
from ...runtime.kernel import KernelError
from ...runtime.tensor import empty
from ...target import build as target_build
from ...tir.expr import BufferLoad, FloatImm, IntImm
from ...tir.function import PrimFunc
from ...tir.stmt import BlockRealize, BufferStore, For, ForKind, IterType
from .. import expr as relax_expr
from ..analysis import all_global_vars
from ..block_builder import BlockBuilder
from ..expr_functor import ExprMutator
from ..op.registry import Op
from ..struct_info import TensorStructInfo, TupleStructInfo
from .dead_code_elimination import is_externally_visible, remove_all_unused

__all__ = ["FoldConstant"]

CONFIG_KEY = "relax.FoldConstant.max_output_bytes"
DEFAULT_MAX_OUTPUT_BYTES = 1 << 20
_CALL_TIR = "relax.call_tir"


def _static_outputs(sinfo) -> list | None:
    """[(shape, dtype)] of a call_tir's outputs, or None when some shape or dtype is not static."""
    fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else [sinfo]
    out = []
    for field in fields:
        if not isinstance(field, TensorStructInfo) or field.is_unknown_dtype:
            return None
        dims = field.shape_values
        if dims is None or not all(isinstance(d, IntImm) for d in dims):
            return None
        try:
            dtype = np.dtype(field.dtype)
        except TypeError:  # a dtype numpy lacks (bfloat16, ...)
            return None
        out.append((tuple(int(d) for d in dims), dtype))
    return out


def _is_constant_arg(expr) -> bool:
    """Arguments an operator call may have and still be folded."""
    if isinstance(expr, relax_expr.Tuple):
        return all(_is_constant_arg(f) for f in expr.fields)
    if isinstance(expr, relax_expr.ShapeExpr):
        return all(isinstance(v, IntImm) for v in expr.values)
    if isinstance(expr, relax_expr.PrimValue):
        return isinstance(expr.value, IntImm | FloatImm)
    return isinstance(expr, relax_expr.Constant | relax_expr.StringImm | relax_expr.DataTypeImm)


def _fold_shape_to_tensor(shape):
    if isinstance(shape, relax_expr.ShapeExpr) and _is_constant_arg(shape):
        return relax_expr.Constant(np.asarray([int(v.value) for v in shape.values], dtype="int64"))
    return None


def _fold_tensor_to_shape(tensor):
    values = tensor.data.numpy() if isinstance(tensor, relax_expr.Constant) else None
    # a negative size is left to vm.builtin.tensor_to_shape, which raises ValueError naming it
    if values is not None and values.ndim == 1 and (values >= 0).all():
        return relax_expr.ShapeExpr([int(v) for v in values])
    return None


def _fold_tensor_to_values(tensor):
    values = tensor.data.numpy() if isinstance(tensor, relax_expr.Constant) else None
    if values is not None and values.ndim == 1:
        return relax_expr.ShapeExpr([int(v) for v in values])
    return None


# the conversions between shapes and tensors fold directly (they have no tensor program)
_SHAPE_CONVERSIONS = {"relax.shape_to_tensor": _fold_shape_to_tensor,
                      "relax.tensor_to_shape": _fold_tensor_to_shape,
                      "relax.tensor_to_values": _fold_tensor_to_values}


class _ConstantFolder(ExprMutator):
    def __init__(self, mod: IRModule, max_output_bytes: int, ctx: PassContext):
        super().__init__(mod)
        self.max_output_bytes = max_output_bytes
        # kernels are built under the caller's settings but without its instruments, so that
        # printing or timing a pipeline shows FoldConstant, not the lowering of every kernel
        self._build_ctx = PassContext(opt_level=ctx.opt_level, config=ctx.config)
        self._kernels: dict[int, list] = {}
        self._by_id: dict[int, tuple] = {}

    # -- uses of variables bound to constants / shapes ---------------------------------------
    def visit_Var(self, var):
        var = super().visit_Var(var)
        value = self.builder.lookup_binding(var)
        return value if isinstance(value, relax_expr.Constant) else var

    def visit_TupleGetItem(self, expr):
        expr = super().visit_TupleGetItem(expr)
        tup = expr.tuple_value
        if isinstance(tup, relax_expr.Var):
            tup = self.builder.lookup_binding(tup)
        if isinstance(tup, relax_expr.Tuple) and isinstance(tup.fields[expr.index], relax_expr.Constant):
            return tup.fields[expr.index]  # a field of a folded multi-output call
        return expr

    def visit_Call(self, call):
        call = self.builder.normalize(super().visit_Call(call))
        op = call.op
        if not isinstance(op, Op):
            return call
        if op.name == _CALL_TIR:
            return self._fold_call_tir(call, self.builder.get()) or call
        call = self._inline_shapes(call)
        if self.builder.current_block_is_dataflow() and op.name in _SHAPE_CONVERSIONS:
            return _SHAPE_CONVERSIONS[op.name](call.args[0]) or call
        if self.builder.current_block_is_dataflow() and op.info.purity and op.get_attr("FLegalize") \
                and all(_is_constant_arg(a) for a in call.args):
            return self._fold_by_legalizing(call) or call
        return call

    def _inline_shapes(self, call: relax_expr.Call) -> relax_expr.Call:
        args = []
        for arg in call.args:
            value = self.builder.lookup_binding(arg) if isinstance(arg, relax_expr.Var) else None
            args.append(value if isinstance(value, relax_expr.ShapeExpr) else arg)
        if all(a is b for a, b in zip(args, call.args)):
            return call
        return self.builder.normalize(relax_expr.Call(call.op, args, call.attrs, call.sinfo_args))

    # -- evaluation ------------------------------------------------------------------------
    def _fold_by_legalizing(self, call: relax_expr.Call):
        scratch = BlockBuilder()
        scratch.begin_binding_block()
        try:
            legalized = scratch.normalize(call.op.get_attr("FLegalize")(scratch, call))
        except (GraphcError, NotImplementedError):
            return None  # LegalizeOps will report it, with its context
        if scratch.end_block().bindings:
            return None  # the legalization needs helper bindings: leave it to LegalizeOps
        op = legalized.op if isinstance(legalized, relax_expr.Call) else None
        if not (isinstance(op, Op) and op.name == _CALL_TIR):
            return None
        return self._fold_call_tir(legalized, scratch.get())

    def _fold_call_tir(self, call: relax_expr.Call, mod: IRModule):
        gv = call.args[0]
        func = mod[gv] if isinstance(gv, GlobalVar) and gv.name_hint in mod else None
        if not isinstance(func, PrimFunc):
            return None
        inputs = call.args[1].fields if isinstance(call.args[1], relax_expr.Tuple) else None
        if inputs is None or not all(isinstance(a, relax_expr.Constant) for a in inputs):
            return None
        scalars = []
        if len(call.args) == 3:
            tir_vars = call.args[2]
            if not (isinstance(tir_vars, relax_expr.ShapeExpr) and _is_constant_arg(tir_vars)):
                return None
            scalars = [int(v.value) for v in tir_vars.values]
        outputs = _static_outputs(call.sinfo_args[0])
        if outputs is None:
            return None
        arrays = [_host_array(a.data) for a in inputs]
        out_bytes = sum(math.prod(shape) * dtype.itemsize for shape, dtype in outputs)
        in_bytes = sum(a.nbytes for a in arrays)
        if out_bytes > self.max_output_bytes and out_bytes > 2 * in_bytes:
            return None  # folding would grow the model (a broadcast or fill of a big shape)
        # aligned, as the kernel's buffers are declared: no temporary copies in or out
        results = [empty(shape, dtype) for shape, dtype in outputs]
        axes = _permutation(func) if len(arrays) == 1 and len(results) == 1 and not scalars else None
        if axes is not None:  # a transpose only moves data: numpy's copy is bit for bit the kernel's
            np.copyto(np.asarray(results[0]), np.transpose(arrays[0], axes))
        else:
            kernel = self._kernel(func)
            if kernel is None:
                return None
            try:
                kernel(*arrays, *results, *scalars)
            except KernelError:  # a run-time check failed (an index out of range): raise it when run
                return None
        if isinstance(call.sinfo_args[0], TupleStructInfo):
            return relax_expr.Tuple([relax_expr.Constant(r) for r in results])
        return relax_expr.Constant(results[0])

    def _kernel(self, func: PrimFunc):
        """The CPU kernel of `func` (built once per structurally distinct PrimFunc), or None."""
        seen = self._by_id.get(id(func))
        if seen is not None and seen[0] is func:  # the same function again: no hashing
            return seen[1]
        kernel = self._find_or_build(func)
        self._by_id[id(func)] = (func, kernel)  # the function held, so that its id stays its own
        return kernel

    def _find_or_build(self, func: PrimFunc):
        key = structural_hash(func)
        for known, kernel in self._kernels.get(key, ()):
            if known is func or structural_equal(known, func):
                return kernel
        try:
            with self._build_ctx:
                named = func.with_attr("global_symbol", "fold_constant_kernel")
                kernel = target_build(named, f"llvm -opt-level={_FOLD_OPT_LEVEL}")["fold_constant_kernel"]
        except GraphcError:  # a function the CPU cannot run (a GPU-only schedule, ...): do not fold
            kernel = None
        self._kernels.setdefault(key, []).append((func, kernel))
        return kernel


# The LLVM optimisation level of the kernels FoldConstant runs (once each, at compile time):
# LLVM's O3 pipeline cost a second per hundred of them, more than they ran. Every level above
# 0 gives the same bits (no fast-math flags but `contract`, which instruction selection honours
# the same way at each; `tests/test_compile_speed_same.py` compares with O3).
_FOLD_OPT_LEVEL = 1


def _permutation(func: PrimFunc) -> tuple[int, ...] | None:
    """The axes of `func` when it is a plain transpose (`out[v0, v1, ...] = in[v_p0, v_p1, ...]`
    over the whole static output, one spatial block under the root, as `topi.transpose` makes
    it), for `np.transpose(in, axes)`; None for anything else.

    >>> from graphc import te
    >>> A = te.placeholder((2, 3, 4), name="A")
    >>> B = te.compute((4, 2, 3), lambda i, j, k: A[j, k, i], name="B")
    >>> _permutation(te.create_prim_func([A, B]))
    (2, 0, 1)
    """
    if len(func.params) != 2 or len(func.buffer_map) != 2:
        return None
    src, dst = (func.buffer_map.get(p) for p in func.params)
    if src is None or dst is None or src.dtype != dst.dtype or len(src.shape) != len(dst.shape):
        return None
    root = func.body
    if not (isinstance(root, BlockRealize) and not root.block.alloc_buffers and root.block.init is None):
        return None
    stmt, loops = root.block.body, []
    while isinstance(stmt, For):
        if stmt.kind != ForKind.SERIAL or stmt.annotations or not _is_int(stmt.min, 0):
            return None
        loops.append(stmt)
        stmt = stmt.body
    if not isinstance(stmt, BlockRealize):
        return None
    block = stmt.block
    if (block.init is not None or block.alloc_buffers or block.match_buffers or not _is_int(stmt.predicate, 1)
            or len(block.iter_vars) != len(dst.shape) or len(loops) != len(dst.shape)):
        return None
    for iv, value, loop, extent in zip(block.iter_vars, stmt.iter_values, loops, dst.shape):
        if (iv.iter_type != IterType.DATA_PAR or value is not loop.loop_var or not _is_int(iv.dom.min, 0)
                or not isinstance(extent, IntImm) or not _is_int(iv.dom.extent, extent.value)
                or not _is_int(loop.extent, extent.value)):
            return None
    store, ivars = block.body, [iv.var for iv in block.iter_vars]
    if not (isinstance(store, BufferStore) and store.buffer is dst and store.predicate is None
            and len(store.indices) == len(ivars) and all(a is b for a, b in zip(store.indices, ivars))
            and isinstance(store.value, BufferLoad) and store.value.buffer is src
            and store.value.predicate is None):
        return None
    where = {id(v): k for k, v in enumerate(store.value.indices)}  # (PrimExpr == builds an EQ)
    if len(store.value.indices) != len(ivars) or sorted(where) != sorted(map(id, ivars)):
        return None  # each index one iter var, each once
    axes = tuple(where[id(v)] for v in ivars)  # out dim j reads in dim axes[j]
    if any(not _is_int(src.shape[a], dst.shape[j].value) for j, a in enumerate(axes)):
        return None
    return axes


def _is_int(expr, value: int) -> bool:
    return isinstance(expr, IntImm) and expr.value == value


def _host_array(data) -> np.ndarray:
    """A constant's data as a C-contiguous host array, without a copy where it is one already."""
    array = np.asarray(data) if getattr(data, "device", None) == cpu() else data.numpy()
    return np.require(array, requirements="C")


def _referenced(mod: IRModule) -> set[str]:
    funcs = [f for f in mod.functions.values() if isinstance(f, relax_expr.Function)]
    return {gv.name_hint for f in funcs for gv in all_global_vars(f)}


@module_pass(opt_level=0, name="FoldConstant")
class FoldConstant:
    """Fold calls whose arguments are all constants into constants (see the module docstring).

    `max_output_bytes` overrides the PassContext config ``"relax.FoldConstant.max_output_bytes"``.
    """

    def __init__(self, max_output_bytes: int | None = None):
        self.max_output_bytes = max_output_bytes

    def transform_module(self, mod, ctx):
        limit = self.max_output_bytes
        if limit is None:
            limit = ctx.config.get(CONFIG_KEY, DEFAULT_MAX_OUTPUT_BYTES)
        folder = _ConstantFolder(mod, int(limit), ctx)
        used_before = _referenced(mod)
        changed = False
        for gv, func in mod.items():
            if not isinstance(func, relax_expr.Function):
                continue
            new = remove_all_unused(folder.visit_expr(func), mod)
            if new is not func:
                mod[gv], changed = new, True
        if not changed:
            return mod
        used_after = _referenced(mod)
        for name in used_before - used_after:
            if isinstance(mod[name], PrimFunc) and not is_externally_visible(mod[name]):
                del mod[name]
        return mod
