"""InlinePermuteIntoConsumers: read a transposed tensor through its source instead of copying it.

`lv = R.call_tir(cls.transpose, (w,))` followed by `R.call_tir(cls.f, (x, lv, ...))` makes a
transposed copy of `w` on every call. When the producer is a transpose (its one block is
`out[v...] = in[permuted v...]`, shapes static) and `lv` feeds call_tir arguments only, each
consumer gets a variant of its PrimFunc that reads `w` at the permuted indices (and regions)
wherever it read `lv`, and the copy disappears. A matmul against a transposed weight becomes
a matmul that reads the weight rows contiguously. `graphc.compile` runs this after the
pipeline; it changes no results.

>>> from graphc import relax
>>> relax.transform.InlinePermuteIntoConsumers().info.name
'InlinePermuteIntoConsumers'
"""

from __future__ import annotations

from ...ir.module import GlobalVar
from ...ir.transform import module_pass
from ...tir.buffer import decl_buffer
from ...tir.expr import BufferLoad, IntImm
from ...tir.expr import Var as TIRVar
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprMutator
from ...tir.stmt import BlockRealize, BufferRegion, BufferStore, For
from .. import expr as relax_expr
from ..analysis.vars import used_vars
from ..block_builder import BlockBuilder
from ..expr_functor import ExprMutator, ExprVisitor
from ..op.registry import Op

__all__ = ["InlinePermuteIntoConsumers"]


def _copy_pattern(func: PrimFunc):
    """(input buffer, perm) if `func` is a transpose: `out[v...] = in[v[perm[0]], v[perm[1]], ...]`."""
    if len(func.params) != 2 or not all(p in func.buffer_map for p in func.params):
        return None
    src, dst = (func.buffer_map[p] for p in func.params)
    if not all(isinstance(d, IntImm) for d in (*src.shape, *dst.shape)):
        return None
    body = func.body
    if isinstance(body, BlockRealize) and body.block.name_hint == "root":
        if body.block.alloc_buffers or body.block.match_buffers:
            return None
        body = body.block.body
    while isinstance(body, For):
        body = body.body
    if not isinstance(body, BlockRealize) or body.block.init is not None:
        return None
    if not (isinstance(body.predicate, IntImm) and body.predicate.value == 1):
        return None  # a guarded copy may leave elements unwritten
    block = body.block
    store = block.body
    if not (isinstance(store, BufferStore) and store.buffer is dst and isinstance(store.value, BufferLoad)
            and store.value.buffer is src):
        return None
    ivars = [iv.var for iv in block.iter_vars]
    extents = [iv.dom.extent for iv in block.iter_vars]
    if len(store.indices) != len(ivars) or any(a is not b for a, b in zip(store.indices, ivars)):
        return None
    if not all(isinstance(e, IntImm) for e in extents) or [e.value for e in extents] != [
            d.value for d in dst.shape]:
        return None
    src_index = list(store.value.indices)
    if len(src_index) != len(ivars) or not all(any(e is v for v in ivars) for e in src_index):
        return None
    perm = [next(j for j, v in enumerate(ivars) if v is e) for e in src_index]
    if sorted(perm) != list(range(len(ivars))):
        return None
    return src, perm


class _Redirect(StmtExprMutator):
    """Accesses of the copy `old` at I become accesses of its source `new` at I permuted back."""

    def __init__(self, old, new, perm):
        self.old, self.new, self.perm = old, new, perm
        self.bad = False

    def visit_BufferLoad(self, op):
        op = super().visit_BufferLoad(op)
        if op.buffer is self.old:
            return op.replace(buffer=self.new, indices=tuple(op.indices[j] for j in self.perm))
        return op

    def visit_BufferStore(self, op):
        if op.buffer is self.old:
            self.bad = True  # the consumer writes its input: leave it alone
        return super().visit_BufferStore(op)

    def visit_Block(self, op):
        if any(m.source.buffer is self.old for m in op.match_buffers):
            self.bad = True  # a view of the copy: leave it alone
        new = super().visit_Block(op)
        reads = tuple(
            BufferRegion(self.new, tuple(r.region[j] for j in self.perm)) if r.buffer is self.old else r
            for r in new.reads
        )
        return new if all(a is b for a, b in zip(reads, new.reads)) else new.replace(reads=reads)


def _with_source(func: PrimFunc, param_index: int, src_buf, name: str, perm) -> PrimFunc | None:
    param = func.params[param_index]
    old = func.buffer_map[param]
    if not all(isinstance(d, IntImm) for d in old.shape):
        return None
    new = decl_buffer(src_buf.shape, src_buf.dtype, name)
    mutator = _Redirect(old, new, perm)
    body = mutator.visit_stmt(func.body)
    if mutator.bad:
        return None
    new_param = TIRVar(name, "handle")
    params = tuple(new_param if p is param else p for p in func.params)
    buffer_map = {
        (new_param if p is param else p): (new if p is param else b) for p, b in func.buffer_map.items()
    }
    return func.replace(params=params, body=body, buffer_map=buffer_map)


@module_pass(opt_level=0, name="InlinePermuteIntoConsumers", copy=False)
class InlinePermuteIntoConsumers:
    """Remove element-moving call_tirs (transposes) whose results only feed other call_tirs."""

    def transform_module(self, mod, ctx):
        copies = {}
        for gv, func in mod.items():
            if isinstance(func, PrimFunc):
                pattern = _copy_pattern(func)
                if pattern is not None:
                    copies[gv] = pattern
        if not copies:
            return mod
        new = mod.copy()
        changed = False
        call_sites = _call_sites(mod)
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function):
                rewritten = _Rewriter(new, copies, call_sites).rewrite(func)
                if rewritten is not func:
                    new[gv] = rewritten
                    changed = True
        if not changed:
            return mod
        _drop_unused_prim_funcs(new)
        return new


def _call_tir_arguments_only(func: relax_expr.Function) -> set:
    """The vars `func` reads as call_tir arguments and in no other way.

    In normal form a call_tir's arguments are leaves, so whatever a call_tir reads is an argument.
    """
    call_tir = Op.get("relax.call_tir")
    elsewhere = used_vars(func, skip_call=lambda call: call.op is call_tir)
    return set(used_vars(func)).difference(elsewhere)


def func_param_name(func: PrimFunc, index: int) -> str:
    return func.buffer_map[func.params[index]].name


def _call_sites(mod) -> dict:
    """How many call_tirs of the module's Relax functions call each PrimFunc."""
    call_tir = Op.get("relax.call_tir")
    counts: dict = {}

    class Count(ExprVisitor):
        def visit_Call(self, call):  # noqa: N802 - the functor's naming
            if call.op is call_tir:
                counts[call.args[0]] = counts.get(call.args[0], 0) + 1
            return super().visit_Call(call)

    for _, func in mod.items():
        if isinstance(func, relax_expr.Function):
            Count().visit_expr(func)
    return counts


class _Rewriter:
    def __init__(self, mod, copies, call_sites):
        self.mod, self.copies, self.call_sites = mod, copies, call_sites
        self.call_tir = Op.get("relax.call_tir")

    def rewrite(self, func: relax_expr.Function) -> relax_expr.Function:
        only_arguments = _call_tir_arguments_only(func)
        sources = {}  # var bound to a copy -> (source expr, pattern)
        for block in func.body.blocks:
            for b in block.bindings:
                v = b.value
                if (isinstance(b, relax_expr.VarBinding) and isinstance(v, relax_expr.Call)
                        and v.op is self.call_tir and len(v.args) == 2 and v.args[0] in self.copies
                        and len(v.args[1].fields) == 1 and b.var in only_arguments):
                    sources[b.var] = (v.args[1].fields[0], self.copies[v.args[0]])
        if not sources:
            return func
        outer = self

        class Apply(ExprMutator):
            def visit_Call(self, call):  # noqa: N802
                call = super().visit_Call(call)
                if call.op is not outer.call_tir:
                    return call
                return outer.redirect(call, sources)

        new = Apply().visit_expr(func)
        return _remove_dead_copies(new, sources) if new is not func else func

    def redirect(self, call, sources):
        args = list(call.args[1].fields)
        callee = call.args[0]
        target = self.mod[callee]
        changed = False
        for k, arg in enumerate(args):
            if arg not in sources:
                continue
            src, (src_buf, perm) = sources[arg]
            if _static_shape(src.struct_info) != tuple(int(d) for d in src_buf.shape):
                continue
            name = src.name_hint if isinstance(src, relax_expr.Var) else func_param_name(target, k)
            variant = _with_source(target, k, src_buf, name, perm)
            if variant is None:
                continue
            target, args[k], changed = variant, src, True
        if not changed:
            return call
        if self.call_sites.get(callee, 0) == 1:  # its only caller: rewrite it in place
            self.mod[callee] = target
            gv = callee
        else:
            gv = GlobalVar(self._fresh(callee.name_hint))
            self.mod[gv] = target
        return BlockBuilder().normalize(call.replace(args=(gv, relax_expr.Tuple(args), *call.args[2:])))

    def _fresh(self, base: str) -> str:
        names = {g.name_hint for g in self.mod.get_global_vars()}
        name, k = base, 0
        while name in names:
            k += 1
            name = f"{base}{k}" if base[-1:].isalpha() else f"{base}_{k}"
        return name


def _static_shape(sinfo):
    dims = getattr(sinfo, "shape_values", None)
    if dims is None or not all(isinstance(d, IntImm) for d in dims):
        return None
    return tuple(int(d) for d in dims)


def _remove_dead_copies(func: relax_expr.Function, sources) -> relax_expr.Function:
    """Drop the bindings of copies nothing reads any more."""
    read = set(used_vars(func))
    blocks = []
    for block in func.body.blocks:
        kept = tuple(b for b in block.bindings if not (b.var in sources and b.var not in read))
        blocks.append(block.replace(bindings=kept) if len(kept) != len(block.bindings) else block)
    body = func.body.replace(blocks=tuple(blocks))
    relax_expr.set_struct_info(body, func.body.struct_info)
    new = func.replace(body=body)
    relax_expr.set_struct_info(new, func.struct_info)
    return new


def _drop_unused_prim_funcs(mod) -> None:
    from ..analysis.vars import all_global_vars

    used = set()
    for _, func in mod.items():
        if isinstance(func, relax_expr.Function):
            used.update(all_global_vars(func))
    for gv, func in list(mod.items()):
        if isinstance(func, PrimFunc) and gv not in used and "global_symbol" not in func.attrs:
            del mod[gv]
