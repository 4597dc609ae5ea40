"""merge: run several loop nests of the same shape as one nest (TVM's `merge`).

`merge(l1, l2, ...)` takes loops of different nests at the same depth below their lowest
common ancestor. Level by level, the loops from each target up to that ancestor must be
serial, unannotated, start at 0, have equal extents, and each must be the only child of the
one above. The nests become one (the first one's loops), whose innermost merged loop runs
the bodies one after another, in program order; it is returned.

Merging interleaves the nests' iterations, so it is refused when one nest writes a buffer
another accesses, unless every access to that buffer in the merged nests is the same single
element per merged iteration, indexed by the merged loops themselves (`B[i, j]` written and
read at `(i, j)`): then each iteration reads exactly what the same iteration wrote.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
...     B = T.alloc_buffer((4, 4), "float32")
...     for i, j in T.grid(4, 4):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vi, vj] * 2.0
...     for i, j in T.grid(4, 4):
...         with T.block("C"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             C[vi, vj] = B[vi, vj] + 1.0
... ''')
>>> sch = tir.Schedule(f)
>>> merged = sch.merge(sch.get_loops(sch.get_block("B"))[1], sch.get_loops(sch.get_block("C"))[1])
>>> sch.get(sch.get_loops(sch.get_block("C"))[1]) is sch.get(merged)   # C now runs in B's loops
True
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..expr import IntImm, Var
from ..functor import substitute
from ..stmt import BlockRealize, For, ForKind, SeqStmt
from .blocks import access, read_buffers, write_buffers
from .bounds import shape_analyzer
from .state import find_loop_path, replace_stmts, walk


def _chains(func, loop_vars: list, what: str):
    paths = []
    for v in loop_vars:
        path = find_loop_path(func.body, v)
        if path is None:
            raise ScheduleError(f"cannot {what}: loop {v.name} does not exist")
        paths.append(path)
    depth = 0
    while all(len(p) > depth + 1 for p in paths) and all(p[depth] is paths[0][depth] for p in paths):
        depth += 1
    lca = paths[0][depth - 1]
    chains = [p[depth:] for p in paths]
    if not isinstance(lca, SeqStmt) or len({id(c[0]) for c in chains}) != len(chains):
        raise ScheduleError(
            f"cannot {what}: the loops must lie in different nests of one sequence of statements"
        )
    if len({len(c) for c in chains}) != 1:
        raise ScheduleError(f"cannot {what}: the loops are at different depths below their common ancestor")
    for c in chains:
        for k, s in enumerate(c):
            if not isinstance(s, For):
                raise ScheduleError(
                    f"cannot {what}: {type(s).__name__} lies between loop {c[-1].loop_var.name} and the "
                    f"nests' common ancestor"
                )
            if k + 1 < len(c) and s.body is not c[k + 1]:
                raise ScheduleError(
                    f"cannot {what}: loop {c[k + 1].loop_var.name} is not the only child of its parent"
                )
    return lca, chains


def _check_levels(func, chains: list, what: str) -> None:
    ana = shape_analyzer(func)
    for level in zip(*chains):
        first = level[0]
        for lp in level:
            if lp.kind != ForKind.SERIAL or lp.annotations or lp.thread_binding is not None:
                raise ScheduleError(f"cannot {what}: loop {lp.loop_var.name} is not a plain serial loop")
            if not (isinstance(lp.min, IntImm) and lp.min.value == 0):
                raise ScheduleError(f"cannot {what}: loop {lp.loop_var.name} does not start at 0")
            if not ana.can_prove(lp.extent == first.extent):
                raise ScheduleError(
                    f"cannot {what}: loops {first.loop_var.name} and {lp.loop_var.name} have different "
                    f"extents ({first.extent} and {lp.extent})"
                )


def _points(chain: list, canon: list) -> dict:
    """Buffer -> list of index tuples (over the canonical level vars), None for non-point accesses."""
    rename = {lp.loop_var: c for lp, c in zip(chain, canon)}
    out: dict = {}
    for s in walk(chain[0]):
        if not isinstance(s, BlockRealize):
            continue
        vmap = {iv.var: substitute(v, rename) for iv, v in zip(s.block.iter_vars, s.iter_values)}
        reads, writes = access(s.block)
        for region in reads + writes:
            if all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region.region):
                idx = tuple(substitute(r.min, vmap) for r in region.region)
            else:
                idx = None
            out.setdefault(region.buffer, []).append(idx)
    return out


def _pointwise(tuples: list, canon: list) -> bool:
    from ..analysis.block_access import same_expr

    if any(t is None for t in tuples):
        return False
    first = tuples[0]
    if not all(same_expr(t, first) for t in tuples):
        return False
    return all(isinstance(e, Var | IntImm) for e in first) and all(any(e is c for e in first) for c in canon)


def _check_dependences(lca, chains: list, what: str) -> None:
    canon = [lp.loop_var for lp in chains[0]]
    points = [_points(c, canon) for c in chains]
    rw = [(set(), set()) for _ in chains]
    for k, c in enumerate(chains):
        for s in walk(c[0]):
            if isinstance(s, BlockRealize):
                rw[k][0].update(read_buffers(s.block))
                rw[k][1].update(write_buffers(s.block))
    for a in range(len(chains)):
        for b in range(a + 1, len(chains)):
            shared = (rw[a][1] & (rw[b][0] | rw[b][1])) | (rw[b][1] & rw[a][0])
            for buf in shared:
                if not _pointwise(points[a][buf] + points[b][buf], canon):
                    raise ScheduleError(
                        f"cannot {what}: both nests access {buf.name} (one writes it) at elements that are "
                        f"not the same single element per iteration, so interleaving them changes the result"
                    )
    tops = {id(c[0]) for c in chains}
    positions = [k for k, s in enumerate(lca.seq) if id(s) in tops]
    moved = set().union(*(r | w for r, w in rw))
    moved_w = set().union(*(w for _, w in rw))
    for s in lca.seq[positions[0] + 1 : positions[-1]]:
        if id(s) in tops:
            continue
        for r in (x for x in walk(s) if isinstance(x, BlockRealize)):
            if (set(write_buffers(r.block)) & moved) or (set(read_buffers(r.block)) & moved_w):
                raise ScheduleError(
                    f"cannot {what}: block {r.block.name_hint!r} between the nests accesses their buffers"
                )


def merge(func, func_name: str, loop_vars: list):
    """Merge the nests of `loop_vars` (see the module docstring); returns (new func, loop Var)."""
    what = f"merge loops {', '.join(v.name for v in loop_vars)}"
    if len(loop_vars) < 2:
        raise ScheduleError(f"cannot {what}: merge needs at least two loops")
    lca, chains = _chains(func, loop_vars, what)
    order = {id(s): k for k, s in enumerate(lca.seq)}
    chains.sort(key=lambda c: order[id(c[0])])
    _check_levels(func, chains, what)
    _check_dependences(lca, chains, what)
    first = chains[0]
    bodies = [first[-1].body]
    for c in chains[1:]:
        bodies.append(substitute(c[-1].body, {lp.loop_var: f.loop_var for lp, f in zip(c, first)}))
    nest = SeqStmt.flatten(*bodies)
    for lp in reversed(first):
        nest = lp.replace(body=nest)
    mapping = {first[0]: nest}
    mapping.update({c[0]: None for c in chains[1:]})
    return func.with_body(replace_stmts(func.body, mapping)), first[-1].loop_var
