"""Block lowering: `ConvertBlocksToOpaque` binds block iter vars and turns `init` into an `if`;
`LowerOpaqueBlock` replaces the remaining blocks by their bodies, with `Allocate`s and guards.

The init guard is `<each reduce iter value> == <its min>`; a binding that is a positive sum
of loops starting at 0 gives one test per loop (`k_0 == 0 and k_1 == 0`).
`pragma_*` annotations of blocks and loops become `AttrStmt`s around the block body or the
loop (UnrollLoop consumes the unroll pragmas); other annotations are dropped from blocks
and kept on loops.

>>> from graphc import tir
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> i, vi = tir.Var("i"), tir.Var("v_i")
>>> block = tir.Block((tir.IterVar(tir.Range(0, 4), vi),), (), (), "B",
...                   tir.BufferStore(A, tir.const(1.0), (vi,)))
>>> loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
...                tir.BlockRealize((i,), tir.const(True), block))
>>> a = tir.Var("a", "handle")
>>> f = lower_blocks(tir.PrimFunc([a], loop, buffer_map={a: A}))
>>> type(f.body.body).__name__, f.body.body.indices[0] is i
('BufferStore', True)
"""

from __future__ import annotations

from ...errors import TIRError
from ..expr import Add, IntImm, Mul, PrimExpr, Range, StringImm, Var, all_of, const, convert
from ..function import PrimFunc
from ..functor import BufferAccessMutator, StmtExprMutator, VarSubstitution
from ..stmt import Allocate, AttrStmt, BlockRealize, BufferRegion, IfThenElse, IterType, SeqStmt
from .flatten_buffer import flat_size
from .function_pass import prim_func_pass


def is_flat_layout(buf) -> bool:
    """Compact row-major with no offset: its element count is the product of its shape."""
    offset = buf.elem_offset
    return not buf.strides and (offset is None or (isinstance(offset, IntImm) and offset.value == 0))


def _positive_terms(expr) -> list | None:
    """The vars of `expr` when it is a sum of `var` / `var * c` terms with c > 0, else None."""
    if isinstance(expr, Var):
        return [expr]
    if isinstance(expr, Add):
        a, b = _positive_terms(expr.a), _positive_terms(expr.b)
        return None if a is None or b is None else a + b
    if isinstance(expr, Mul):
        var, coef = (expr.a, expr.b) if isinstance(expr.b, IntImm) else (expr.b, expr.a)
        if isinstance(var, Var) and isinstance(coef, IntImm) and coef.value > 0:
            return [var]
    return None


def _is_true(expr) -> bool:
    return isinstance(expr, IntImm) and expr.value != 0


class _SubstMutator(VarSubstitution, BufferAccessMutator):
    """A mutator substituting `self.vmap` for Vars and refolding constants on the way up."""

    def __init__(self):
        self.vmap: dict = {}


class _BlockToOpaque(_SubstMutator):
    """Bind block iter vars to their values, lower `init` and `match_buffers`."""

    def __init__(self):
        super().__init__()
        self.matched: dict = {}  # match buffer -> (source buffer, region mins)
        self.loop_min: dict = {}  # enclosing loop var -> its min

    def visit_For(self, op):
        self.loop_min[op.loop_var] = op.min
        try:
            return super().visit_For(op)
        finally:
            del self.loop_min[op.loop_var]

    def _at_min(self, value, low):
        """`value == low`, split into `v == 0` per loop var when value is a positive sum of
        loop vars starting at 0 (`k_0 * 8 + k_1 == 0` is `k_0 == 0 and k_1 == 0`)."""
        terms = _positive_terms(value) if isinstance(low, IntImm) and low.value == 0 else None
        if terms and all(
            isinstance(self.loop_min.get(v), IntImm) and self.loop_min[v].value == 0 for v in terms
        ):
            return all_of(*(convert(v == const(0, v.dtype)) for v in terms))
        return convert(value == low)

    def visit_BlockRealize(self, op: BlockRealize):
        block = op.block
        if len(op.iter_values) != len(block.iter_vars):
            raise TIRError(
                f"block {block.name_hint!r} has {len(block.iter_vars)} iter vars but its BlockRealize "
                f"binds {len(op.iter_values)} values"
            )
        values = [self.visit_expr(v) for v in op.iter_values]
        predicate = self.visit_expr(op.predicate)
        init_conds = []
        for iv, value in zip(block.iter_vars, values):
            self.vmap[iv.var] = value
            if iv.iter_type == IterType.COMM_REDUCE:
                low = self.visit_expr(iv.dom.min) if iv.dom is not None else const(0, value.dtype)
                init_conds.append(self._at_min(value, low))
        for match in block.match_buffers:
            self._bind_match_buffer(match)
        body = self.visit_stmt(block.body)
        if block.init is not None:
            init = self.visit_stmt(block.init)
            cond = all_of(*init_conds)
            body = SeqStmt.flatten(init if _is_true(cond) else IfThenElse(cond, init), body)
        new_block = block.replace(
            iter_vars=(),
            reads=tuple(self.visit_buffer_region(r) for r in block.reads),
            writes=tuple(self.visit_buffer_region(r) for r in block.writes),
            init=None,
            match_buffers=(),
            body=body,
        )
        for iv in block.iter_vars:
            self.vmap.pop(iv.var, None)
        return BlockRealize((), predicate, new_block)

    # -- match_buffer: accesses of the view become accesses of its source ----------------
    def _bind_match_buffer(self, match) -> None:
        buffer, source = match.buffer, self.visit_buffer_region(match.source)
        if buffer.ndim > len(source.region):
            raise TIRError(
                f"match_buffer {buffer.name} has {buffer.ndim} dimensions, more than its source region "
                f"of {source.buffer.name} ({len(source.region)} dimensions)"
            )
        extents = [r.extent for r in source.region][len(source.region) - buffer.ndim :]
        for dim, extent in zip(buffer.shape, extents):
            if type(dim).__name__ in ("Var", "SizeVar"):
                self.vmap[dim] = extent
        self.matched[buffer] = (source.buffer, tuple(r.min for r in source.region))

    def rewrite_access(self, buffer, indices):
        if buffer not in self.matched:
            return None
        source, mins = self.matched[buffer]
        lead = len(mins) - len(indices)
        new = list(mins[:lead]) + [m + i for m, i in zip(mins[lead:], indices)]
        return source, tuple(new)

    def visit_buffer_region(self, region: BufferRegion) -> BufferRegion:
        region = super().visit_buffer_region(region)
        if region.buffer in self.matched:
            source, mins = self.matched[region.buffer]
            lead = len(mins) - len(region.region)
            ranges = [Range(m, const(1, m.dtype)) for m in mins[:lead]]
            ranges += [Range(m + r.min, r.extent) for m, r in zip(mins[lead:], region.region)]
            region = BufferRegion(source, tuple(ranges))
        return region


class _LowerOpaque(StmtExprMutator):
    """Replace each (opaque) BlockRealize by its body, allocations and predicate guard."""

    def visit_BlockRealize(self, op: BlockRealize):
        block = op.block
        if block.iter_vars or block.init is not None or block.match_buffers:
            raise TIRError(f"block {block.name_hint!r} is not opaque; run ConvertBlocksToOpaque first")
        body = _pragmas(block.annotations, self.visit_stmt(block.body))
        for buf in reversed(block.alloc_buffers):
            # a strided or offset buffer needs its whole span, which only its flat size knows
            extents = buf.shape if is_flat_layout(buf) else (flat_size(buf),)
            body = Allocate(buf.data, buf.dtype, extents, const(True), body, buf.scope)
        predicate = self.visit_expr(op.predicate)
        if not _is_true(predicate):
            body = IfThenElse(predicate, body)
        return body

    def visit_For(self, op):
        op = super().visit_For(op)
        pragmas = {k: v for k, v in op.annotations.items() if k.startswith("pragma_")}
        if not pragmas:
            return op
        rest = {k: v for k, v in op.annotations.items() if not k.startswith("pragma_")}
        return _pragmas(pragmas, op.replace(annotations=rest))


def _pragmas(annotations: dict, body):
    """Wrap `body` in an AttrStmt per `pragma_*` annotation (how TVM hands them to later passes)."""
    for key in sorted(annotations, reverse=True):
        if key.startswith("pragma_"):
            value = annotations[key]
            if isinstance(value, str):
                value = StringImm(value)
            elif isinstance(value, int | float | PrimExpr):
                value = convert(value)
            else:
                continue  # lists and other values have no expression form
            body = AttrStmt(None, key, value, body)
    return body


def convert_blocks_to_opaque(func: PrimFunc) -> PrimFunc:
    """`func` with every block's iter vars substituted by their values and inits lowered."""
    return func.with_body(_BlockToOpaque().visit_stmt(func.body))


def lower_opaque_block(func: PrimFunc) -> PrimFunc:
    """`func` with no blocks left (converting non-opaque blocks first)."""
    body = _BlockToOpaque().visit_stmt(func.body)
    return func.with_body(_LowerOpaque().visit_stmt(body))


def lower_blocks(func: PrimFunc) -> PrimFunc:
    """Both block-lowering steps at once: the plain-loop form of `func`."""
    return lower_opaque_block(func)


@prim_func_pass(opt_level=0, name="ConvertBlocksToOpaque")
class ConvertBlocksToOpaque:
    """Substitute block iter vars by their bindings and turn `init` into `if <reduce vars at min>`."""

    def transform_function(self, func, mod, ctx):
        return convert_blocks_to_opaque(func)


@prim_func_pass(opt_level=0, name="LowerOpaqueBlock")
class LowerOpaqueBlock:
    """Replace blocks by their bodies: alloc_buffers become Allocate, predicates become IfThenElse."""

    def transform_function(self, func, mod, ctx):
        return lower_opaque_block(func)


@prim_func_pass(opt_level=0, name="LowerBlocks")
class LowerBlocks:
    """ConvertBlocksToOpaque and LowerOpaqueBlock in one pass."""

    def transform_function(self, func, mod, ctx):
        return lower_blocks(func)


__all__ = [
    "ConvertBlocksToOpaque",
    "LowerBlocks",
    "LowerOpaqueBlock",
    "convert_blocks_to_opaque",
    "lower_blocks",
    "lower_opaque_block",
]
