"""Caching and storage scopes: cache_read, cache_write, reindex_cache_read/_write, set_scope.

`cache_read(C, i, "shared")` adds a block `A_shared` that copies the i-th buffer C reads
(`A`) into a new buffer `A_shared`, placed before the consumers in the scope, and makes the
consumers read the copy. `cache_write(C, i, "local")` makes C write `C_local` and adds a
block `C_local` right after C that copies it back to `C`. The copies cover the whole buffer;
`compute_at` / `reverse_compute_at` then shrink them to what one loop iteration needs.

`reindex_cache_read(C, i, "local", index_map)` is the reindexing variant: the copy block runs
over C's own loops (those its access uses) and stores `A_local[index_map(v)] = A[f(v)]` where
`A[f(v)]` is C's single-point access and `v` are C's iter vars; C then reads
`A_local[index_map(v)]`. `reindex_cache_write` is the dual for what C writes. The index map
must be injective on the iters the access uses (checked), so no two instances share a slot.

A storage scope is one TVM knows: "global", "shared", "local", "warp", "wmma.matrix_a",
"wmma.matrix_b", "wmma.accumulator", "m16n8k8.matrixA/B/C", "metal.simdgroup" or "texture",
optionally followed by a tag (".dyn" in "shared.dyn").
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import used_vars, uses_any_var
from ..buffer import Buffer, decl_buffer
from ..expr import Var, const
from ..functor import BufferAccessMutator, StmtExprMutator, substitute
from ..stmt import Block, BlockRealize, BufferRegion, For, ForKind, IterType, IterVar, Range, SeqStmt
from .blocks import access, read_buffers, write_buffers
from .bounds import clip_to_domain, relax_in, shape_analyzer
from .state import (
    children,
    enclosing_block,
    find_block_path,
    find_path,
    is_zero,
    replace_stmts,
    scope_realizes,
    simplify,
    walk,
)

STORAGE_RANKS = (
    "global", "shared", "warp", "local", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator",
    "texture", "m16n8k8.matrixA", "m16n8k8.matrixB", "m16n8k8.matrixC", "metal.simdgroup",
)  # fmt: skip


def check_storage_scope(scope, what: str) -> None:
    """Raise unless `scope` names a storage scope (TVM's StorageScope::Create rules)."""
    if not isinstance(scope, str):
        raise ScheduleError(f"cannot {what}: the storage scope must be a string, got {type(scope).__name__}")
    if scope and not scope.startswith(STORAGE_RANKS):
        raise ScheduleError(
            f"cannot {what}: {scope!r} is not a storage scope; use one of {', '.join(STORAGE_RANKS)} "
            f"(optionally with a tag, like 'shared.dyn')"
        )


class _BufferSwap(StmtExprMutator):
    """Replace one Buffer by another in loads, stores, regions and allocations."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_buffer(self, buffer):
        return self.new if buffer is self.old else buffer

    def visit_Block(self, op):
        out = super().visit_Block(op)
        if any(b is self.old for b in out.alloc_buffers):
            allocs = tuple(self.new if b is self.old else b for b in out.alloc_buffers)
            out = out.replace(alloc_buffers=allocs)
        return out


def swap_buffer(stmt, old, new):
    return _BufferSwap(old, new).visit_stmt(stmt)


def _unique_block_name(func, base: str) -> str:
    name, k = base, 0
    while find_block_path(func.body, name) is not None:
        k += 1
        name = f"{base}_{k}"
    return name


def _copy_nest(name: str, src, dst, region=None, into_cache: bool = True):
    """Loops `ax0, ax1, ...` around a block `dst[v] = src[v]` over dst's shape or, with `region`
    (the cached part of the original buffer, as (min, extent) per dimension), over the region's
    extents with the original buffer indexed `min + v`."""
    extents = dst.shape if region is None else [ext for _, ext in region]
    ivs = [IterVar(Range(const(0, d.dtype), d), Var(f"v{k}", d.dtype), IterType.DATA_PAR) for k, d in
           enumerate(extents)]  # fmt: skip
    idx = [iv.var for iv in ivs]
    full = (
        idx
        if region is None
        else [simplify(lo + v) if not is_zero(lo) else v for (lo, _), v in zip(region, idx)]
    )
    src_idx, dst_idx = (full, idx) if into_cache else (idx, full)
    block = Block(
        tuple(ivs),
        (BufferRegion.from_point(src, src_idx),),
        (BufferRegion.from_point(dst, dst_idx),),
        name,
        dst.vstore(dst_idx, src[tuple(src_idx)] if src_idx else src[()]),
    )
    loop_vars = [Var(f"ax{k}", d.dtype) for k, d in enumerate(extents)]
    stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for var, d in reversed(list(zip(loop_vars, extents))):
        stmt = For(var, const(0, d.dtype), d, ForKind.SERIAL, stmt)
    return stmt


class _ShiftSwap(BufferAccessMutator):
    """Replace `old` by `new` (the cache of a region starting at `mins`): `old[i]` becomes
    `new[i - min]` in loads, stores and access regions."""

    def __init__(self, old, new, mins):
        self.old, self.new, self.mins = old, new, mins

    def _shift(self, indices):
        return tuple(i if is_zero(lo) else _minus(i, lo) for i, lo in zip(indices, self.mins))

    def rewrite_access(self, buffer, indices):
        return (self.new, self._shift(indices)) if buffer is self.old else None

    def visit_buffer_region(self, region):
        region = super().visit_buffer_region(region)
        if region.buffer is not self.old:
            return region
        mins = self._shift([r.min for r in region.region])
        return region.replace(
            buffer=self.new, region=tuple(r.replace(min=m) for r, m in zip(region.region, mins))
        )


def _minus(index, lo):
    """`index - lo`, simplified where the offset cancels (`v_o * 32 + v - v_o * 32` is `v`) and
    kept as written otherwise (`vi - i * 16`), as TVM prints it."""
    out = simplify(index - lo)
    return out if not uses_any_var(out, used_vars(lo)) else index - lo


def _root_block(func):
    body = func.body
    return body.block if isinstance(body, BlockRealize) else None


def _cache_region(func, scope, buf, writer):
    """The part of `buf` a cache in the non-root block `scope` holds, as TVM chooses it: what
    the scope's only writer of `buf` writes, relaxed over the loops inside the scope, or else
    the region the scope block declares it reads. None for the whole buffer (always so in the
    function's root block)."""
    if scope is _root_block(func):
        return None
    ana = shape_analyzer(func)
    if writer is not None:
        path = find_path(scope, lambda s: s is writer)
        dom = {s.loop_var: Range(s.min, s.extent) for s in path[1:-1] if isinstance(s, For)}
        vmap = {iv.var: v for iv, v in zip(writer.block.iter_vars, writer.iter_values)}
        written = [r for r in access(writer.block)[1] if r.buffer is buf]
        if len(written) != 1:
            return None
        region = []
        for r, dim in zip(written[0].region, buf.shape):
            lo = relax_in(ana, substitute(r.min, vmap), dom)
            hi = relax_in(ana, substitute(r.min + r.extent - 1, vmap), dom)
            if lo is None or hi is None:
                return None
            lo, _, ext = clip_to_domain(ana, simplify(lo[0]), simplify(hi[1]), const(0, dim.dtype), dim)
            region.append((lo, ext))
    else:
        declared = [r for r in scope.reads if r.buffer is buf]
        if len(declared) != 1:
            return None
        region = [(r.min, r.extent) for r in declared[0].region]
    if all(is_zero(lo) and ana.can_prove(ext == dim) for (lo, ext), dim in zip(region, buf.shape)):
        return None
    return region


def _scope_parts(path: list, what: str):
    scope = enclosing_block(path)
    body = scope.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    return scope, stmts


def _position_of(stmts: list, realize) -> int:
    for k, s in enumerate(stmts):
        if any(x is realize for x in walk(s)):
            return k
    raise ScheduleError("internal: block not found in its scope")


def _commit_scope(func, scope, stmts, new_buffer):
    new_scope = scope.replace(body=SeqStmt.flatten(*stmts), alloc_buffers=scope.alloc_buffers + (new_buffer,))
    return func.with_body(replace_stmts(func.body, {scope: new_scope}))


def _cache_location(scope, writer, related_ids):
    """TVM's cache location: `(owner, pos)` where `owner` (a For loop or the scope block) has,
    at child `pos` of its body, the first statement holding a related block after the one
    holding `writer`, taking the innermost such body. None when there is none."""
    state = {"writer": False, "related": False, "loc": None}

    def visit(stmt):
        if isinstance(stmt, BlockRealize):
            if stmt is writer:
                state["writer"] = True
            elif id(stmt.block) in related_ids:
                state["related"] = True
            return
        if isinstance(stmt, For):
            visit_body(stmt, stmt.body)
            return
        for child in children(stmt):
            visit(child)

    def visit_body(owner, body):
        seq = list(body.seq) if isinstance(body, SeqStmt) else [body]
        before = state["writer"]
        state["writer"] = False
        for pos, child in enumerate(seq):
            visit(child)
            if state["writer"] and state["related"] and state["loc"] is None:
                state["loc"] = (owner, pos)
                break
            if state["related"]:
                break
        state["writer"] = state["writer"] or before

    visit_body(scope, scope.body)
    return state["loc"]


def _relaxed_write_region(func, owner, writer, buf, what: str) -> list:
    """(min, extent) per dimension of what `writer` writes of `buf` in one iteration of the loop
    `owner`: its write region relaxed over the loops between them."""
    ana = shape_analyzer(func)
    path = find_path(owner.body, lambda s: s is writer)
    dom = {s.loop_var: Range(s.min, s.extent) for s in path[:-1] if isinstance(s, For)}
    vmap = {iv.var: v for iv, v in zip(writer.block.iter_vars, writer.iter_values)}
    (written,) = [r for r in access(writer.block)[1] if r.buffer is buf]
    region = []
    for r, dim in zip(written.region, buf.shape):
        lo = relax_in(ana, substitute(r.min, vmap), dom)
        hi = relax_in(ana, substitute(r.min + r.extent - 1, vmap), dom)
        if lo is None or hi is None:
            raise ScheduleError(
                f"cannot {what}: the region block {writer.block.name_hint!r} writes cannot be bounded"
            )
        lo, _, ext = clip_to_domain(ana, simplify(lo[0]), simplify(hi[1]), const(0, dim.dtype), dim)
        region.append((lo, ext))
    return region


def _copy_nest_in_loop(name: str, src, dst, region):
    """Loops `ax0, ...` over the region's extents around a block whose iter vars span the whole
    buffer, bound to `min + ax`: `dst[v] = src[v]` (a copy placed inside a loop nest)."""
    ivs = [IterVar(Range(const(0, d.dtype), d), Var(f"v{k}", d.dtype), IterType.DATA_PAR) for k, d in
           enumerate(dst.shape)]  # fmt: skip
    idx = [iv.var for iv in ivs]
    block = Block(
        tuple(ivs),
        (BufferRegion.from_point(src, idx),),
        (BufferRegion.from_point(dst, idx),),
        name,
        dst.vstore(idx, src[tuple(idx)] if idx else src[()]),
    )
    loop_vars = [Var(f"ax{k}", ext.dtype) for k, (_, ext) in enumerate(region)]
    values = tuple(lv if is_zero(lo) else simplify(lo + lv) for (lo, _), lv in zip(region, loop_vars))
    stmt = BlockRealize(values, const(True), block)
    for var, (_, ext) in reversed(list(zip(loop_vars, region))):
        stmt = For(var, const(0, ext.dtype), ext, ForKind.SERIAL, stmt)
    return stmt


def _insert_in(owner, pos: int, new_stmt):
    """`owner` (a For) with `new_stmt` inserted before child `pos` of its body."""
    seq = list(owner.body.seq) if isinstance(owner.body, SeqStmt) else [owner.body]
    seq.insert(pos, new_stmt)
    return owner.replace(body=SeqStmt.flatten(*seq))


def _after(scope, owner, pos: int, realize) -> bool:
    """Whether `realize` runs after the point before child `pos` of `owner`'s body: inside that
    body at a later child, or in a later top-level statement of the scope than `owner`."""
    seq = list(owner.body.seq) if isinstance(owner.body, SeqStmt) else [owner.body]
    for k, child in enumerate(seq):
        if any(x is realize for x in walk(child)):
            return k >= pos
    if owner is scope:
        return False
    stmts = list(scope.body.seq) if isinstance(scope.body, SeqStmt) else [scope.body]
    return _position_of(stmts, realize) > _position_of(stmts, owner)


def _cache_in_nest(
    func, scope, buf, writer, readers, cache, block_name, into_cache: bool, related, what: str
):
    """cache_read / cache_write where the writer and a consumer share a loop nest: the copy goes
    inside the nest, before the first related consumer after the writer (TVM's placement), and
    covers what the writer writes in one iteration of that loop."""
    if related:
        loc = _cache_location(scope, writer, {id(r.block) for r in related})
    else:  # every consumer reads the cache: the write-back goes last in the scope, as TVM
        loc = (scope, len(scope.body.seq) if isinstance(scope.body, SeqStmt) else 1)
    if loc is None:
        raise ScheduleError(
            f"cannot {what}: no place after {writer.block.name_hint!r} and before its consumers"
        )
    owner, pos = loc
    late = [r for r in related if not _after(scope, owner, pos, r)]
    if late:
        raise ScheduleError(
            f"cannot {what}: consumer {late[0].block.name_hint!r} runs before the copy could be placed"
        )
    region = _relaxed_write_region(func, owner, writer, buf, what)
    copy = (
        _copy_nest_in_loop(block_name, buf, cache, region)
        if into_cache
        else _copy_nest_in_loop(block_name, cache, buf, region)
    )
    swapped = {r.block: swap_buffer(r.block, buf, cache) for r in readers}
    if owner is scope:
        stmts = list(scope.body.seq) if isinstance(scope.body, SeqStmt) else [scope.body]
        stmts.insert(pos, copy)
        body = replace_stmts(SeqStmt.flatten(*stmts), swapped)
    else:
        new_owner = _insert_in(replace_stmts(owner, swapped), pos, copy)
        body = replace_stmts(replace_stmts(scope.body, {owner: new_owner}), swapped)
    new_scope = scope.replace(body=body, alloc_buffers=scope.alloc_buffers + (cache,))
    return func.with_body(replace_stmts(func.body, {scope: new_scope}))


def _nth(regions, index: int, kind: str, name: str):
    if isinstance(index, str | Buffer):  # the buffer itself or its name, as TVM also takes
        found = [
            r.buffer
            for r in regions
            if (r.buffer.name == index if isinstance(index, str) else r.buffer is index)
        ]
        if not found:
            label = index if isinstance(index, str) else index.name
            raise ScheduleError(
                f"block {name!r} {kind} no buffer {label!r} (it {kind} "
                f"{', '.join(r.buffer.name for r in regions) or 'nothing'})"
            )
        return found[0]
    if not isinstance(index, int) or not 0 <= index < len(regions):
        raise ScheduleError(
            f"block {name!r} {kind} {len(regions)} buffer(s); buffer index {index!r} is out of range"
        )
    return regions[index].buffer


def _check_region_cover(func, scope, buf, what: str) -> None:
    """Every block of the scope that reads `buf` must read only what its producers write."""
    from .scope import RAW, _region_cover_violation, dependences

    pairs: dict = {}
    for src, dst, kind, b in dependences(scope):
        if kind == RAW and b is buf:
            pairs.setdefault(id(dst), (dst, []))[1].append((src, b))
    for dst, items in pairs.values():
        why = _region_cover_violation(func, scope, dst, items)
        if why:
            raise ScheduleError(f"cannot {what}: the scope's region cover does not hold: {why}")


def cache_read(func, func_name: str, name: str, index: int, storage_scope: str, consumer_names=None):
    """Returns (new_func, name of the copying block)."""
    what = f"cache_read buffer {index} of block {name!r} into scope {storage_scope!r}"
    check_storage_scope(storage_scope, what)
    path = find_block_path(func.body, name)
    buf = _nth(access(path[-1].block)[0], index, "reads", name)
    if buf in write_buffers(path[-1].block):
        raise ScheduleError(
            f"cannot cache_read {buf.name} in block {name!r}: the block also writes it (a reduction "
            f"reading its own output); use cache_write for it"
        )
    scope, stmts = _scope_parts(path, "cache_read")
    # a block that also writes the buffer (a writer reading what it wrote) is no consumer
    readers = [
        r for r in scope_realizes(scope) if buf in read_buffers(r.block) and buf not in write_buffers(r.block)
    ]
    if consumer_names is not None:
        readers = [r for r in readers if r.block.name_hint in set(consumer_names)]
    writers = [r for r in scope_realizes(scope) if buf in write_buffers(r.block)]
    if len(writers) > 1:
        names = ", ".join(repr(w.block.name_hint) for w in writers)
        raise ScheduleError(
            f"cannot {what}: {buf.name} is written by several blocks ({names}); cache_read needs at most "
            f"one writer in the scope"
        )
    _check_region_cover(func, scope, buf, what)
    if not readers:
        raise ScheduleError(f"cannot cache_read {buf.name}: none of the consumer blocks given reads it")
    rpos = [_position_of(stmts, r) for r in readers]
    wpos = [_position_of(stmts, w) for w in writers]
    if wpos and max(wpos) >= min(rpos):  # the producer shares a loop nest with a consumer
        cache = decl_buffer(buf.shape, buf.dtype, f"{buf.name}_{storage_scope}", scope=storage_scope)
        block_name = _unique_block_name(func, cache.name)
        new = _cache_in_nest(func, scope, buf, writers[0], readers, cache, block_name, True, readers, what)
        return new, block_name
    # as TVM: right before the first consumer after the writer, or first in the scope if none
    at = min(rpos) if wpos else 0
    region = _cache_region(func, scope, buf, writers[0] if writers else None)
    shape = buf.shape if region is None else [ext for _, ext in region]
    cache = decl_buffer(shape, buf.dtype, f"{buf.name}_{storage_scope}", scope=storage_scope)
    block_name = _unique_block_name(func, cache.name)
    readers_ids = {id(r.block) for r in readers}
    mapping = {}
    for s in stmts:
        for x in walk(s):
            if isinstance(x, Block) and id(x) in readers_ids:
                mapping[x] = (
                    swap_buffer(x, buf, cache) if region is None
                    else _ShiftSwap(buf, cache, [lo for lo, _ in region]).visit_stmt(x)
                )  # fmt: skip
    stmts = [replace_stmts(s, mapping) for s in stmts]
    stmts.insert(at, _copy_nest(block_name, buf, cache, region, into_cache=True))
    return _commit_scope(func, scope, stmts, cache), block_name


def cache_write(func, func_name: str, name: str, index: int, storage_scope: str, consumer_names=None):
    """Returns (new_func, name of the write-back block). The blocks named in `consumer_names`
    read the cache directly instead of the written-back buffer."""
    what = f"cache_write buffer {index} of block {name!r} into scope {storage_scope!r}"
    check_storage_scope(storage_scope, what)
    path = find_block_path(func.body, name)
    realize = path[-1]
    buf = _nth(access(realize.block)[1], index, "writes", name)
    scope, stmts = _scope_parts(path, "cache_write")
    writers = [r for r in scope_realizes(scope) if buf in write_buffers(r.block)]
    if len(writers) > 1:
        names = ", ".join(repr(w.block.name_hint) for w in writers)
        raise ScheduleError(
            f"cannot {what}: {buf.name} is written by several blocks ({names}); cache_write needs the "
            f"block to be its only writer in the scope"
        )
    at = _position_of(stmts, realize)
    others = [
        r
        for r in scope_realizes(scope)
        if r is not realize and buf in read_buffers(r.block) + write_buffers(r.block)
    ]
    if any(_position_of(stmts, r) == at for r in others):  # a consumer shares the block's loop nest
        if any(buf in write_buffers(r.block) for r in others):
            raise ScheduleError(f"cannot {what}: another block writing {buf.name} shares its loop nest")
        cache = decl_buffer(buf.shape, buf.dtype, f"{buf.name}_{storage_scope}", scope=storage_scope)
        block_name = _unique_block_name(func, cache.name)
        wanted = set(consumer_names or ())
        direct = [r for r in others if r.block.name_hint in wanted]
        order = scope_realizes(scope)
        if any(order.index(r) < order.index(realize) for r in direct):
            raise ScheduleError(f"cannot {what}: a consumer given comes before the block")
        related = [r for r in others if r.block.name_hint not in wanted]
        new = _cache_in_nest(
            func, scope, buf, realize, [realize, *direct], cache, block_name, False, related, what
        )
        return new, block_name
    # consumers that read the cache directly read it whole, so only without them is it compacted
    region = None if consumer_names else _cache_region(func, scope, buf, realize)
    shape = buf.shape if region is None else [ext for _, ext in region]
    cache = decl_buffer(shape, buf.dtype, f"{buf.name}_{storage_scope}", scope=storage_scope)
    block_name = _unique_block_name(func, cache.name)
    mapping = {
        realize.block: swap_buffer(realize.block, buf, cache) if region is None
        else _ShiftSwap(buf, cache, [lo for lo, _ in region]).visit_stmt(realize.block)
    }  # fmt: skip
    if consumer_names:
        wanted = set(consumer_names)
        for r in scope_realizes(scope):
            if r.block.name_hint in wanted and buf in read_buffers(r.block):
                if _position_of(stmts, r) <= at:
                    raise ScheduleError(
                        f"cannot {what}: consumer {r.block.name_hint!r} comes before the block"
                    )
                mapping[r.block] = swap_buffer(r.block, buf, cache)
    stmts = [replace_stmts(x, mapping) for x in stmts]
    stmts.insert(at + 1, _copy_nest(block_name, cache, buf, region, into_cache=False))
    return _commit_scope(func, scope, stmts, cache), block_name


def set_scope(func, func_name: str, name: str, index: int, storage_scope: str):
    """Give the `index`-th buffer block `name` writes the storage scope `storage_scope`."""
    path = find_block_path(func.body, name)
    writes = access(path[-1].block)[1]
    if isinstance(index, str):  # the buffer by name, as TVM also accepts
        found = [k for k, w in enumerate(writes) if w.buffer.name == index]
        if not found:
            raise ScheduleError(
                f"cannot set_scope of block {name!r}: it writes no buffer named {index!r} (it writes "
                f"{', '.join(w.buffer.name for w in writes) or 'nothing'})"
            )
        index = found[0]
    buf = _nth(writes, index, "writes", name)
    if buf.scope == storage_scope:
        return func
    check_storage_scope(storage_scope, f"set_scope of buffer {index} of block {name!r}")
    if any(b is buf for b in func.buffer_map.values()):
        raise ScheduleError(
            f"cannot set the scope of {buf.name}: it is a parameter of the function; only buffers "
            f"allocated inside it can change scope"
        )
    if not any(isinstance(x, Block) and any(b is buf for b in x.alloc_buffers) for x in walk(func.body)):
        raise ScheduleError(
            f"cannot set the scope of {buf.name}: it is not allocated by a block (a match_buffer view)"
        )
    new = buf.replace(scope=storage_scope)
    body = swap_buffer(func.body, buf, new)
    for blk in [x for x in walk(body) if isinstance(x, Block) and x.match_buffers]:
        matches = tuple(  # a view of the buffer takes its scope too
            m.replace(buffer=m.buffer.replace(scope=storage_scope)) if m.source.buffer is new else m
            for m in blk.match_buffers
        )
        if any(a is not b for a, b in zip(matches, blk.match_buffers)):
            renamed = blk.replace(match_buffers=matches)
            for old_m, new_m in zip(blk.match_buffers, matches):
                if old_m is not new_m:
                    renamed = swap_buffer(renamed, old_m.buffer, new_m.buffer)
            body = replace_stmts(body, {blk: renamed})
    return func.with_body(body)
