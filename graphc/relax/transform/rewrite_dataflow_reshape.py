"""RewriteDataflowReshape: turn `call_tir` of a pure reshape PrimFunc back into `R.reshape` (TVM's pass).

LegalizeOps turns `R.reshape` into a PrimFunc that copies every element. When a PrimFunc
only moves elements so that the row-major position of each one is unchanged (a reshape,
`flatten`, `expand_dims`, `squeeze`), the copy is not needed: inside dataflow blocks the
call becomes `R.reshape(x, shape)`, which the VM runs as a view of the same memory
(`vm.builtin.reshape`, with `StaticPlanBlockMemory` keeping the storage alive for it).

A PrimFunc has the reshape pattern when its body is one loop nest around one block whose
only statement is `out[i...] = in[j...]`, the loops cover `out` exactly, both buffers have
the same dtype and number of elements, and the flattened index of `j...` in `in` provably
equals that of `i...` in `out`.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3, 4), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         gv = bb.emit_output(relax.op.reshape(x, (6, 4)))
...     _ = bb.emit_func_output(gv)
>>> mod = RewriteDataflowReshape()(relax.transform.LegalizeOps()(bb.get()))
>>> mod["main"].body.blocks[0].bindings[0].value
R.reshape(x, R.shape([6, 4]))
"""

from __future__ import annotations

from ...ir.transform import module_pass
from ...tir.arith import Analyzer
from ...tir.expr import BufferLoad, FloorMod, IntImm, Range, floormod
from ...tir.function import PrimFunc
from ...tir.functor import ExprMutator as TIRExprMutator
from ...tir.functor import substitute
from ...tir.stmt import Block, BlockRealize, BufferStore, For
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..op.manipulate import reshape
from ..struct_info import TensorStructInfo
from .vm_lowering_utils import is_op, rewrite_functions


def _flat_index(indices, shape):
    flat = IntImm("int64", 0)
    for index, extent in zip(indices, shape):
        flat = flat * extent + index
    return flat


def _product(shape):
    out = IntImm("int64", 1)
    for d in shape:
        out = out * d
    return out


class _DropTrivialMod(TIRExprMutator):
    """`a % b` -> `a` where `0 <= a < b` is provable (the simplifier misses symbolic bounds)."""

    def __init__(self, analyzer: Analyzer):
        super().__init__()
        self.analyzer = analyzer

    def visit_FloorMod(self, op: FloorMod):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if self.analyzer.can_prove(a >= IntImm(a.dtype, 0)) and self.analyzer.can_prove(a < b):
            return a
        return op if a is op.a and b is op.b else floormod(a, b)


def _single_block(func: PrimFunc):
    """(loops, block realize) of the only block under an optional root block, else None."""
    body = func.body
    if isinstance(body, BlockRealize) and body.block.name_hint == "root":
        if body.block.alloc_buffers or body.block.init is not None:
            return None
        body = body.block.body
    loops = []
    while isinstance(body, For):
        loops.append(body)
        body = body.body
    if not isinstance(body, BlockRealize) or body.block.init is not None or body.block.alloc_buffers:
        return None
    return loops, body


def has_reshape_pattern(func: PrimFunc) -> bool:
    """The PrimFunc copies one buffer into another keeping every element's row-major position."""
    if not isinstance(func, PrimFunc) or len(func.buffer_map) != 2 or len(func.params) != 2:
        return False
    found = _single_block(func)
    if found is None:
        return False
    loops, realize = found
    block: Block = realize.block
    store = block.body
    if not isinstance(store, BufferStore) or not isinstance(store.value, BufferLoad):
        return False
    src, dst = func.buffer_map[func.params[0]], func.buffer_map[func.params[1]]
    if store.buffer is not dst or store.value.buffer is not src or src.dtype != dst.dtype:
        return False
    if src.strides or dst.strides or src.elem_offset is not None or dst.elem_offset is not None:
        return False  # not dense row-major buffers
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        return False
    analyzer = Analyzer()
    for loop in loops:
        analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
    bind = {iv.var: value for iv, value in zip(block.iter_vars, realize.iter_values)}
    out_index = [substitute(i, bind) for i in store.indices]
    in_index = [substitute(i, bind) for i in store.value.indices]
    # the loops must visit every element of the output once: out[loop vars] over its shape
    if len(loops) != len(dst.shape) or any(
            index is not loop.loop_var or not analyzer.can_prove_equal(loop.extent, extent)
            or not (isinstance(loop.min, IntImm) and loop.min.value == 0)
            for index, loop, extent in zip(out_index, loops, dst.shape)):
        return False
    if not analyzer.can_prove_equal(_product(src.shape), _product(dst.shape)):
        return False
    flat_in = analyzer.simplify(_DropTrivialMod(analyzer).visit_expr(
        analyzer.simplify(_flat_index(in_index, src.shape))))
    return analyzer.can_prove_equal(flat_in, _flat_index(out_index, dst.shape))


class _Rewriter(ExprMutator):
    def __init__(self, mod):
        super().__init__(mod)
        self.mod = mod
        self.in_dataflow = False
        self.cache: dict = {}

    def visit_dataflow_block(self, block):
        self.in_dataflow = True
        try:
            return super().visit_dataflow_block(block)
        finally:
            self.in_dataflow = False

    def is_reshape(self, gv) -> bool:
        if gv not in self.cache:
            self.cache[gv] = gv in self.mod and has_reshape_pattern(self.mod[gv])
        return self.cache[gv]

    def visit_Call(self, call: relax_expr.Call):
        call = super().visit_Call(call)
        if not self.in_dataflow or not is_op(call, "relax.call_tir") or len(call.args) != 2:
            return call
        args, sinfo = call.args[1], call.struct_info
        if not isinstance(args, relax_expr.Tuple) or len(args.fields) != 1 \
                or not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None \
                or not self.is_reshape(call.args[0]):
            return call
        return reshape(args.fields[0], sinfo.shape)


@module_pass(opt_level=0, name="RewriteDataflowReshape")
class RewriteDataflowReshape:
    """Replace `call_tir` of reshape-pattern PrimFuncs in dataflow blocks by `R.reshape`."""

    def transform_module(self, mod, ctx):
        mutator = _Rewriter(mod)
        return rewrite_functions(mod, lambda gv, func: mutator.visit_expr(func))


__all__ = ["RewriteDataflowReshape", "has_reshape_pattern"]
