"""Properties of a block scope that schedule primitives check (TVM's schedule-state flags).

A scope is a block and the blocks directly inside it (not inside other blocks). Within it:

- dependences, in program order, from the blocks' read and write regions: read-after-write
  (RAW), write-after-write (WAW) and write-after-read (WAR);
- a *stage pipeline*: no WAR dependence, and every consumer's read region is covered by what
  its producers write (at the loop nest they share);
- a *complete* block: only spatial iters, the only writer of its outputs (dominant), and no
  buffer both read and written;
- a *reduction* block: an init, affine bindings, only spatial and reduction iters, dominant,
  and no reduction iter indexing what it writes;
- an *affine binding*: the block's iter values are a split/fuse of the loops around it inside
  the scope (see affine.py).

The `check_*` functions raise ScheduleError naming the primitive and block (`what`) and the
condition that failed.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
...     B = T.alloc_buffer((8,), "float32")
...     for i in range(8):
...         with T.block("B"):
...             vi = T.axis.spatial(8, i)
...             B[vi] = A[vi] * 2.0
...     for i in range(8):
...         with T.block("C"):
...             vi = T.axis.spatial(8, i)
...             C[vi] = B[vi] + 1.0
... ''')
>>> from graphc.tir.schedule.state import find_block_path
>>> path = find_block_path(f.body, "B")
>>> complete_violation(path) is None, stage_pipeline_violation(f, path[-2]) is None
(True, True)
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import uses_any_var
from ..expr import IntImm, Range, const
from ..functor import StmtExprVisitor, substitute
from ..stmt import Block, BlockRealize, BufferStore, For, IterType
from .affine import IterMapper, NotAffine, is_affine_binding, without_unit_loops
from .blocks import access
from .bounds import relax_all_in, shape_analyzer
from .state import enclosing_block, find_path, scope_realizes, walk

RAW, WAW, WAR = "RAW", "WAW", "WAR"


def scope_block(path: list) -> Block:
    """The block whose scope the last statement of `path` is in."""
    return enclosing_block(path)


def dependences(scope: Block) -> list:
    """(src realize, dst realize, kind, buffer) for the child blocks of `scope`, in program order
    (TVM's BlockScope: a block depends on every earlier writer and reader of what it touches)."""
    readers: dict = {}
    writers: dict = {}
    deps = []
    for r in scope_realizes(scope):
        reads, writes = access(r.block)
        rbufs = _unique(x.buffer for x in reads)
        wbufs = _unique(x.buffer for x in writes)
        for b in rbufs:
            readers.setdefault(b, []).append(r)
        for b in wbufs:
            writers.setdefault(b, []).append(r)
        for b in rbufs:
            deps.extend((w, r, RAW, b) for w in writers.get(b, ()) if w is not r)
        for b in wbufs:
            deps.extend((w, r, WAW, b) for w in writers.get(b, ()) if w is not r)
            deps.extend((x, r, WAR, b) for x in readers.get(b, ()) if x is not r)
    return deps


def _unique(items) -> list:
    out: list = []
    for x in items:
        if not any(x is y for y in out):
            out.append(x)
    return out


def writers_of(scope: Block, buffer) -> list:
    """The child realizes of `scope` that write `buffer`."""
    return [r for r in scope_realizes(scope) if any(w.buffer is buffer for w in access(r.block)[1])]


# -- block kinds ----------------------------------------------------------------------------


def _dominant_violation(scope: Block, block: Block) -> str | None:
    for w in access(block)[1]:
        others = [r.block.name_hint for r in writers_of(scope, w.buffer) if r.block is not block]
        if others:
            return (
                f"{w.buffer.name} is also written by block {others[0]!r} (the block is not its only writer)"
            )
    return None


def complete_violation(path: list) -> str | None:
    """Why the block at the end of `path` is not a complete block of its scope, or None."""
    block = path[-1].block
    for iv in block.iter_vars:
        if iv.iter_type != IterType.DATA_PAR:
            return f"its iter var {iv.var.name} is not spatial"
    dom = _dominant_violation(enclosing_block(path), block)
    if dom:
        return dom
    reads, writes = access(block)
    written = {id(w.buffer) for w in writes}
    both = [r.buffer.name for r in reads if id(r.buffer) in written]
    if both:
        return f"it both reads and writes {both[0]}"
    return None


def reduction_violation(func, path: list, dominant: bool = True) -> str | None:
    """Why the block at the end of `path` is not a reduction block of its scope, or None.
    `dominant=False` skips the only-writer condition."""
    realize = path[-1]
    block = realize.block
    if block.init is None:
        return "it has no init (T.init())"
    if not binding_is_affine(func, path):
        return "its iter bindings are not affine in the loops around it"
    for iv in block.iter_vars:
        if iv.iter_type not in (IterType.DATA_PAR, IterType.COMM_REDUCE):
            return f"its iter var {iv.var.name} is neither spatial nor a reduction"
    dom = _dominant_violation(enclosing_block(path), block) if dominant else None
    if dom:
        return dom
    reduce_vars = {iv.var for iv in block.iter_vars if iv.iter_type == IterType.COMM_REDUCE}
    written = {id(w.buffer) for w in access(block)[1]}
    for stmt in (block.body, block.init):
        for store in _stores(stmt):
            if id(store.buffer) in written and any(uses_any_var(i, reduce_vars) for i in store.indices):
                return f"a reduction iter indexes its output {store.buffer.name}"
    return None


def _stores(stmt) -> list:
    out: list = []

    class _V(StmtExprVisitor):
        def visit_BufferStore(self, op):
            out.append(op)
            super().visit_BufferStore(op)

    _V().visit_stmt(stmt)
    return [s for s in out if isinstance(s, BufferStore)]


def check_complete_or_reduction(func, path: list, what: str) -> None:
    complete = complete_violation(path)
    if complete is None:
        return
    reduction = reduction_violation(func, path)
    if reduction is None:
        return
    name = path[-1].block.name_hint
    raise ScheduleError(
        f"cannot {what}: block {name!r} is neither a complete block ({complete}) nor a reduction block "
        f"({reduction})"
    )


def check_complete(path: list, what: str) -> None:
    why = complete_violation(path)
    if why is not None:
        raise ScheduleError(
            f"cannot {what}: block {path[-1].block.name_hint!r} is not a complete block: {why}"
        )


def check_reduction(func, path: list, what: str, dominant: bool = True) -> None:
    why = reduction_violation(func, path, dominant)
    if why is not None:
        raise ScheduleError(
            f"cannot {what}: block {path[-1].block.name_hint!r} is not a reduction block: {why}"
        )


def is_output_block(path: list) -> bool:
    """Whether the block writes a buffer its scope block does not allocate (TVM's output block)."""
    scope = enclosing_block(path)
    allocated = {id(b) for b in scope.alloc_buffers}
    return any(id(w.buffer) not in allocated for w in access(path[-1].block)[1])


# -- bindings -------------------------------------------------------------------------------


def loops_dom(path: list) -> dict:
    """Var -> Range of the loops between the block at the end of `path` and its scope block."""
    dom: dict = {}
    for stmt in reversed(path[:-1]):
        if isinstance(stmt, Block):
            break
        if isinstance(stmt, For):
            dom[stmt.loop_var] = Range(stmt.min, stmt.extent)
    return dom


def binding_is_affine(func, path: list, use_predicate: bool = True) -> bool:
    """TVM's affine-binding flag of the block at the end of `path`. Without `use_predicate`, the
    bindings are judged over all the loops' iterations: a predicate only removes instances, so
    distinct iterations still reach distinct instances (what parallel loops need)."""
    realize = path[-1]
    if not realize.iter_values:
        return True
    dom = loops_dom(path)
    ana = shape_analyzer(func, dom)
    predicate = realize.predicate if use_predicate else None
    return is_affine_binding(list(realize.iter_values), dom, predicate, ana)


def check_affine_binding(func, path: list, what: str) -> None:
    if not binding_is_affine(func, path):
        realize = path[-1]
        shown = ", ".join(f"{iv.var.name}={v}" for iv, v in zip(realize.block.iter_vars, realize.iter_values))
        raise ScheduleError(
            f"cannot {what}: block {realize.block.name_hint!r} needs an affine binding (each iter value a "
            f"split or fuse of its loops), but it binds {shown}"
        )


# -- stage pipeline -------------------------------------------------------------------------


def stage_pipeline_violation(func, scope: Block) -> str | None:
    """Why `scope` is not a stage pipeline, or None. (TVM's dependences are per buffer; we drop
    a write after read, or a producer from a consumer's region cover, when the two blocks
    provably touch disjoint parts of the buffer, as the parts of a partitioned reduction do.)"""
    deps = dependences(scope)
    ana = shape_analyzer(func)
    for src, dst, kind, buf in deps:
        if kind == WAR and not _disjoint_access(ana, scope, src, dst, buf):
            return (
                f"block {dst.block.name_hint!r} writes {buf.name} after block {src.block.name_hint!r} reads "
                f"it (a write-after-read dependence)"
            )
    consumers: dict = {}
    for src, dst, kind, buf in deps:
        if kind == RAW and not _disjoint_access(ana, scope, dst, src, buf):
            consumers.setdefault(id(dst), (dst, []))[1].append((src, buf))
    for dst, pairs in consumers.values():
        why = _region_cover_violation(func, scope, dst, pairs)
        if why:
            return why
    return None


def _disjoint_access(ana, scope: Block, reader: BlockRealize, writer: BlockRealize, buf) -> bool:
    """Whether what `reader` reads of `buf` and what `writer` writes of it, over all the loops
    of `scope`, are provably disjoint."""
    rpath = find_path(scope, lambda s: s is reader)
    wpath = find_path(scope, lambda s: s is writer)
    read = _consumed_box(ana, rpath, 0, buf)
    written = _consumed_box(ana, wpath, 0, buf, writes=True)
    if read is None or written is None:
        return False
    for (rlo, rhi), (wlo, whi) in zip(read, written):
        if (rhi is not None and ana.can_prove(rhi < wlo)) or (whi is not None and ana.can_prove(whi < rlo)):
            return True
    return False


# Root blocks known to be stage pipelines without a check: what compute_inline made of a
# root block that passed it (inlining a producer into its consumers keeps a stage pipeline
# one, TVM's premise too). id -> the block, held so that the id stays its own; the newest kept.
_KNOWN_PIPELINES: dict = {}
_KNOWN_LIMIT = 64
# The verdicts of checked scopes (blocks are immutable; the check reads the scope and the
# shapes of the function's buffers): ids of (the scope, the function's body, its parameter
# buffers) -> (those objects, why or None), the objects held so that the ids stay theirs. The rules try
# the same function again and again (each on a fresh Schedule of the unchanged function;
# `try_inline` retries its blocks in a scope that refused), and each check costs bounds of
# every dependence's regions.
_VERDICTS: dict = {}
_VERDICT_LIMIT = 256


# The verdicts by structure: (digest of the function, the scope's name) -> why or None. A tuner
# schedules the same kernel hundreds of times with other decisions; candidates that share the
# decisions before a check (a mutant and its parent) reach it with equal functions, each a
# fresh object (the check costs ~10 ms on a tiled 1024 matmul, the digest ~0.4 ms).
_STRUCTURAL_VERDICTS: dict = {}


def _structural_verdict(func, scope: Block) -> str | None:
    from ...ir.structural import structural_digest

    key = (structural_digest(func), scope.name_hint)
    if key in _STRUCTURAL_VERDICTS:
        return _STRUCTURAL_VERDICTS[key]
    why = stage_pipeline_violation(func, scope)
    _remember(_STRUCTURAL_VERDICTS, key, why, 4 * _VERDICT_LIMIT)
    return why


def root_block(func) -> Block | None:
    return func.body.block if isinstance(func.body, BlockRealize) else None


def _remember(table: dict, key, value, limit: int) -> None:
    table[key] = value
    while len(table) > limit:
        try:  # another thread may be changing the table: dropping the oldest is best effort
            table.pop(next(iter(table)), None)
        except (RuntimeError, StopIteration):
            break


def mark_stage_pipeline(block: Block | None) -> None:
    """Record that `block` (a root block compute_inline just made) is a stage pipeline."""
    if block is None:
        return
    _remember(_KNOWN_PIPELINES, id(block), block, _KNOWN_LIMIT)


def check_stage_pipeline(func, path: list, what: str) -> Block:
    """The scope block of the block at the end of `path`; raises unless it is a stage pipeline."""
    scope = enclosing_block(path)
    if _KNOWN_PIPELINES.get(id(scope)) is scope:
        return scope
    held = (scope, func.body, *func.buffer_map.values())
    key = tuple(map(id, held))
    seen = _VERDICTS.get(key)
    if seen is not None and len(seen[0]) == len(held) and all(a is b for a, b in zip(seen[0], held)):
        why = seen[1]
    else:
        why = _structural_verdict(func, scope)
        _remember(_VERDICTS, key, (held, why), _VERDICT_LIMIT)
    if why is not None:
        raise ScheduleError(
            f"cannot {what}: the scope block {scope.name_hint!r} is not a stage pipeline: {why}"
        )
    return scope


def _region_cover_violation(func, scope: Block, consumer: BlockRealize, pairs: list) -> str | None:
    """Whether what the producers write covers what `consumer` reads, at their common loops."""
    cpath = find_path(scope, lambda s: s is consumer)
    by_lca: dict = {}
    for producer, buf in pairs:
        ppath = find_path(scope, lambda s, p=producer: s is p)
        k = 0
        while k < min(len(ppath), len(cpath)) and ppath[k] is cpath[k]:
            k += 1
        by_lca.setdefault(k, []).append((ppath, buf))
    ana = shape_analyzer(func)
    for k, items in by_lca.items():
        outer = {s.loop_var: Range(s.min, s.extent) for s in cpath[:k] if isinstance(s, For)}
        for var, rng in outer.items():
            ana.bind(var, rng, allow_override=True)
        for buf in _unique(b for _, b in items):
            boxes = []
            for ppath, b in items:
                if b is not buf:
                    continue
                box = _produced_box(ana, ppath, k, buf)
                if box is not None:
                    boxes.append(box)
            consumed = _consumed_box(ana, cpath, k, buf)
            if consumed is None:
                continue
            if not any(_covers(ana, box, consumed, buf) for box in _merge_boxes(ana, boxes)):
                names = ", ".join(repr(p[-1].block.name_hint) for p, b in items if b is buf)
                return (
                    f"what block(s) {names} write of {buf.name} does not provably cover what block "
                    f"{consumer.block.name_hint!r} reads (region cover)"
                )
    return None


def _bindings(realize: BlockRealize) -> dict:
    return {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}


def _inner_dom(path: list, k: int) -> dict:
    return {s.loop_var: Range(s.min, s.extent) for s in path[k:-1] if isinstance(s, For)}


def _produced_box(ana, ppath: list, k: int, buf, reads: bool = False):
    """Per dimension (lo, hi) that the producer certainly writes (or, with `reads`, the block
    certainly reads) while the loops below the common ancestor run (a lower bound), or None
    when it cannot tell."""
    realize = ppath[-1]
    vmap = _bindings(realize)
    dom = _inner_dom(ppath, k)
    regions = [r for r in access(realize.block)[0 if reads else 1] if r.buffer is buf]
    if not regions:
        return None
    region = regions[0]
    mins = [substitute(r.min, vmap) for r in region.region]
    mins, dom, predicate = without_unit_loops(mins, dom, realize.predicate)
    sums = None
    # the whole predicate, else each of its conjuncts (the detector takes one bound of a fused
    # sum), else none; what a dropped conjunct leaves out is clipped below for each point
    candidates = [predicate, *(_conjuncts(predicate) if predicate is not None else []), None]
    for pred in candidates if dom else (None,):
        try:
            mapper = IterMapper(dom, ana, pred)
            sums = [mapper.fuse(mapper.to_sum(m)) for m in mins]
            mapper.check_no_overlap(sums)
            break
        except NotAffine:
            sums = None
    if sums is None:
        return None
    dims = []
    for s, r, index in zip(sums, region.region, mins):
        if not s.splits:
            lo, hi = s.base, ana.simplify(s.base + r.extent - 1)
        else:
            sp = s.splits[0]
            step = abs(sp.scale.value) if isinstance(sp.scale, IntImm) else None
            dense = step is not None and (
                step == 1 or (isinstance(r.extent, IntImm) and r.extent.value >= step)
            )
            if not dense:
                return None
            span = sp.scale * (sp.extent - 1)  # negative for a reversed index (9 - i)
            if sp.scale.value > 0:
                lo, hi = s.base, ana.simplify(s.base + span + r.extent - 1)
            else:
                lo, hi = ana.simplify(s.base + span), ana.simplify(s.base + r.extent - 1)
        point = isinstance(r.extent, IntImm) and r.extent.value == 1
        dims.append(_clip_by_predicate(ana, predicate, index, lo, hi) if point else (lo, hi))
    return dims


def _clip_by_predicate(ana, predicate, index, lo, hi):
    """(lo, hi) narrowed by the conjuncts of `predicate` that bound `index` plus a constant."""
    from ..analysis.block_access import affine_difference
    from ..expr import GE, LT, max_value_of, min_value_of

    def difference(a, b):
        d = affine_difference(a, b)
        if d is None:
            diff = ana.simplify(a - b)
            d = diff.value if isinstance(diff, IntImm) else None
        return d

    for cond in _conjuncts(predicate):
        if isinstance(cond, LT):
            d = difference(index, cond.a)
            if d is not None and hi is not None:
                hi = ana.simplify(min_value_of(hi, cond.b + d - 1))
        elif isinstance(cond, GE):
            d = difference(index, cond.a)
            if d is not None:
                lo = ana.simplify(max_value_of(lo, cond.b + d))
    return lo, hi


def _conjuncts(expr) -> list:
    from ..expr import And

    if isinstance(expr, And):
        return _conjuncts(expr.a) + _conjuncts(expr.b)
    return [expr]


def _consumed_box(ana, cpath: list, k: int, buf, writes: bool = False):
    """Per dimension (lo, hi) the consumer may read (or, with `writes`, the block may write) while
    the loops below the common ancestor run (an upper bound), or None when it touches nothing
    of `buf` through a declared region."""
    realize = cpath[-1]
    vmap = _bindings(realize)
    dom = _inner_dom(cpath, k)
    box = None
    for region in access(realize.block)[1 if writes else 0]:
        if region.buffer is not buf:
            continue
        dims = []
        indices = [substitute(r.min, vmap) for r in region.region]
        ends = [substitute(r.min + r.extent - 1, vmap) for r in region.region]
        relaxed = relax_all_in(ana, indices + ends, dom)  # the loops bound once for every end
        for r, index, lo, hi in zip(region.region, indices, relaxed, relaxed[len(indices):]):
            if lo is None or hi is None:
                dims.append((const(0, r.min.dtype), None))
            else:
                point = isinstance(r.extent, IntImm) and r.extent.value == 1
                dims.append(_clip_by_predicate(ana, realize.predicate, index, lo[0], hi[1]) if point
                            else (lo[0], hi[1]))  # fmt: skip
        box = dims if box is None else [_hull(ana, a, b) for a, b in zip(box, dims)]
    return box


def _hull(ana, a, b):
    lo = a[0] if ana.can_prove(a[0] <= b[0]) else b[0] if ana.can_prove(b[0] <= a[0]) else None
    if a[1] is None or b[1] is None:
        return (lo if lo is not None else a[0], None)
    hi = a[1] if ana.can_prove(a[1] >= b[1]) else b[1] if ana.can_prove(b[1] >= a[1]) else None
    return (lo if lo is not None else a[0], hi)


def _merge_boxes(ana, boxes: list) -> list:
    """`boxes` with pairs that differ in one contiguous dimension merged, until none do."""
    boxes = list(boxes)
    changed = True
    while changed and len(boxes) > 1:
        changed = False
        for a in range(len(boxes)):
            for b in range(len(boxes)):
                if a == b:
                    continue
                merged = _merge_two(ana, boxes[a], boxes[b])
                if merged is not None:
                    boxes = [x for k, x in enumerate(boxes) if k not in (a, b)] + [merged]
                    changed = True
                    break
            if changed:
                break
    return boxes


def _merge_two(ana, x, y):
    diff = [
        d
        for d, (p, q) in enumerate(zip(x, y))
        if not (ana.can_prove(p[0] == q[0]) and ana.can_prove(p[1] == q[1]))
    ]
    if len(diff) != 1:
        return None
    d = diff[0]
    (a_lo, a_hi), (b_lo, b_hi) = x[d], y[d]
    if ana.can_prove(b_lo <= a_hi + 1) and ana.can_prove(a_lo <= b_lo):
        hi = b_hi if ana.can_prove(b_hi >= a_hi) else a_hi
        return x[:d] + [(a_lo, hi)] + x[d + 1 :]
    return None


def _covers(ana, produced, consumed, buf) -> bool:
    for (plo, phi), (clo, chi), extent in zip(produced, consumed, buf.shape):
        top = extent - 1
        clo_c = clo if not ana.can_prove(clo < 0) else const(0, clo.dtype)
        chi_c = top if chi is None or ana.can_prove(chi > top) else chi
        plo_c = plo if not ana.can_prove(plo < 0) else const(0, plo.dtype)
        phi_c = top if ana.can_prove(phi >= top) else phi
        # a producer that writes from the buffer's first to its last element covers every read
        # (reads stay inside the buffer), even where the bounds are not comparable symbolically
        lower = ana.can_prove(plo <= 0) or ana.can_prove(plo_c <= clo_c)
        upper = ana.can_prove(phi >= top) or ana.can_prove(chi_c <= phi_c)
        if not (lower and upper):
            return False
    return True


def output_covered(func, path: list, consumers: list) -> bool:
    """Whether the consumers (realizes of the same scope) certainly read every element the block
    at the end of `path` writes to a buffer its scope does not allocate: then computing only
    what they read still writes the whole output."""
    scope = enclosing_block(path)
    allocated = {id(b) for b in scope.alloc_buffers}
    ana = shape_analyzer(func)
    realize = path[-1]
    for w in access(realize.block)[1]:
        if id(w.buffer) in allocated:
            continue
        written = _consumed_box(ana, path, len(path) - 1 - _depth_in_scope(path), w.buffer, writes=True)
        boxes = []
        for c in consumers:
            cpath = find_path(scope, lambda s, r=c: s is r)
            box = _produced_box(ana, cpath, 1, w.buffer, reads=True)
            if box is not None:
                boxes.append(box)
        if written is None or not any(_covers(ana, b, written, w.buffer) for b in _merge_boxes(ana, boxes)):
            return False
    return True


def _depth_in_scope(path: list) -> int:
    """How many statements of `path` (before its last) lie below its scope block."""
    n = 0
    for stmt in reversed(path[:-1]):
        if isinstance(stmt, Block):
            break
        n += 1
    return n


def loop_above(path: list):
    """The innermost For on `path` above its last statement, or None."""
    for stmt in reversed(path[:-1]):
        if isinstance(stmt, For):
            return stmt
        if isinstance(stmt, Block):
            return None
    return None


def all_blocks(root) -> list:
    return [s for s in walk(root) if isinstance(s, BlockRealize)]


__all__ = [
    "dependences",
    "writers_of",
    "complete_violation",
    "reduction_violation",
    "check_complete_or_reduction",
    "check_complete",
    "check_reduction",
    "is_output_block",
    "binding_is_affine",
    "check_affine_binding",
    "stage_pipeline_violation",
    "check_stage_pipeline",
    "scope_block",
]
