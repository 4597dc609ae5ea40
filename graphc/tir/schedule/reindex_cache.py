"""reindex_cache_read / reindex_cache_write: a cache buffer laid out by the block's own iters.

`reindex_cache_read(C, i, "local", index_map)` takes C's access `A[f(v)]` to its i-th read
buffer, which must be a single point, and adds before C's loop nest a copy block `A_local`
over C's own loops (those the access uses), storing `A_local[index_map(v)] = A[f(v)]`; C then
reads `A_local[index_map(v)]`. `index_map` takes all of C's iter vars (in order) and may use
only those the access uses, all of them. `reindex_cache_write` is the dual: C writes
`C_local[index_map(v)]` and a block after C's nest copies it to `C[f(v)]`.

Both refuse what would give wrong results: an index map that is not injective on the iters
it uses (two instances would share a cache slot), a block predicate over loops the copy
does not run, another block of the scope accessing the buffer in between, and (for the
write) a buffer the block is not the only writer of.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
...     for i, j in T.grid(4, 8):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vi, vj] * 2.0
... ''')
>>> sch = tir.Schedule(f)
>>> cache = sch.reindex_cache_read("B", 0, "local", lambda vi, vj: (vj, vi))
>>> [str(r) for r in sch.get(sch.get_block("B")).reads]
['A_local[vj, vi]']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import used_vars, uses_any_var
from ..buffer import decl_buffer
from ..expr import IntImm, PrimExpr, Var, convert
from ..functor import StmtExprMutator, substitute
from ..stmt import Block, BlockRealize, BufferRegion, BufferStore, For, ForKind, IterType, IterVar, SeqStmt
from .affine import detect_bijective
from .blocks import access, read_buffers, write_buffers
from .bounds import relax_in, shape_analyzer
from .cache import _unique_block_name, check_storage_scope
from .state import find_block_path, replace_stmts, scope_realizes, walk

EXHAUSTIVE_LIMIT = 1 << 16


def _new_indices(index_map, block: Block, what: str) -> list:
    ivars = [iv.var for iv in block.iter_vars]
    if not callable(index_map):
        raise ScheduleError(f"cannot {what}: the index map must be a function of the block's iter vars")
    try:
        out = index_map(*ivars)
    except TypeError as err:
        raise ScheduleError(
            f"cannot {what}: the index map must take the block's {len(ivars)} iter var(s) "
            f"({', '.join(v.name for v in ivars)}): {err}"
        ) from None
    out = list(out) if isinstance(out, list | tuple) else [out]
    return [convert(e) if not isinstance(e, PrimExpr) else e for e in out]


def _check_injective(ana, news: list, used: list, what: str) -> None:
    """The map from the used iters (over their domains) to `news` must be one-to-one."""
    dom = {iv.var: iv.dom for iv in used}
    if not news:
        if any(not (isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1) for iv in used):
            raise ScheduleError(f"cannot {what}: the index map drops iters the access uses")
        return
    if detect_bijective(news, dom, ana) is not None:
        return
    extents = [iv.dom.extent for iv in used]
    if all(isinstance(e, IntImm) for e in extents) and _size(extents) <= EXHAUSTIVE_LIMIT:
        import itertools

        from ..arith.evaluate import evaluate

        seen: dict = {}
        ranges = [range(iv.dom.min.value, iv.dom.min.value + iv.dom.extent.value) for iv in used]
        for point in itertools.product(*ranges):
            env = {iv.var: p for iv, p in zip(used, point)}
            image = tuple(evaluate(e, env) for e in news)
            if image in seen:
                raise ScheduleError(
                    f"cannot {what}: the index map is not injective: iters {seen[image]} and {point} "
                    f"both map to {image}"
                )
            seen[image] = point
        return
    raise ScheduleError(f"cannot {what}: cannot prove the index map injective on the iters it uses")


def _size(extents) -> int:
    total = 1
    for e in extents:
        total *= e.value
    return total


def reindex_cache(func, func_name: str, name: str, index: int, storage_scope: str, index_map, is_write: bool):
    """Returns (new func, name of the copy block)."""
    from .scope import check_stage_pipeline

    prim = "reindex_cache_write" if is_write else "reindex_cache_read"
    what = f"{prim} buffer {index} of block {name!r} into scope {storage_scope!r}"
    check_storage_scope(storage_scope, what)
    path = find_block_path(func.body, name)
    realize = path[-1]
    block = realize.block
    regions = access(block)[1 if is_write else 0]
    if not isinstance(index, int) or not 0 <= index < len(regions):
        kind = "writes" if is_write else "reads"
        raise ScheduleError(
            f"cannot {what}: block {name!r} {kind} {len(regions)} buffer(s), not index {index!r}"
        )
    region = regions[index]
    buf = region.buffer
    scope = check_stage_pipeline(func, path, what)
    if any(isinstance(s, BlockRealize) for s in walk(block.body)):
        raise ScheduleError(f"cannot {what}: it is not a leaf block (it contains other blocks)")
    if not all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region.region):
        raise ScheduleError(
            f"cannot {what}: the block accesses {region} of {buf.name}, not a single point; the "
            f"primitive needs one element per block instance"
        )
    if not is_write and buf in write_buffers(block):
        raise ScheduleError(f"cannot {what}: the block also writes {buf.name}; use reindex_cache_write")
    olds = [r.min for r in region.region]
    news = _new_indices(index_map, block, what)
    old_vars = {v for v in used_vars(*olds)} if olds else set()
    new_vars = {v for v in used_vars(*news)} if news else set()
    used = []
    for iv in block.iter_vars:
        in_old, in_new = iv.var in old_vars, iv.var in new_vars
        if in_old != in_new:
            side = "the access" if in_old else "the index map"
            other = "the index map" if in_old else "the access"
            raise ScheduleError(
                f"cannot {what}: iter var {iv.var.name} appears in {side} but not in {other}; the index "
                f"map must use exactly the iters the access uses"
            )
        if in_old:
            used.append(iv)
    if not all(v in {iv.var for iv in block.iter_vars} for v in new_vars):
        raise ScheduleError(f"cannot {what}: the index map uses variables that are not block iter vars")
    ana = shape_analyzer(func, {iv.var: iv.dom for iv in block.iter_vars})
    _check_injective(ana, news, used, what)
    shape = []
    for e in news:
        rng = relax_in(ana, e, {iv.var: iv.dom for iv in used})
        if rng is None or not ana.can_prove(rng[0] >= 0):
            raise ScheduleError(f"cannot {what}: index {e} of the index map may be negative or unbounded")
        shape.append(ana.simplify(rng[1] + 1))
    # the loops the copy runs: the block's loops (inside the scope) that its used iters' bindings use
    loops = [s for s in path[:-1] if isinstance(s, For) and _inside_scope(path, s)]
    bindings = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    used_bindings = [bindings[iv.var] for iv in used]
    kept = [lp for lp in loops if any(uses_any_var(b, {lp.loop_var}) for b in used_bindings)]
    kept_vars = {lp.loop_var for lp in kept}
    dropped = {lp.loop_var for lp in loops} - kept_vars
    predicate = realize.predicate
    if not (isinstance(predicate, IntImm) and predicate.value == 1) and uses_any_var(predicate, dropped):
        raise ScheduleError(
            f"cannot {what}: the block's predicate {predicate} depends on loops the copy does not run"
        )
    for lp in kept:
        if uses_any_var(lp.min, dropped) or uses_any_var(lp.extent, dropped):
            raise ScheduleError(
                f"cannot {what}: the range of loop {lp.loop_var.name} depends on a loop the copy does not run"
            )
    stmts = list(scope.body.seq) if isinstance(scope.body, SeqStmt) else [scope.body]
    at = next(k for k, s in enumerate(stmts) if any(x is realize for x in walk(s)))
    for r in scope_realizes(scope):
        if r is realize or not any(x is r for x in walk(stmts[at])):
            continue
        if buf in read_buffers(r.block) or buf in write_buffers(r.block):
            raise ScheduleError(
                f"cannot {what}: block {r.block.name_hint!r} shares the block's loop nest and accesses "
                f"{buf.name}; apply {prim} before compute_at"
            )
    if is_write:
        writers = [r for r in scope_realizes(scope) if buf in write_buffers(r.block)]
        if len(writers) != 1:
            raise ScheduleError(
                f"cannot {what}: {buf.name} is written by {len(writers)} blocks; the block must be its only "
                f"writer in the scope"
            )
    else:
        late = [r for r in scope_realizes(scope) if buf in write_buffers(r.block) and r is not realize
                and _position(stmts, r) >= at]  # fmt: skip
        if late:
            raise ScheduleError(
                f"cannot {what}: block {late[0].block.name_hint!r} writes {buf.name} in or after the block's "
                f"loop nest, so a copy placed before it would read stale values"
            )
    cache = decl_buffer(tuple(shape), buf.dtype, f"{buf.name}_{storage_scope}", scope=storage_scope)
    block_name = _unique_block_name(func, cache.name)
    new_block = _rewrite_block(block, buf, cache, tuple(ana.simplify(e) for e in news))
    copy = _copy_nest(block_name, used, [bindings[iv.var] for iv in used], kept, predicate,
                      buf, olds, cache, news, is_write)  # fmt: skip
    stmts = [replace_stmts(s, {block: new_block}) for s in stmts]
    stmts.insert(at + 1 if is_write else at, copy)
    new_scope = scope.replace(body=SeqStmt.flatten(*stmts), alloc_buffers=scope.alloc_buffers + (cache,))
    return func.with_body(replace_stmts(func.body, {scope: new_scope})), block_name


def _inside_scope(path: list, loop: For) -> bool:
    for stmt in reversed(path[:-1]):
        if stmt is loop:
            return True
        if isinstance(stmt, Block):
            return False
    return False


def _position(stmts: list, realize) -> int:
    return next(k for k, s in enumerate(stmts) if any(x is realize for x in walk(s)))


def _rewrite_block(block: Block, buf, cache, news: tuple) -> Block:
    class _Swap(StmtExprMutator):
        def visit_BufferLoad(self, op):
            out = super().visit_BufferLoad(op)
            return cache[news] if op.buffer is buf else out

        def visit_BufferStore(self, op):
            out = super().visit_BufferStore(op)
            return out.replace(buffer=cache, indices=news) if op.buffer is buf else out

        def visit_buffer_region(self, region):
            if region.buffer is buf:
                return BufferRegion.from_point(cache, news)
            return super().visit_buffer_region(region)

    return _Swap().visit_stmt(block)


def _copy_nest(name, used, values, loops, predicate, buf, olds, cache, news, is_write):
    """The copy block over the `used` iters, under fresh copies of `loops`."""
    loop_map = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in loops}
    iv_map = {iv.var: Var(iv.var.name, iv.var.dtype) for iv in used}
    ivs = tuple(IterVar(iv.dom, iv_map[iv.var], IterType.DATA_PAR) for iv in used)
    old_idx = tuple(substitute(e, iv_map) for e in olds)
    new_idx = tuple(substitute(e, iv_map) for e in news)
    if is_write:
        src, src_idx, dst, dst_idx = cache, new_idx, buf, old_idx
    else:
        src, src_idx, dst, dst_idx = buf, old_idx, cache, new_idx
    body = BufferStore(dst, src[src_idx], dst_idx)
    reads, writes = (BufferRegion.from_point(src, src_idx),), (BufferRegion.from_point(dst, dst_idx),)
    blk = Block(ivs, reads, writes, name, body)
    stmt = BlockRealize(tuple(substitute(v, loop_map) for v in values), substitute(predicate, loop_map), blk)
    for lp in reversed(loops):
        stmt = For(loop_map[lp.loop_var], lp.min, lp.extent, ForKind.SERIAL, stmt)
    return stmt


__all__ = ["reindex_cache"]
