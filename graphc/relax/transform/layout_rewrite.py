"""Weight pre-packing: mark weights layout-free, then hoist the kernels' packing out of them.

A schedule rule that wants a weight in another layout (`dlight.cpu.Matmul` packs B into
column panels) may repack it on every call, or, when the PrimFunc says the buffer is a
weight, leave the repacking as one whole block at the top of the kernel for these passes to
move out (TVM's `AttachAttrLayoutFreeBuffers` and `SplitLayoutRewritePreproc`):

- `AttachAttrLayoutFreeBuffers` (before the schedules) gives every PrimFunc the attribute
  ``layout_free_buffers``: the indices of its parameters that every call passes a constant or
  a weight parameter of the caller (one past the caller's ``num_input``);
- `SplitLayoutRewritePreproc` (after them) takes each root-level block annotated
  ``meta_schedule.layout_rewrite_preproc`` (it reads one parameter, the weight, and writes an
  intermediate, the packed weight) into a PrimFunc of its own; the kernel takes the packed
  weight as that parameter instead, and each call site first calls the new function on its
  argument. `FoldConstant` then packs constant weights once, at compile time;
  `LiftTransformParams` moves the packing of weight parameters into `<func>_transform_params`,
  run once when the weights are bound.

The arithmetic does not change, so a kernel given its weights pre-packed returns exactly
what it returns when it packs them itself.

>>> from graphc import relax
>>> [p.info.name for p in (AttachAttrLayoutFreeBuffers(), SplitLayoutRewritePreproc())]
['AttachAttrLayoutFreeBuffers', 'SplitLayoutRewritePreproc']
"""

from __future__ import annotations

from ...ir.module import GlobalVar, IRModule
from ...ir.transform import module_pass
from ...tir.expr import IntImm
from ...tir.expr import Var as TIRVar
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprVisitor
from ...tir.stmt import Block, BlockRealize, For, SeqStmt
from .. import expr as relax_expr
from ..expr_functor import ExprMutator, ExprVisitor
from ..op.base import call_tir
from ..op.registry import Op
from ..struct_info import TensorStructInfo

__all__ = ["AttachAttrLayoutFreeBuffers", "SplitLayoutRewritePreproc"]

# the block annotation a schedule rule puts on a weight's packing (TVM's key)
PREPROC_ANNOTATION = "meta_schedule.layout_rewrite_preproc"
LAYOUT_FREE_ATTR = "layout_free_buffers"


def _call_tir_sites(mod: IRModule):
    """(calling Relax function, call) for every call_tir of the module."""
    call_tir = Op.get("relax.call_tir")
    sites = []
    for _, func in mod.items():
        if not isinstance(func, relax_expr.Function):
            continue

        class Find(ExprVisitor):
            def visit_Call(self, call, _func=func):  # noqa: N802 - the functor's naming
                if call.op is call_tir:
                    sites.append((_func, call))
                super().visit_Call(call)

        Find().visit_expr(func)
    return sites


def _weights(func: relax_expr.Function) -> set:
    """The parameters of `func` past its ``num_input`` (its weights)."""
    num_input = func.attrs.get("num_input") if func.attrs else None
    if num_input is None:
        return set()
    return set(func.params[int(num_input):])


@module_pass(opt_level=0, name="AttachAttrLayoutFreeBuffers", copy=False)
class AttachAttrLayoutFreeBuffers:
    """Attribute ``layout_free_buffers``: the parameters every caller passes a weight."""

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        free: dict = {}
        for caller, call in _call_tir_sites(mod):
            gv, args = call.args[0], call.args[1].fields
            weights = _weights(caller)
            here = {k for k, a in enumerate(args) if isinstance(a, relax_expr.Constant) or a in weights}
            free[gv] = here if gv not in free else free[gv] & here
        out = mod
        for gv, indices in free.items():
            func = mod[gv] if gv in mod else None
            if not isinstance(func, PrimFunc) or func.attrs.get("tir.is_scheduled", False):
                continue
            value = sorted(indices)
            if not value or func.attrs.get(LAYOUT_FREE_ATTR) == value:
                continue
            if out is mod:
                out = mod.copy()
            out[gv] = func.with_attr(LAYOUT_FREE_ATTR, value)
        return out


# -- splitting the packing out of a kernel ---------------------------------------------------


def _root_stmts(func: PrimFunc):
    body = func.body
    if not (isinstance(body, BlockRealize) and body.block.name_hint == "root"):
        return None, None
    root = body.block
    stmts = list(root.body.seq) if isinstance(root.body, SeqStmt) else [root.body]
    return root, stmts


def _leaf_realize(stmt):
    """The BlockRealize at the bottom of a perfect loop nest, or None."""
    while isinstance(stmt, For):
        stmt = stmt.body
    return stmt if isinstance(stmt, BlockRealize) else None


class _BufferUses(StmtExprVisitor):
    def __init__(self):
        self.buffers: set = set()

    def visit_BufferLoad(self, op):
        self.buffers.add(op.buffer)
        super().visit_BufferLoad(op)

    def visit_BufferStore(self, op):
        self.buffers.add(op.buffer)
        super().visit_BufferStore(op)

    def visit_Block(self, op):
        for region in (*op.reads, *op.writes):
            self.buffers.add(region.buffer)
        for match in op.match_buffers:
            self.buffers.add(match.source.buffer)
        super().visit_Block(op)


def _uses(stmts) -> set:
    finder = _BufferUses()
    for s in stmts:
        finder.visit_stmt(s)
    return finder.buffers


def split_preproc(func: PrimFunc):
    """`(kernel, [(param index, preproc PrimFunc)])`: `func` without its annotated packing
    nests, taking each packed buffer where it took the weight. Nests that read anything but one
    parameter, write anything but one intermediate of static shape, or whose weight the kernel
    also reads elsewhere stay where they are."""
    root, stmts = _root_stmts(func)
    if root is None:
        return func, []
    param_of = {buf: k for k, (p, buf) in enumerate((p, func.buffer_map.get(p)) for p in func.params)}
    splits, kept = [], []
    for pos, stmt in enumerate(stmts):
        realize = _leaf_realize(stmt)
        block = realize.block if realize is not None else None
        if block is None or not block.annotations.get(PREPROC_ANNOTATION):
            kept.append(stmt)
            continue
        reads = {r.buffer for r in block.reads}
        writes = [w.buffer for w in block.writes]
        if len(reads) != 1 or len(writes) != 1:
            kept.append(stmt)
            continue
        (weight,), (packed,) = reads, writes
        others = stmts[:pos] + stmts[pos + 1 :]
        if (weight not in param_of or packed not in root.alloc_buffers
                or not all(isinstance(d, IntImm) for d in packed.shape)
                or weight in _uses(others) or any(w is weight for _, w, _ in splits)):  # fmt: skip
            kept.append(stmt)
            continue
        splits.append((param_of[weight], weight, (packed, stmt)))
    if not splits:
        return func, []
    params = list(func.params)
    buffer_map = dict(func.buffer_map)
    allocs = list(root.alloc_buffers)
    result = []
    for index, weight, (packed, nest) in splits:
        new_param = TIRVar(packed.name, "handle")
        del buffer_map[params[index]]
        params[index] = new_param
        buffer_map[new_param] = packed
        allocs.remove(packed)
        result.append((index, _preproc_func(weight, packed, nest)))
    buffer_map = {p: buffer_map[p] for p in params if p in buffer_map}  # in parameter order
    new_root = root.replace(body=SeqStmt.flatten(*kept), alloc_buffers=tuple(allocs))
    kernel = func.replace(params=tuple(params), buffer_map=buffer_map,
                          body=func.body.replace(block=new_root))  # fmt: skip
    return kernel, result


def _preproc_func(weight, packed, nest) -> PrimFunc:
    from ...tir.expr import const

    w, p = TIRVar(weight.name, "handle"), TIRVar(packed.name, "handle")
    realize = _leaf_realize(nest)
    block = realize.block
    annotations = {k: v for k, v in block.annotations.items() if k != PREPROC_ANNOTATION}
    nest = _replace_leaf(nest, realize.replace(block=block.replace(annotations=annotations)))
    root = Block((), (), (), "root", nest)
    body = BlockRealize((), const(True), root)
    return PrimFunc([w, p], body, buffer_map={w: weight, p: packed}, attrs={"tir.noalias": True})


def _replace_leaf(stmt, leaf):
    if isinstance(stmt, For):
        return stmt.replace(body=_replace_leaf(stmt.body, leaf))
    return leaf


@module_pass(opt_level=0, name="SplitLayoutRewritePreproc", copy=False)
class SplitLayoutRewritePreproc:
    """Move each kernel's annotated weight packing into a PrimFunc its callers run first."""

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        rewrites = {}  # kernel gv -> [(param index, preproc gv, packed struct info)]
        out = mod
        for gv, func in mod.items():
            if not isinstance(func, PrimFunc):
                continue
            kernel, parts = split_preproc(func)
            if not parts:
                continue
            if out is mod:
                out = mod.copy()
            out[gv] = kernel
            entries = []
            for index, pre in parts:
                name = _fresh(out, f"{gv.name_hint}_pack_{kernel.buffer_map[kernel.params[index]].name}")
                pre_gv = GlobalVar(name)
                out[pre_gv] = pre
                packed = pre.buffer_map[pre.params[1]]
                entries.append((index, pre_gv, TensorStructInfo(tuple(packed.shape), packed.dtype)))
            rewrites[gv] = entries
        if not rewrites:
            return mod
        call_tir_op = Op.get("relax.call_tir")
        for gv, func in list(out.items()):
            if not isinstance(func, relax_expr.Function):
                continue

            class Rewrite(ExprMutator):
                def visit_Call(self, call):  # noqa: N802 - the functor's naming
                    call = super().visit_Call(call)
                    if call.op is not call_tir_op or call.args[0] not in rewrites:
                        return call
                    args = list(call.args[1].fields)
                    for index, pre_gv, sinfo in rewrites[call.args[0]]:
                        args[index] = self.builder.emit(call_tir(pre_gv, [args[index]], sinfo), "packed")
                    return call.replace(args=(call.args[0], relax_expr.Tuple(args), *call.args[2:]))

            new = Rewrite(out).visit_expr(func)
            if new is not func:
                out[gv] = new
        return out


def _fresh(mod: IRModule, base: str) -> str:
    names = {g.name_hint for g in mod.get_global_vars()}
    name, k = base, 0
    while name in names:
        k += 1
        name = f"{base}_{k}"
    return name
