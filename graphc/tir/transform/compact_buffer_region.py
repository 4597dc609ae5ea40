"""`CompactBufferAllocation`: shrink each alloc_buffer to the region its block touches.

Runs on opaque blocks (after `ConvertBlocksToOpaque`). For every buffer a block
allocates, the hull of all its access indices is computed with the loops inside the block
relaxed to their ranges (loop variables outside the block stay symbolic). A dimension
whose hull has a constant extent smaller than the declared one shrinks to that extent,
and accesses shift by the hull's minimum: a tile `A_shared` of a `(1024, 1024)` tensor
allocated under the tile loops becomes `(32, 32)`, indexed `A_shared[i - i0, k - k0]`.
A buffer that `Schedule.storage_align` aligned (the "buffer_dim_align" annotation of its
writing block) also gets the padded strides of `storage_align.aligned_strides`, computed
from its compacted shape as TVM does; its allocation then covers the strided span.

On a GPU each thread has its own "local" memory and each block its own "shared" memory, so
loops bound to those threads (all thread axes for "local", `blockIdx` for "shared" and
"warp") are not relaxed: their index stays a symbol, the same for every loop bound to one
tag, and a per-thread accumulator `C_local[i, j]` under `threadIdx.y/x` becomes one element.

>>> from graphc import tir
>>> from graphc.tir.transform.compact_buffer_region import compact_buffer_allocation
>>> compact_buffer_allocation(tir.PrimFunc([], tir.Evaluate(0))).body.value.value
0
"""

from __future__ import annotations

from ...ir.dtype import DataType
from ..analysis.var_use import used_vars, uses_any_var
from ..arith import Analyzer
from ..expr import IntImm, Range, Var, const, max_value_of, min_value_of
from ..function import PrimFunc
from ..functor import BufferAccessMutator, StmtExprVisitor, substitute
from ..stmt import BufferRegion, ForKind
from .function_pass import prim_func_pass
from .storage_align import aligned_strides, collect_dim_aligns


def _bound_tag(loop) -> str | None:
    if loop.kind == ForKind.THREAD_BINDING and loop.thread_binding is not None:
        return loop.thread_binding.thread_tag
    return None


def _private_tags(scope: str) -> tuple:
    """Thread tags whose loops each have their own copy of a buffer of `scope`."""
    if scope.startswith(("local", "wmma.")):  # a tensor-core fragment: one per warp, indexed by warp
        return ("blockIdx", "threadIdx", "vthread")
    if scope.startswith(("shared", "warp")):  # graphc keeps "warp" memory in shared memory
        return ("blockIdx",)
    return ()


class _Hulls(StmtExprVisitor):
    """Per buffer and dimension, the [min, max] hull of the indices used (None: unknown)."""

    def __init__(self, buffers, analyzer, canonical: dict):
        self.analyzer = analyzer
        self.dom: dict = {}
        self.hulls = {b: [None] * len(b.shape) for b in buffers}
        self.unknown = {b: [False] * len(b.shape) for b in buffers}
        self.canonical = canonical  # thread tag -> the Var standing for that thread index
        self.threads: dict = {}  # enclosing thread-bound loop var -> its tag
        self.tags_seen: dict = {}  # buffer -> tags bound around every access (None: none yet)

    def visit_For(self, op):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.dom[op.loop_var] = Range(op.min, op.extent)
        tag = _bound_tag(op)
        if tag is not None:
            self.threads[op.loop_var] = tag
        self.visit_stmt(op.body)
        del self.dom[op.loop_var]
        self.threads.pop(op.loop_var, None)

    def private(self, buffer, indices):
        """`indices` with the loops private to `buffer`'s scope replaced by their tags' symbols."""
        tags = _private_tags(buffer.scope)
        if not tags or not self.threads:
            return indices
        vmap = {}
        for var, tag in self.threads.items():
            if tag.startswith(tags):
                canon = self.canonical.get(tag)
                if canon is None:
                    canon = self.canonical[tag] = Var(tag.replace(".", "_"), var.dtype)
                vmap[var] = canon + self.dom[var].min if not _is_zero(self.dom[var].min) else canon
        around = set(self.threads.values())
        seen = self.tags_seen.get(buffer)
        self.tags_seen[buffer] = around if seen is None else seen & around
        return tuple(substitute(i, vmap) for i in indices) if vmap else indices

    def visit_LetStmt(self, op):
        self.visit_expr(op.value)
        interval = self.analyzer.int_set(op.value, self.dom)
        if interval.min_value is None or interval.max_value is None:
            for flags in self.unknown.values():
                flags[:] = [True] * len(flags)  # an unbounded let var may feed any index
        else:
            self.dom[op.var] = Range(interval.min_value, interval.max_value - interval.min_value + 1)
        self.visit_stmt(op.body)
        self.dom.pop(op.var, None)

    def visit_BlockRealize(self, op):
        if op.block.iter_vars:  # not opaque: iter var bindings would need relaxing too
            for flags in self.unknown.values():
                flags[:] = [True] * len(flags)
        super().visit_BlockRealize(op)

    def visit_BufferStore(self, op):
        self.record(op.buffer, op.indices)
        super().visit_BufferStore(op)

    def visit_BufferLoad(self, op):
        self.record(op.buffer, op.indices)
        super().visit_BufferLoad(op)

    def record(self, buffer, indices) -> None:
        if buffer not in self.hulls:
            return
        indices = self.private(buffer, indices)
        hull, unknown = self.hulls[buffer], self.unknown[buffer]
        for d, index in enumerate(indices):
            if unknown[d]:
                continue
            interval = None
            if DataType(index.dtype).lanes == 1:
                interval = self.analyzer.int_set(index, self.dom)
            if interval is None or interval.min_value is None or interval.max_value is None:
                unknown[d] = True
                continue
            low, high = interval.min_value, interval.max_value
            if hull[d] is not None:
                old_low, old_high = hull[d]
                low = old_low if low is old_low else self.analyzer.simplify(min_value_of(old_low, low))
                high = old_high if high is old_high else self.analyzer.simplify(max_value_of(old_high, high))
            hull[d] = (low, high)


def _compacted(buffer, hull, unknown, analyzer):
    """(new buffer, per-dimension offsets) or None when nothing shrinks."""
    if buffer.strides or (buffer.elem_offset is not None and not _is_zero(buffer.elem_offset)):
        return None
    shape, offsets, changed = [], [], False
    for dim, bounds, bad in zip(buffer.shape, hull, unknown):
        extent = None if bad or bounds is None else analyzer.simplify(bounds[1] - bounds[0] + 1)
        smaller = isinstance(extent, IntImm) and extent.value > 0
        if smaller and isinstance(dim, IntImm):
            smaller = extent.value < dim.value
        if smaller:
            shape.append(IntImm(dim.dtype, extent.value))
            offsets.append(bounds[0])
            changed = True
        else:
            shape.append(dim)
            offsets.append(None)
    if not changed:
        return None
    return buffer.replace(shape=tuple(shape)), offsets


def _is_zero(expr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


class _Shift(BufferAccessMutator):
    """Point accesses of compacted buffers at the new buffer, shifted by the offsets (where an
    offset names a thread tag's symbol, the enclosing loop bound to that tag)."""

    def __init__(self, remap: dict, canonical: dict):
        self.remap = remap
        self.by_symbol = {var: tag for tag, var in canonical.items()}
        self.threads: dict = {}  # tag -> the enclosing loop bound to it

    def visit_For(self, op):
        tag = _bound_tag(op)
        if tag is None:
            return super().visit_For(op)
        saved = self.threads.get(tag)
        self.threads[tag] = op
        try:
            return super().visit_For(op)
        finally:
            if saved is None:
                del self.threads[tag]
            else:
                self.threads[tag] = saved

    def localize(self, offset):
        if offset is None or not self.by_symbol:
            return offset
        vmap = {}
        for var in used_vars(offset):
            tag = self.by_symbol.get(var)
            if tag is not None:
                loop = self.threads[tag]
                vmap[var] = loop.loop_var - loop.min if not _is_zero(loop.min) else loop.loop_var
        return substitute(offset, vmap) if vmap else offset

    def rewrite_access(self, buffer, indices):
        if buffer not in self.remap:
            return None
        new, offsets = self.remap[buffer]
        offsets = [self.localize(off) for off in offsets]
        return new, tuple(i if off is None else i - off for i, off in zip(indices, offsets))

    def visit_buffer_region(self, region: BufferRegion) -> BufferRegion:
        region = super().visit_buffer_region(region)
        if region.buffer in self.remap:
            new, offsets = self.remap[region.buffer]
            if any(off is not None and uses_any_var(off, set(self.by_symbol)) for off in offsets):
                return BufferRegion(new, tuple(Range(const(0, d.dtype), d) for d in new.shape))
            ranges = tuple(
                r if off is None else Range(r.min - off, r.extent) for r, off in zip(region.region, offsets)
            )
            region = BufferRegion(new, ranges)
        return region

    def visit_BlockRealize(self, op):
        op = super().visit_BlockRealize(op)
        block = op.block
        allocs = tuple(self.remap[b][0] if b in self.remap else b for b in block.alloc_buffers)
        if any(a is not b for a, b in zip(allocs, block.alloc_buffers)):
            op = op.replace(block=block.replace(alloc_buffers=allocs))
        return op


def _aligned(buffer, found, per_dim):
    """`found` (or `buffer` unshrunk) given the strides storage_align asked for, or None."""
    if buffer.strides or (buffer.elem_offset is not None and not _is_zero(buffer.elem_offset)):
        return found  # a layout written by hand wins over the annotation
    new, offsets = found if found is not None else (buffer, [None] * len(buffer.shape))
    return new.replace(strides=aligned_strides(new.shape, per_dim)), offsets


def compact_buffer_allocation(func: PrimFunc) -> PrimFunc:
    """`func` with each alloc_buffer shrunk to the hull of the indices its block uses, and
    given padded strides where a storage_align annotation asks for them."""
    analyzer = Analyzer()
    aligns = collect_dim_aligns(func.body)
    remap: dict = {}
    canonical: dict = {}

    class _Collect(StmtExprVisitor):
        def visit_BlockRealize(self, op):
            block = op.block
            hulls = None
            if block.alloc_buffers and not block.iter_vars:
                hulls = _Hulls(block.alloc_buffers, analyzer, canonical)
                if block.init is not None:
                    hulls.visit_stmt(block.init)
                hulls.visit_stmt(block.body)
            for buf in block.alloc_buffers:
                found = None
                if hulls is not None:
                    found = _compacted(buf, hulls.hulls[buf], hulls.unknown[buf], analyzer)
                    if found is not None and not _tags_available(found[1], hulls, buf, canonical):
                        found = None
                if buf in aligns:
                    found = _aligned(buf, found, aligns[buf])
                if found is not None:
                    remap[buf] = found
            super().visit_BlockRealize(op)

    _Collect().visit_stmt(func.body)
    if not remap:
        return func
    return func.with_body(_Shift(remap, canonical).visit_stmt(func.body))


def _tags_available(offsets, hulls, buffer, canonical: dict) -> bool:
    """Whether every thread symbol in `offsets` has a loop bound to its tag around each access."""
    symbols = {var: tag for tag, var in canonical.items()}
    needed = {symbols[v] for off in offsets if off is not None for v in used_vars(off) if v in symbols}
    return not needed or needed <= (hulls.tags_seen.get(buffer) or set())


@prim_func_pass(opt_level=0, name="CompactBufferAllocation")
class CompactBufferAllocation:
    """Shrink alloc_buffers to the region their (opaque) block accesses; apply storage_align."""

    def transform_function(self, func, mod, ctx):
        return compact_buffer_allocation(func)


__all__ = ["CompactBufferAllocation", "compact_buffer_allocation"]
