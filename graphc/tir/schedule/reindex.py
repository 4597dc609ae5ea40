"""reindex: stage a buffer a block reads or writes through a buffer indexed by the block's iters.

`reindex(block, ("read", i))` (TVM's primitive) takes the one access of the i-th read buffer
`A[f(v)]` in `block` and adds, before the block's loops, a block `A_reindex` that copies
`A_reindex[u] = A[f(v)]`, where `u` are the block iter vars the indices use (in block order);
the block then reads `A_reindex[u]`. The copy block runs over those iters only, as spatial
iters (the indices are simplified over the iter domains first: `co // 64` with `co < 64` uses
no iter). `("write", i)` is the dual:
the block writes (and, for a reduction, updates) `C_reindex[u]`, and block `C_reindex` after
its loops copies it back to `C[f(v)]`. No other block under the same loops of the scope may
access the buffer; the block must touch it at one index tuple and run over iter domains
starting at 0.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32")):
...     for i, j in T.grid(4, 8):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vj, vi] * 2.0
... ''')
>>> sch = tir.Schedule(f)
>>> r = sch.reindex(sch.get_block("B"), ("read", 0))
>>> [str(x) for x in sch.get(sch.get_block("B")).reads]
['A_reindex[vi, vj]']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.block_access import same_expr
from ..analysis.var_use import uses_var
from ..buffer import decl_buffer
from ..expr import IntImm, Range, Var, const
from ..functor import StmtExprMutator, StmtExprVisitor, substitute
from ..stmt import Block, BlockRealize, BufferRegion, BufferStore, For, ForKind, IterType, IterVar, SeqStmt
from .blocks import read_buffers, write_buffers
from .bounds import relax_in, shape_analyzer
from .layout import resolve_buffer
from .state import find_block_path, is_one, replace_stmts, walk


def _accesses(block: Block, buf) -> list:
    found: list = []

    class _Find(StmtExprVisitor):
        def visit_BufferLoad(self, op):
            if op.buffer is buf:
                found.append(tuple(op.indices))
            super().visit_BufferLoad(op)

        def visit_BufferStore(self, op):
            if op.buffer is buf:
                found.append(tuple(op.indices))
            super().visit_BufferStore(op)

    for stmt in (block.body, block.init):
        if stmt is not None:
            _Find().visit_stmt(stmt)
    return found


def _by_name(func, block_name: str, buffer_name: str) -> tuple:
    """("read" | "write", index) of the buffer called `buffer_name` among the block's accesses, as
    TVM resolves a name: a buffer both read and written (a reduction's output) counts as written."""
    block = find_block_path(func.body, block_name)[-1].block
    found: dict = {}
    for kind, regions in (("read", block.reads), ("write", block.writes)):
        for i, region in enumerate(regions):
            if region.buffer.name == buffer_name:
                found[id(region.buffer)] = (kind, i)
    if len(found) != 1:
        raise ScheduleError(
            f"cannot reindex {buffer_name!r} of block {block_name!r}: "
            + (
                "the block accesses no buffer of that name"
                if not found
                else f"the block accesses {len(found)} different buffers of that name"
            )
        )
    return next(iter(found.values()))


def reindex(func, func_name: str, name: str, buffer):
    """Stage `buffer` of block `name` through `<buffer>_reindex`; returns (new func, block name)."""
    if isinstance(buffer, str):
        buffer = _by_name(func, name, buffer)
    if not (isinstance(buffer, tuple) and len(buffer) == 2 and buffer[0] in ("read", "write")):
        raise ScheduleError("reindex takes the buffer as ('read' | 'write', index) or a buffer name")
    what = f"reindex {buffer[0]} buffer {buffer[1]} of block {name!r}"
    buf = resolve_buffer(func, name, buffer, what)
    is_write = buffer[0] == "write"
    path = find_block_path(func.body, name)
    realize = path[-1]
    block = realize.block
    from .scope import check_stage_pipeline

    scope = check_stage_pipeline(func, path, what)  # TVM's reindex needs a stage-pipeline scope
    if any(isinstance(s, BlockRealize) for s in walk(block.body)):
        raise ScheduleError(f"cannot {what}: it is not a leaf block (it contains other blocks)")
    body = scope.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    pos = next(k for k, s in enumerate(stmts) if any(x is realize for x in walk(s)))
    # The copy goes right before (a read) or after (a write) the scope's statement holding the
    # block: a block elsewhere in the scope keeps its order with it, one in that statement would not.
    others = [r.block.name_hint for r in walk(stmts[pos]) if isinstance(r, BlockRealize) and r is not realize
              and (buf in read_buffers(r.block) or buf in write_buffers(r.block))]  # fmt: skip
    if others:
        raise ScheduleError(
            f"cannot {what}: {buf.name} is also accessed by block(s) {', '.join(others)} under the "
            f"same loops of the scope, which the {'write-back' if is_write else 'copy'} would reorder"
        )
    if not is_write and buf in write_buffers(block):
        raise ScheduleError(f"cannot {what}: the block also writes {buf.name}; reindex it as a write")
    if is_write and block.init is None and buf in read_buffers(block):
        # an update without its init (one part of a partitioned reduction, or what
        # decompose_reduction leaves) accumulates onto values other blocks wrote: the fresh
        # reindex buffer would not hold them. TVM refuses it as neither complete nor a reduction.
        raise ScheduleError(
            f"cannot {what}: the block reads the {buf.name} values it updates but has no init, so "
            f"{buf.name}_reindex would not hold what other blocks wrote"
        )
    indices = []
    for idx in _accesses(block, buf):
        if not any(same_expr(idx, seen) for seen in indices):
            indices.append(idx)
    if len(indices) != 1:
        raise ScheduleError(
            f"cannot {what}: the block must access {buf.name} at exactly one index tuple, "
            f"found {len(indices)}"
        )
    (index,) = indices
    if any(not (isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0) for iv in block.iter_vars):
        raise ScheduleError(f"cannot {what}: the block's iter domains must start at 0")
    _check_in_bounds(func, block, buf, index, what)
    # floordiv(co, 64) over co < 64 is 0: co is not used. A unit iter stays an iter (TVM keeps it).
    ana = shape_analyzer(func, {iv.var: iv.dom for iv in block.iter_vars if not is_one(iv.dom.extent)})
    index = tuple(ana.simplify(e) for e in index)
    used = [iv for iv in block.iter_vars if any(uses_var(e, iv.var) for e in index)]
    # a reduction's init runs where its reduce iters start: the loops must reach that too
    reduce_ivs = [iv for iv in block.iter_vars if iv.iter_type == IterType.COMM_REDUCE] if is_write else []
    if is_write:  # a read's copy may fetch more than the block uses; a write-back may not
        _check_loops_cover(func, path, used, what)
    _check_loops_cover(func, path, [iv for iv in reduce_ivs if iv not in used], what, start_only=True)
    new_name = f"{buf.name}_reindex"
    if find_block_path(func.body, new_name) is not None:
        raise ScheduleError(f"cannot {what}: a block named {new_name!r} already exists")
    new_buf = decl_buffer(tuple(iv.dom.extent for iv in used), buf.dtype, new_name, scope=buf.scope)
    new_index = tuple(iv.var for iv in used)

    class _Swap(StmtExprMutator):
        def visit_BufferLoad(self, op):
            if op.buffer is buf:
                return new_buf[new_index]
            return super().visit_BufferLoad(op)

        def visit_BufferStore(self, op):
            out = super().visit_BufferStore(op)
            return out.replace(buffer=new_buf, indices=new_index) if op.buffer is buf else out

        def visit_buffer_region(self, region):
            if region.buffer is buf:
                return BufferRegion.from_point(new_buf, new_index)
            return super().visit_buffer_region(region)

    new_block = _Swap().visit_stmt(block)
    copy = _copy_nest(block, used, buf, index, new_buf, new_index, new_name, is_write)
    stmts.insert(pos + 1 if is_write else pos, copy)
    new_scope = scope.replace(body=SeqStmt.flatten(*stmts), alloc_buffers=scope.alloc_buffers + (new_buf,))
    new_body = replace_stmts(func.body, {scope: new_scope})
    new_body = replace_stmts(new_body, {realize: realize.replace(block=new_block)})
    return func.with_body(new_body), new_name


def _check_loops_cover(func, path, used, what, start_only: bool = False) -> None:
    """The copy runs over the whole domain of each iter the access uses, so the block's loops must
    visit all of it: one part of a partitioned loop (`i` over [2, 5) of a domain of 5) would
    have the copy carry unwritten values over what the other part wrote. For a reduce iter
    (`start_only`) the loops must reach its start, where the init fills the new buffer."""
    realize = path[-1]
    dom = {s.loop_var: Range(s.min, s.extent) for s in path[:-1] if isinstance(s, For)}
    ana = shape_analyzer(func, dom)
    values = dict(zip((iv.var for iv in realize.block.iter_vars), realize.iter_values))
    for iv in used:
        rng = relax_in(ana, values[iv.var], dom)
        top = iv.dom.min + iv.dom.extent - 1
        if rng is not None and start_only and ana.can_prove(rng[0] <= iv.dom.min):
            continue
        if start_only:
            raise ScheduleError(
                f"cannot {what}: its loops never reach the start of reduce iter {iv.var.name} "
                f"({values[iv.var]} over the loops), where its init fills the new buffer; it would "
                f"accumulate onto values another block wrote"
            )
        if rng is None or not (ana.can_prove(rng[0] <= iv.dom.min) and ana.can_prove(rng[1] >= top)):
            raise ScheduleError(
                f"cannot {what}: its loops visit only part of the domain of {iv.var.name} "
                f"({values[iv.var]} over the loops), so the copy over the whole domain would carry "
                f"values the block never wrote"
            )


def _check_in_bounds(func, block, buf, index, what) -> None:
    """The copy runs unguarded over the whole iter space: every index must stay in the buffer."""
    dom = {iv.var: iv.dom for iv in block.iter_vars}
    ana = shape_analyzer(func, dom)
    for e, d in zip(index, buf.shape):
        rng = relax_in(ana, e, dom)
        if rng is None or not (ana.can_prove(rng[0] >= 0) and ana.can_prove(rng[1] < d)):
            raise ScheduleError(
                f"cannot {what}: index {e} of {buf.name} may leave [0, {d}) over the block's iter space "
                f"(the access is guarded); an unguarded copy would read out of bounds"
            )


def _copy_nest(block, used, buf, index, new_buf, new_index, name, is_write):
    """Loops over the block iters the access uses (as TVM: `ax<k>` / `v<k>` for the k-th block
    iter) around the copy block `name`."""
    ivs, loops, vmap = [], [], {}
    for k, iv in enumerate(block.iter_vars):
        if not any(u is iv for u in used):
            continue
        var = Var(f"v{k}", iv.var.dtype)
        ivs.append(IterVar(Range(const(0, iv.var.dtype), iv.dom.extent), var, IterType.DATA_PAR))
        loops.append((Var(f"ax{k}", iv.var.dtype), iv.dom.extent))
        vmap[iv.var] = var
    old_idx = tuple(substitute(e, vmap) for e in index)
    new_idx = tuple(substitute(e, vmap) for e in new_index)
    src, dst = (new_buf, buf) if is_write else (buf, new_buf)
    src_idx, dst_idx = (new_idx, old_idx) if is_write else (old_idx, new_idx)
    reads, writes = (BufferRegion.from_point(src, src_idx),), (BufferRegion.from_point(dst, dst_idx),)
    blk = Block(tuple(ivs), reads, writes, name, BufferStore(dst, src[src_idx], dst_idx))
    stmt = BlockRealize(tuple(v for v, _ in loops), const(True), blk)
    for var, ext in reversed(loops):
        stmt = For(var, const(0, var.dtype), ext, ForKind.SERIAL, stmt)
    return stmt
