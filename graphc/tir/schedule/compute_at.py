"""compute_at and reverse_compute_at: move a block under a loop of its consumers (producers).

`compute_at(P, L)` moves producer P under loop L, inside new loops `ax0, ax1, ...` that cover
exactly the region of P's output that the consumers under L read in one iteration of L
(the consumers' read regions relaxed over the loops inside L). `reverse_compute_at(C, L)` is
the dual: consumer C goes to the end of L's body and covers what the producers under L
wrote in one iteration.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
...     B = T.alloc_buffer((8, 8), "float32")
...     for i, j in T.grid(8, 8):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vi, vj] * 2.0
...     for i, j in T.grid(8, 8):
...         with T.block("C"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             C[vi, vj] = B[vi, vj] + 1.0
... ''')
>>> sch = tir.Schedule(f)
>>> i, j = sch.get_loops(sch.get_block("C"))
>>> sch.compute_at(sch.get_block("B"), i)         # one row of B per row of C
>>> [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("B"))]
['i', 'ax0']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.block_access import affine_difference
from ..analysis.var_use import uses_var
from ..expr import IntImm, Range, Var, const, logical_and, max_value_of, min_value_of
from ..functor import substitute
from ..stmt import Block, BlockRealize, For, ForKind, SeqStmt
from .blocks import access, read_buffers, write_buffers
from .bounds import clip_to_domain, relax_in, shape_analyzer
from .state import (
    enclosing_block,
    find_block_path,
    find_loop_path,
    find_path,
    is_one,
    removal_root,
    replace_stmts,
    scope_realizes,
    simplify,
    walk,
)  # fmt: skip


def _lower(a, b):
    d = affine_difference(a, b)
    if d is not None:
        return a if d <= 0 else b
    return min_value_of(a, b)


def _upper(a, b):
    d = affine_difference(a, b)
    if d is not None:
        return a if d >= 0 else b
    return max_value_of(a, b)


def _touched_region(ana, loop: For, realizes: list, buffer, use_reads: bool, what: str) -> list:
    """Per dimension (lo, hi) of `buffer` accessed by `realizes` during one iteration of `loop`."""
    dims = None
    for realize in realizes:
        path = find_path(loop, lambda s, r=realize: s is r)
        dom = {s.loop_var: Range(s.min, s.extent) for s in path[1:-1] if isinstance(s, For)}
        block = realize.block
        vmap = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        reads, writes = access(block)
        for region in reads if use_reads else writes:
            if region.buffer is not buffer:
                continue
            cur = []
            for r in region.region:
                lo_e = substitute(r.min, vmap)
                hi_e = substitute(r.min + r.extent - 1, vmap)
                lo, hi = relax_in(ana, lo_e, dom), relax_in(ana, hi_e, dom)
                if lo is None or hi is None:
                    raise ScheduleError(
                        f"cannot {what}: the region of {buffer.name} that block {block.name_hint!r} accesses "
                        f"under loop {loop.loop_var.name} cannot be bounded"
                    )
                cur.append((simplify(lo[0]), simplify(hi[1])))
            dims = (
                cur if dims is None else [(_lower(a[0], b[0]), _upper(a[1], b[1])) for a, b in zip(dims, cur)]
            )
    return dims


def _iter_ranges(block: Block, buffer, dims: list, use_reads: bool, what: str) -> dict:
    """Map each block iter var that indexes `buffer` as a plain point to the (lo, hi) of its dim."""
    reads, writes = access(block)
    regions = [r for r in (reads if use_reads else writes) if r.buffer is buffer]
    out: dict = {}
    for k, r in enumerate(regions[0].region):
        if not (isinstance(r.min, Var) and is_one(r.extent)) or r.min in out:
            raise ScheduleError(
                f"cannot {what}: block {block.name_hint!r} must access {buffer.name} at distinct block iter "
                f"vars (dimension {k} is indexed by an expression)"
            )
        out[r.min] = dims[k]
    return out


def _within(ana, expr, bound, outer: dict, upper: bool) -> bool:
    """Whether `expr` <= `bound` (upper) or `expr` >= `bound` (lower) for every outer loop value."""
    rng = relax_in(ana, expr, outer)
    if rng is None:
        return False
    d = affine_difference(rng[1] if upper else rng[0], bound)
    if d is not None:
        return d <= 0 if upper else d >= 0
    return ana.can_prove(rng[1] <= bound if upper else rng[0] >= bound)


def _new_nest(ana, realize: BlockRealize, ranges: dict, preserve_unit_loops: bool, outer: dict):
    """The loops and realize that run `realize`'s block over `ranges` (iter var -> (lo, hi)).

    Where the region may stick out of an iter var's domain (a non-dividing split outside),
    the block gets a predicate that keeps it inside.
    """
    block = realize.block
    loops, bindings, conds = [], [], []
    for iv in block.iter_vars:
        top = simplify(iv.dom.min + iv.dom.extent - 1)
        lo, hi = ranges.get(iv.var, (iv.dom.min, top))
        lo, hi, extent = clip_to_domain(ana, lo, hi, iv.dom.min, iv.dom.extent)
        if is_one(extent) and not preserve_unit_loops:
            binding = lo
        else:
            var = Var(f"ax{len(loops)}", iv.var.dtype)
            loops.append((var, extent))
            binding = simplify(lo + var)
            outer = {**outer, var: Range(const(0, var.dtype), extent)}
        bindings.append(binding)
        if not _within(ana, binding, iv.dom.min, outer, upper=False):
            conds.append(iv.dom.min <= binding)
        if not _within(ana, binding, top, outer, upper=True):
            conds.append(binding < simplify(iv.dom.min + iv.dom.extent))
    pred = conds[0] if conds else const(True)
    for c in conds[1:]:
        pred = logical_and(pred, c)
    body = BlockRealize(tuple(bindings), pred, block)
    for var, extent in reversed(loops):
        body = For(var, const(0, var.dtype), extent, ForKind.SERIAL, body)
    return body


def _contains(stmt, targets: list) -> bool:
    ids = {id(t) for t in targets}
    return any(id(s) in ids for s in walk(stmt))


def compute_at(func, func_name: str, name: str, loop_var: Var, preserve_unit_loops: bool, reverse: bool):
    """Move block `name` under loop `loop_var` (see the module docstring); returns the new func."""
    what = f"{'reverse_' if reverse else ''}compute_at block {name!r} to loop {loop_var.name}"
    bpath = find_block_path(func.body, name)
    lpath = find_loop_path(func.body, loop_var)
    if bpath is None or len(bpath) == 1:
        raise ScheduleError(f"cannot {what}: the block is the root block or does not exist")
    if lpath is None:
        raise ScheduleError(f"cannot {what}: the loop does not exist")
    realize, loop = bpath[-1], lpath[-1]
    scope = enclosing_block(bpath)
    if scope is not enclosing_block(lpath + [None]):
        raise ScheduleError(f"cannot {what}: the block and the loop are not in the same block scope")
    if any(s is loop for s in bpath):
        raise ScheduleError(f"cannot {what}: the loop is already an ancestor of the block")
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise ScheduleError(f"cannot {what}: the block has a predicate (T.where); move it before splitting")
    block = realize.block
    siblings = [r for r in scope_realizes(scope) if r is not realize]
    mine = write_buffers(block) if not reverse else read_buffers(block)
    if reverse:
        related = [r for r in siblings if set(write_buffers(r.block)) & set(mine)]
    else:
        related = [r for r in siblings if set(read_buffers(r.block)) & set(mine)]
    role = "producers" if reverse else "consumers"
    for buf in set(write_buffers(block)) | set(mine):
        writers = [r.block.name_hint for r in scope_realizes(scope) if buf in write_buffers(r.block)]
        if len(writers) > 1:
            raise ScheduleError(
                f"cannot {what}: {buf.name} is written by several blocks ({', '.join(writers)}), so the "
                f"scope is not a stage pipeline; apply compute_at before decompose_reduction"
            )
    under = scope_realizes(loop)
    if not related:
        raise ScheduleError(f"cannot {what}: the block has no {role} in its scope")
    outside = [r for r in related if not any(r is u for u in under)]
    if outside:
        raise ScheduleError(
            f"cannot {what}: its {role[:-1]} {outside[0].block.name_hint!r} is not under loop "
            f"{loop_var.name}; all {role} must be inside the loop"
        )
    order = [s for s in walk(scope) if isinstance(s, BlockRealize | For)]
    pos = {id(s): k for k, s in enumerate(order)}
    if (pos[id(realize)] > pos[id(loop)]) != reverse:
        side = "before" if reverse else "after"
        raise ScheduleError(
            f"cannot {what}: the block comes {side} the loop, it cannot move against the dataflow"
        )
    _check_between(order, pos, realize, loop, under, block, reverse, what)
    if reverse:
        _check_complete_reductions(lpath, related, what)
    buffer = next(
        b for b in mine if any(b in (write_buffers if reverse else read_buffers)(r.block) for r in related)
    )
    outer = {s.loop_var: Range(s.min, s.extent) for s in lpath if isinstance(s, For)}
    ana = shape_analyzer(func, outer)
    dims = _touched_region(ana, loop, related, buffer, use_reads=not reverse, what=what)
    ranges = _iter_ranges(block, buffer, dims, use_reads=reverse, what=what)
    nest = _new_nest(ana, realize, ranges, preserve_unit_loops, outer)
    body = loop.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    if reverse:
        stmts.append(nest)
    else:
        first = next(k for k, s in enumerate(stmts) if _contains(s, related))
        stmts.insert(first, nest)
    new_loop = loop.replace(body=SeqStmt.flatten(*stmts))
    return func.with_body(replace_stmts(func.body, {removal_root(bpath): None, loop: new_loop}))


def _check_between(order, pos, realize, loop, under, block, reverse, what):
    """No block between the moved block and the loop may touch what the move reorders."""
    lo, hi = sorted((pos[id(realize)], pos[id(loop)]))
    under_ids = {id(u) for u in under}
    reads, writes = set(read_buffers(block)), set(write_buffers(block))
    for s in order[lo + 1 : hi]:
        if not isinstance(s, BlockRealize) or id(s) in under_ids:
            continue
        r, w = set(read_buffers(s.block)), set(write_buffers(s.block))
        if (w & reads) or (w & writes) or (r & writes):
            raise ScheduleError(
                f"cannot {what}: block {s.block.name_hint!r} between them accesses the buffers it "
                f"moves across"
            )


def _check_complete_reductions(lpath: list, producers: list, what: str) -> None:
    """A consumer placed under a loop that drives a producer's reduction would read partial sums."""
    from ..stmt import IterType

    loop_vars = [s.loop_var for s in lpath if isinstance(s, For)]
    for r in producers:
        for iv, value in zip(r.block.iter_vars, r.iter_values):
            if iv.iter_type != IterType.COMM_REDUCE:
                continue
            for v in loop_vars:
                if uses_var(value, v):
                    raise ScheduleError(
                        f"cannot {what}: the loop {v.name} drives the reduction iter {iv.var.name} of "
                        f"producer {r.block.name_hint!r}, so the consumer would read partial results"
                    )
