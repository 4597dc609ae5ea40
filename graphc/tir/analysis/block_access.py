"""The buffer regions a block reads and writes (TVM's `T.reads` / `T.writes` detection).

Every BufferLoad in the block's init and body is a read, every BufferStore a write; a
nested child block contributes its declared regions with its iter vars replaced by its
`iter_values`. Indices that depend on loops or lets inside the block are relaxed over
those loops' ranges; accesses to the same buffer merge into one covering region.

>>> from graphc import tir
>>> A = tir.decl_buffer((16,), "float32", "A"); B = tir.decl_buffer((16,), "float32", "B")
>>> vi = tir.Var("vi")
>>> blk = tir.Block((tir.IterVar(tir.Range.make(16), vi),), (), (), "B", B.vstore([vi], A[vi] + 1.0))
>>> reads, writes = get_block_access_region(blk)
>>> [r.buffer.name for r in reads], [w.buffer.name for w in writes]
(['A'], ['B'])
"""

from __future__ import annotations

import dataclasses

from ...ir.dtype import DataType
from ..arith import Analyzer
from ..buffer import Buffer
from ..expr import (
    Add,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Ramp,
    Range,
    Sub,
    Var,
    const,
    floordiv,
    max_value_of,
    min_value_of,
)  # fmt: skip
from ..functor import StmtExprVisitor, substitute
from ..stmt import Block, BlockRealize, BufferRegion, BufferStore, For, LetStmt
from .var_use import uses_any_var

# --- affine forms: exact differences and comparisons without a simplifier ----------------


def to_affine(expr: PrimExpr) -> tuple[dict, int] | None:
    """`expr` as ({var: coeff}, constant) when it is affine in its variables, else None.

    >>> i = Var("i")
    >>> coeffs, c = to_affine(i * 4 + 3 - i)
    >>> coeffs[i], c
    (3, 3)
    """
    if isinstance(expr, IntImm):
        return {}, expr.value
    if isinstance(expr, Var):
        return {expr: 1}, 0
    if isinstance(expr, Add | Sub):
        a, b = to_affine(expr.a), to_affine(expr.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(expr, Add) else -1
        coeffs = dict(a[0])
        for var, k in b[0].items():
            coeffs[var] = coeffs.get(var, 0) + sign * k
        return {v: k for v, k in coeffs.items() if k != 0}, a[1] + sign * b[1]
    if isinstance(expr, Mul):
        a, b = to_affine(expr.a), to_affine(expr.b)
        if a is None or b is None or (a[0] and b[0]):
            return None
        (coeffs, c), k = (a, b[1]) if not b[0] else (b, a[1])
        return {v: x * k for v, x in coeffs.items() if x * k != 0}, c * k
    return None


def affine_difference(a: PrimExpr, b: PrimExpr) -> int | None:
    """`a - b` when it is a known integer constant, else None.

    >>> i = Var("i")
    >>> affine_difference(i * 2 + 5, i * 2 + 1), affine_difference(i, const(0))
    (4, None)
    """
    fa, fb = to_affine(a), to_affine(b)
    if fa is None or fb is None:
        return None
    keys = set(fa[0]) | set(fb[0])
    if any(fa[0].get(v, 0) != fb[0].get(v, 0) for v in keys):
        return None
    return fa[1] - fb[1]


def same_expr(a, b) -> bool:
    """Exact structural identity: same shape, same constants, the very same Vars and Buffers.

    >>> i, j = Var("i"), Var("j")
    >>> same_expr(i + 1, i + 1), same_expr(i + 1, j + 1)
    (True, False)
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, Var | Buffer):
        return False
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a):
        return all(same_expr(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def _simplify(expr: PrimExpr) -> PrimExpr:
    return Analyzer().simplify(expr)


def from_affine(coeffs: dict, constant: int, dtype: str) -> PrimExpr:
    """Rebuild `sum(var * coeff) + constant` (the inverse of `to_affine`)."""
    result = None
    for var, k in coeffs.items():
        term = var if k == 1 else var * k
        result = term if result is None else result + term
    if result is None:
        return const(constant, dtype)
    return result + constant if constant else result


def extent_between(lo: PrimExpr, hi: PrimExpr) -> PrimExpr:
    """The number of integers in [lo, hi] as an expression, folded when the difference is known.

    >>> n = Var("n")
    >>> extent_between(const(0), n - 1) is n
    True
    """
    fa, fb = to_affine(hi), to_affine(lo)
    if fa is not None and fb is not None:
        coeffs = dict(fa[0])
        for var, k in fb[0].items():
            coeffs[var] = coeffs.get(var, 0) - k
        coeffs = {v: k for v, k in coeffs.items() if k != 0}
        if not coeffs or all(k > 0 for k in coeffs.values()):
            return from_affine(coeffs, fa[1] - fb[1] + 1, lo.dtype)
    return _simplify(hi - lo + 1)


# --- interval bounds of an index expression over the relaxed variables -------------------


def _b_var(e: Var, dom):
    r = dom[e]
    return r.min, r.min + r.extent - 1


def _b_add(e, dom):
    a, b = bounds(e.a, dom), bounds(e.b, dom)
    return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])


def _b_sub(e, dom):
    a, b = bounds(e.a, dom), bounds(e.b, dom)
    return None if a is None or b is None else (a[0] - b[1], a[1] - b[0])


def _b_mul(e, dom):
    for x, k in ((e.a, e.b), (e.b, e.a)):
        if isinstance(k, IntImm):
            r = bounds(x, dom)
            if r is None:
                return None
            return (r[0] * k, r[1] * k) if k.value >= 0 else (r[1] * k, r[0] * k)
    return None


def _b_floordiv(e, dom):
    if not (isinstance(e.b, IntImm) and e.b.value > 0):
        return None
    r = bounds(e.a, dom)
    return None if r is None else (floordiv(r[0], e.b), floordiv(r[1], e.b))


def _b_floormod(e, dom):
    if not (isinstance(e.b, IntImm) and e.b.value > 0):
        return None
    r = bounds(e.a, dom)
    if r is not None:
        diff = affine_difference(r[1], r[0])
        # A span shorter than the modulus that does not wrap keeps its shape.
        lo_aff = to_affine(r[0])
        if diff is not None and lo_aff is not None and not lo_aff[0] and lo_aff[1] >= 0:
            if lo_aff[1] // e.b.value == (lo_aff[1] + diff) // e.b.value:
                return r[0] % e.b, r[1] % e.b
    return const(0, e.dtype), const(e.b.value - 1, e.dtype)


def _b_min(e, dom):
    a, b = bounds(e.a, dom), bounds(e.b, dom)
    return None if a is None or b is None else (min_value_of(a[0], b[0]), min_value_of(a[1], b[1]))


def _b_max(e, dom):
    a, b = bounds(e.a, dom), bounds(e.b, dom)
    return None if a is None or b is None else (max_value_of(a[0], b[0]), max_value_of(a[1], b[1]))


def _b_cast(e, dom):
    r = bounds(e.value, dom)
    return None if r is None else (Cast(e.dtype, r[0]), Cast(e.dtype, r[1]))


def _b_ramp(e, dom):
    base = bounds(e.base, dom)
    if base is None or not isinstance(e.stride, IntImm):
        return None
    last = e.stride * (e.lanes - 1)
    return (base[0], base[1] + last) if e.stride.value >= 0 else (base[0] + last, base[1])


_BOUND_RULES = {
    Var: _b_var, Add: _b_add, Sub: _b_sub, Mul: _b_mul, FloorDiv: _b_floordiv,
    FloorMod: _b_floormod, Min: _b_min, Max: _b_max, Cast: _b_cast, Ramp: _b_ramp,
}  # fmt: skip


def bounds(expr: PrimExpr, dom: dict) -> tuple[PrimExpr, PrimExpr] | None:
    """Inclusive (lo, hi) of `expr` as the Vars in `dom` (Var -> Range) range over their
    domains; None when unbounded. Uses only a small affine interval evaluator.

    >>> i, k = Var("i"), Var("k")
    >>> lo, hi = bounds(i * 2 + k, {k: Range.make(3)})
    >>> affine_difference(hi, lo)
    2
    """
    if not isinstance(expr, Ramp) and not uses_any_var(expr, dom):
        return expr, expr
    rule = _BOUND_RULES.get(type(expr))
    if rule is None or (isinstance(expr, Var) and expr not in dom):
        return None
    return rule(expr, dom)


def relaxed_bounds(expr: PrimExpr, dom: dict) -> tuple[PrimExpr, PrimExpr] | None:
    """Inclusive (lo, hi) of `expr` as the Vars in `dom` (Var -> Range) range over their
    domains, from `graphc.tir.arith.Analyzer().int_set`; None when unbounded. Unlike
    `bounds`, the analyzer simplifies the ends and knows more than affine forms.

    >>> i, k = Var("i"), Var("k")
    >>> lo, hi = relaxed_bounds(i + k, {k: Range.make(4)})
    >>> lo is i, affine_difference(hi, lo)
    (True, 3)
    """
    if not isinstance(expr, Ramp) and not uses_any_var(expr, dom):
        return expr, expr
    int_set = Analyzer().int_set(expr, dom)
    lo, hi = int_set.min_value, int_set.max_value
    if not (isinstance(lo, PrimExpr) and isinstance(hi, PrimExpr)):
        return None
    return lo, hi


# --- the detector ------------------------------------------------------------------------


class _Access:
    """The accesses to one buffer seen so far: per dimension an inclusive (lo, hi) hull."""

    def __init__(self, buffer: Buffer, dims: list):
        self.buffer = buffer
        self.dims = dims  # per dimension: (lo, hi) or None for "the whole dimension"

    def merge(self, dims: list) -> None:
        self.dims = [_union(a, b) for a, b in zip(self.dims, dims)]

    def region(self) -> BufferRegion:
        ranges = []
        for dim, extent in zip(self.dims, self.buffer.shape):
            dim = _clip(dim, extent)
            if dim is None:
                ranges.append(Range(const(0, extent.dtype), extent))
            else:
                lo, hi = dim
                ranges.append(Range(lo, const(1, lo.dtype) if lo is hi else extent_between(lo, hi)))
        return BufferRegion(self.buffer, tuple(ranges))


def _clip(dim, extent: PrimExpr):
    """Clip a relaxed (lo, hi) to the dimension [0, extent) where constants show it overflows;
    None (the whole dimension) when an end is only bounded by its dtype."""
    if dim is None or dim[0] is dim[1]:
        return dim
    lo, hi = dim
    dt = DataType(lo.dtype)
    if (isinstance(lo, IntImm) and lo.value <= dt.min_value()) or (
        isinstance(hi, IntImm) and hi.value >= DataType(hi.dtype).max_value()
    ):
        return None
    if isinstance(lo, IntImm) and lo.value < 0:
        lo = const(0, lo.dtype)
    if isinstance(hi, IntImm) and isinstance(extent, IntImm) and hi.value >= extent.value:
        hi = const(extent.value - 1, hi.dtype)
    return lo, hi


def _union(a, b):
    if a is None or b is None:
        return None
    if same_expr(a[0], b[0]) and same_expr(a[1], b[1]):
        return a
    return _pick(a[0], b[0], min_value_of, lower=True), _pick(a[1], b[1], max_value_of, lower=False)


def _pick(x: PrimExpr, y: PrimExpr, combine, lower: bool) -> PrimExpr:
    diff = affine_difference(x, y)
    if diff is None:
        return x if same_expr(x, y) else combine(x, y)
    return x if (diff <= 0) == lower else y


class _Detector(StmtExprVisitor):
    def __init__(self, excluded: set, in_scope, matched: dict):
        self.matched = matched  # match_buffer -> the source region it views
        self.dom: dict[Var, Range] = {}
        self.lets: dict[Var, PrimExpr] = {}
        self.excluded = excluded
        self.in_scope = in_scope
        self.reads: dict[Buffer, _Access] = {}
        self.writes: dict[Buffer, _Access] = {}

    def _access(self, table: dict, buffer: Buffer, indices) -> None:
        source = self.matched.get(buffer)
        if source is not None:
            self._record(table, source.buffer, self._region_dims(source, {}))
        else:
            self._record(table, buffer, self._point_dims(indices))

    def _record(self, table: dict, buffer: Buffer, dims: list) -> None:
        if buffer in self.excluded:
            return
        if self.in_scope is not None and buffer.data not in self.in_scope:
            return
        if buffer in table:
            table[buffer].merge(dims)
        else:
            table[buffer] = _Access(buffer, dims)

    def _point_dims(self, indices) -> list:
        dims = []
        for index in indices:
            if self.lets:
                index = substitute(index, self.lets)
            dims.append(relaxed_bounds(index, self.dom))
        return dims

    def _region_dims(self, region: BufferRegion, vmap: dict) -> list:
        dims = []
        for r in region.region:
            lo = substitute(r.min, vmap)
            hi = (
                lo
                if isinstance(r.extent, IntImm) and r.extent.value == 1
                else lo + substitute(r.extent, vmap) - 1
            )
            lo_b, hi_b = relaxed_bounds(lo, self.dom), relaxed_bounds(hi, self.dom)
            if lo_b is None or hi_b is None:
                dims.append(None)
            elif hi is lo:
                dims.append(lo_b)
            else:
                dims.append((lo_b[0], hi_b[1]))
        return dims

    def visit_BufferLoad(self, op):
        self._access(self.reads, op.buffer, op.indices)
        for index in op.indices:
            self.visit_expr(index)

    def visit_BufferStore(self, op: BufferStore):
        self._access(self.writes, op.buffer, op.indices)
        self.visit_expr(op.value)
        for index in op.indices:
            self.visit_expr(index)

    def visit_For(self, op: For):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.dom[op.loop_var] = Range(op.min, op.extent)
        self.visit_stmt(op.body)
        del self.dom[op.loop_var]

    def visit_AttrStmt(self, op):
        # A launched thread (`T.launch_thread`) ranges over [0, extent) within its body.
        iv = op.node
        launched = op.attr_key in ("thread_extent", "virtual_thread") and hasattr(iv, "var")
        self.visit_expr(op.value)
        if launched:
            self.dom[iv.var] = Range(const(0, iv.var.dtype), op.value)
        self.visit_stmt(op.body)
        if launched:
            del self.dom[iv.var]

    def visit_LetStmt(self, op: LetStmt):
        self.visit_expr(op.value)
        self.lets[op.var] = substitute(op.value, self.lets) if self.lets else op.value
        self.visit_stmt(op.body)
        del self.lets[op.var]

    def visit_BlockRealize(self, op: BlockRealize):
        block = op.block
        vmap = {iv.var: v for iv, v in zip(block.iter_vars, op.iter_values)}
        if self.lets:
            vmap = {k: substitute(v, self.lets) for k, v in vmap.items()}
        for region in block.reads:
            self._record(self.reads, region.buffer, self._region_dims(region, vmap))
        for region in block.writes:
            self._record(self.writes, region.buffer, self._region_dims(region, vmap))


def get_block_access_region(block: Block, buffer_vars_in_scope=None) -> tuple[tuple, tuple]:
    """(reads, writes) of `block`: one BufferRegion per buffer, in order of first access.

    Buffers the block allocates are left out. When `buffer_vars_in_scope` is given (data
    Vars, or a dict keyed by them), only buffers whose `data` is among them are reported.
    A reduction block keeps its output among the reads (`C = C + A * B` reads C).
    """
    if isinstance(block, BlockRealize):
        block = block.block
    excluded = set(block.alloc_buffers)
    excluded.update(m.buffer for m in block.match_buffers)
    in_scope = None if buffer_vars_in_scope is None else set(buffer_vars_in_scope)
    detector = _Detector(excluded, in_scope, {m.buffer: m.source for m in block.match_buffers})
    if block.init is not None:
        detector.visit_stmt(block.init)
    detector.visit_stmt(block.body)
    reads = tuple(a.region() for a in detector.reads.values())
    writes = tuple(a.region() for a in detector.writes.values())
    return reads, writes


def get_block_read_write_region(block: Block, buffer_vars_in_scope=None) -> tuple[tuple, tuple]:
    """Like `get_block_access_region`, but a block with `init` does not list the buffers it
    writes among its reads (TVM's GetBlockReadWriteRegion, used for T.reads completion there).

    >>> from graphc import tir
    >>> C = tir.decl_buffer((4,), "float32", "C"); A = tir.decl_buffer((4, 4), "float32", "A")
    >>> vi, vk = Var("vi"), Var("vk")
    >>> ivs = (tir.IterVar(Range.make(4), vi), tir.IterVar(Range.make(4), vk, tir.IterType.COMM_REDUCE))
    >>> blk = Block(ivs, (), (), "C", C.vstore([vi], C[vi] + A[vi, vk]), init=C.vstore([vi], 0.0))
    >>> [r.buffer.name for r in get_block_read_write_region(blk)[0]]
    ['A']
    >>> [r.buffer.name for r in get_block_access_region(blk)[0]]
    ['C', 'A']
    """
    reads, writes = get_block_access_region(block, buffer_vars_in_scope)
    if isinstance(block, BlockRealize):
        block = block.block
    if block.init is not None:
        written = {w.buffer for w in writes}
        reads = tuple(r for r in reads if r.buffer not in written)
    return reads, writes


__all__ = [
    "get_block_access_region", "get_block_read_write_region", "bounds", "relaxed_bounds",
    "to_affine", "from_affine", "affine_difference", "extent_between", "same_expr",
]  # fmt: skip
