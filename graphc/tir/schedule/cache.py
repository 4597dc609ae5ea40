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
from ..buffer import decl_buffer
from ..expr import Var, const
from ..functor import StmtExprMutator
from ..stmt import Block, BlockRealize, BufferRegion, For, ForKind, IterType, IterVar, Range, SeqStmt
from .blocks import access, read_buffers, write_buffers
from .state import enclosing_block, find_block_path, replace_stmts, scope_realizes, walk

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


def _copy_nest(name: str, src, dst):
    """Loops `ax0, ax1, ...` over dst's shape around a block `dst[v] = src[v]`."""
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
    loop_vars = [Var(f"ax{k}", d.dtype) for k, d in enumerate(dst.shape)]
    stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for var, d in reversed(list(zip(loop_vars, dst.shape))):
        stmt = For(var, const(0, d.dtype), d, ForKind.SERIAL, stmt)
    return stmt


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


def _nth(regions, index: int, kind: str, name: str):
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
    readers = [r for r in scope_realizes(scope) if buf in read_buffers(r.block)]
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
    if wpos and max(wpos) >= min(rpos):
        raise ScheduleError(
            f"cannot cache_read {buf.name} of block {name!r}: its producer and consumers share a loop "
            f"nest (or a consumer comes first); apply cache_read before compute_at"
        )
    at = max(wpos) + 1 if wpos else min(rpos)
    cache = decl_buffer(buf.shape, buf.dtype, f"{buf.name}_{storage_scope}", scope=storage_scope)
    block_name = _unique_block_name(func, cache.name)
    readers_ids = {id(r.block) for r in readers}
    mapping = {}
    for s in stmts:
        for x in walk(s):
            if isinstance(x, Block) and id(x) in readers_ids:
                mapping[x] = swap_buffer(x, buf, cache)
    stmts = [replace_stmts(s, mapping) for s in stmts]
    stmts.insert(at, _copy_nest(block_name, buf, cache))
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
    if any(_position_of(stmts, r) == at for r in others):
        raise ScheduleError(
            f"cannot cache_write {buf.name} of block {name!r}: another block using {buf.name} shares its "
            f"loop nest; apply cache_write before compute_at"
        )
    cache = decl_buffer(buf.shape, buf.dtype, f"{buf.name}_{storage_scope}", scope=storage_scope)
    block_name = _unique_block_name(func, cache.name)
    mapping = {realize.block: swap_buffer(realize.block, buf, cache)}
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
    stmts.insert(at + 1, _copy_nest(block_name, cache, buf))
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
