"""decompose_reduction: move a reduction block's `init` into a block of its own.

`decompose_reduction(C, loop)` places a new block `C_init` (the init statement, over the
block's spatial iters only) right before `loop`, inside copies of the loops between `loop`
and C that drive spatial iters; C loses its init and is renamed `C_update`.
"""

from __future__ import annotations

import itertools

from ...errors import ScheduleError, TIRError
from ..analysis.block_access import get_block_access_region, get_block_read_write_region
from ..analysis.var_use import uses_var
from ..expr import IntImm, Range, Var, convert
from ..functor import substitute
from ..stmt import Block, BlockRealize, For, ForKind, IterType, IterVar, SeqStmt
from .blocks import read_buffers, write_buffers
from .state import enclosing_block, find_block_path, is_one, loops_above, replace_stmts, walk


def _check_init_reached(func, block, realize, loops, what: str) -> None:
    """The init runs where every reduce iter is at its minimum; a separate init block runs for every
    spatial point, which is the same only if the loops bring every spatial point to those minima,
    all at once and before its first update (not, e.g., in the second part of a partitioned
    reduction loop, or of a partitioned loop that fuses a spatial and a reduce loop)."""
    from .bounds import relax_in, shape_analyzer

    dom = {lp.loop_var: Range(lp.min, lp.extent) for lp in loops}
    ana = shape_analyzer(func, dom)
    pairs = list(zip(block.iter_vars, realize.iter_values))
    reduce_ = [(iv, v) for iv, v in pairs if iv.iter_type != IterType.DATA_PAR]
    for iv, v in reduce_:
        rng = relax_in(ana, v, dom)
        if rng is None or not ana.can_prove(rng[0] <= iv.dom.min):
            raise ScheduleError(
                f"cannot {what}: the loops never bring reduce iter {iv.var.name} to its minimum "
                f"{iv.dom.min}, so the block never runs its init; a separate init block would reset "
                f"results computed elsewhere"
            )
    drivers = [lp for lp in loops if any(uses_var(v, lp.loop_var) for _, v in reduce_)]
    shared = [lp for lp in drivers
              if any(uses_var(v, lp.loop_var) for iv, v in pairs if iv.iter_type == IterType.DATA_PAR)]
    if shared:  # a fused spatial-and-reduce loop: only visiting the points can tell
        reached = _first_visits_at_minimum(loops, realize, block.iter_vars, reduce_)
    else:  # the reduce loops' first iteration, the same for every spatial point, must be the minima
        from .blockize import _conjuncts

        first: dict = {}
        for lp in drivers:
            first[lp.loop_var] = substitute(lp.min, first)
        conds = [convert(substitute(v, first) == iv.dom.min) for iv, v in reduce_]
        conds += [substitute(c, first) for c in _conjuncts(realize.predicate)
                  if any(uses_var(c, lp.loop_var) for lp in drivers)]
        reached = True if all(ana.can_prove(c) for c in conds) else None
    if not reached:
        claim = "some spatial point does not reach" if reached is False else \
            "cannot show that every spatial point reaches"
        raise ScheduleError(
            f"cannot {what}: {claim} the reduce iters' minima (where the block runs its init) first "
            f"under loops {', '.join(lp.loop_var.name for lp in shared or drivers)}; a separate init "
            f"block would reset results computed elsewhere"
        )


_ENUMERATION_LIMIT = 1 << 14


def _first_visits_at_minimum(loops, realize, iter_vars, reduce_) -> bool | None:
    """Whether, in loop order, each spatial point's first visit has every reduce iter at its minimum;
    None when the loops the bindings use are not constant or too many to enumerate."""
    from ..arith.evaluate import evaluate

    values = list(realize.iter_values) + [realize.predicate]
    used = [lp for lp in loops if any(uses_var(v, lp.loop_var) for v in values)]
    ranges, count = [], 1
    for lp in used:
        if not (isinstance(lp.min, IntImm) and isinstance(lp.extent, IntImm)):
            return None
        ranges.append(range(lp.min.value, lp.min.value + lp.extent.value))
        count *= max(lp.extent.value, 0)
    if count > _ENUMERATION_LIMIT:
        return None
    if not all(isinstance(iv.dom.min, IntImm) for iv, _ in reduce_):
        return None
    minima = tuple(iv.dom.min.value for iv, _ in reduce_)
    is_reduce = [any(iv is r for r, _ in reduce_) for iv in iter_vars]
    seen: set = set()
    for point in itertools.product(*ranges):
        env = {lp.loop_var: x for lp, x in zip(used, point)}
        try:
            if not evaluate(realize.predicate, env):
                continue
            bound = [evaluate(v, env) for v in realize.iter_values]
        except (KeyError, TIRError):  # a variable other than these loops: not enumerable
            return None
        key = tuple(b for r, b in zip(is_reduce, bound) if not r)
        if key not in seen:
            seen.add(key)
            if tuple(b for r, b in zip(is_reduce, bound) if r) != minima:
                return False
    return True


def decompose_reduction(func, func_name: str, name: str, loop_var: Var):
    """Returns (new_func, (init block name, update block name))."""
    path = find_block_path(func.body, name)
    realize: BlockRealize = path[-1]
    block = realize.block
    what = f"decompose_reduction of block {name!r} at loop {loop_var.name}"
    if block.init is None:
        raise ScheduleError(f"cannot {what}: the block has no init (it is not a reduction block)")
    for new_name in (f"{name}_init", f"{name}_update"):
        if find_block_path(func.body, new_name) is not None:
            raise ScheduleError(f"cannot {what}: a block named {new_name!r} already exists")
    loops = loops_above(path)
    pos = next((k for k, lp in enumerate(loops) if lp.loop_var is loop_var), None)
    if pos is None:
        raise ScheduleError(f"cannot {what}: the loop is not one of the loops around the block")
    reduce_values = [
        v for iv, v in zip(block.iter_vars, realize.iter_values) if iv.iter_type != IterType.DATA_PAR
    ]
    for lp in loops[:pos]:
        if any(uses_var(v, lp.loop_var) for v in reduce_values):
            raise ScheduleError(
                f"cannot {what}: loop {lp.loop_var.name} above it drives a reduce iter; the init must go "
                f"above every loop related to the reduction (decompose at {lp.loop_var.name} or higher)"
            )
    _check_init_reached(func, block, realize, loops, what)
    from .scope import check_reduction

    # graphc's loop_partition leaves the parts of a reduction as sibling writers of one buffer (TVM
    # wraps each in a block of its own), so the only-writer condition is not asked here
    check_reduction(func, path, what, dominant=False)
    for lp, nxt in zip(loops[pos:], loops[pos + 1 :] + [realize]):
        if lp.body is not nxt:
            raise ScheduleError(
                f"cannot {what}: loop {lp.loop_var.name} holds other statements besides the block's nest"
            )
    spatial = [
        (iv, v) for iv, v in zip(block.iter_vars, realize.iter_values) if iv.iter_type == IterType.DATA_PAR
    ]
    copies = {}
    kept = []
    for lp in loops[pos:]:
        if any(uses_var(v, lp.loop_var) for _, v in spatial):
            new_var = Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype)
            copies[lp.loop_var] = new_var
            kept.append(lp)
    inner_vars = {lp.loop_var for lp in loops[pos:]}
    for iv, v in spatial:
        if any(uses_var(v, x) for x in inner_vars - set(copies)):
            raise ScheduleError(f"cannot {what}: spatial iter {iv.var.name} depends on a reduce-only loop")
    new_ivs = [IterVar(iv.dom, Var(iv.var.name, iv.var.dtype), IterType.DATA_PAR) for iv, _ in spatial]
    vmap = {iv.var: new.var for (iv, _), new in zip(spatial, new_ivs)}
    init_body = substitute(block.init, vmap)
    init_block = Block(tuple(new_ivs), (), (), f"{name}_init", init_body, annotations=dict(block.annotations))
    reads, writes = get_block_read_write_region(init_block)
    init_block = init_block.replace(reads=reads, writes=writes)
    values = tuple(substitute(v, copies) for _, v in spatial)
    predicate = _init_predicate(realize.predicate, copies, inner_vars - set(copies), what)
    stmt = BlockRealize(values, predicate, init_block)
    for lp in reversed(kept):
        extent = substitute(lp.extent, copies)
        thread = lp.thread_binding
        if thread is not None:  # the init loop gets its own thread variable
            thread = thread.replace(var=Var(thread.var.name, thread.var.dtype))
        stmt = For(copies[lp.loop_var], lp.min, extent, lp.kind, stmt, thread)
    update = block.replace(init=None, name_hint=f"{name}_update")
    if block.reads or block.writes:  # TVM's order: what it writes (and did not read) first
        read_bufs = {id(r.buffer) for r in block.reads}
        reads = tuple(w for w in block.writes if id(w.buffer) not in read_bufs) + tuple(block.reads)
    else:
        reads, _ = get_block_access_region(update)
    update = update.replace(reads=reads)
    target = loops[pos]
    new_target = replace_stmts(target, {block: update})
    body = replace_stmts(func.body, {target: SeqStmt((stmt, new_target))})
    return func.with_body(body), (init_block.name_hint, update.name_hint)


def _conjuncts(expr) -> list:
    from ..expr import And

    return _conjuncts(expr.a) + _conjuncts(expr.b) if isinstance(expr, And) else [expr]


def _init_predicate(predicate, copies: dict, reduce_only: set, what: str):
    """The update's predicate for the init block: guards on reduce-only loops are dropped."""
    from ..expr import const, logical_and

    kept = []
    for cond in _conjuncts(predicate):
        if not any(uses_var(cond, v) for v in reduce_only):
            kept.append(substitute(cond, copies))
        elif any(uses_var(cond, v) for v in copies):
            raise ScheduleError(f"cannot {what}: the block's predicate mixes spatial and reduction loops")
    out = kept[0] if kept else const(True)
    for cond in kept[1:]:
        out = logical_and(out, cond)
    return out


def _check_rfactor_loops(loops: list, realize, spatial: list, reduce_: list, what: str) -> None:
    """TVM's loop conditions for rfactor: no loop drives both spatial and reduction iters, the
    block is the first block under the outermost loop, the outermost reduction loop holds only
    this block, and no loop under a reduction loop that no iter uses runs more than once."""
    from .state import scope_realizes

    first = scope_realizes(loops[0])
    if not first or first[0] is not realize:
        raise ScheduleError(
            f"cannot {what}: block {realize.block.name_hint!r} is not the first block under the outermost "
            f"loop {loops[0].loop_var.name}"
        )
    met_reduction = False
    for lp in loops:
        in_spatial = any(uses_var(v, lp.loop_var) for _, v in spatial)
        in_reduce = any(uses_var(v, lp.loop_var) for _, v in reduce_)
        if in_spatial and in_reduce:
            raise ScheduleError(
                f"cannot {what}: loop {lp.loop_var.name} drives both spatial and reduce iters"
            )
        if in_reduce and not met_reduction:
            met_reduction = True
            if len(scope_realizes(lp)) != 1:
                raise ScheduleError(
                    f"cannot {what}: the outermost reduction loop {lp.loop_var.name} must contain only the "
                    f"reduction block"
                )
        elif not in_spatial and not in_reduce and met_reduction and not is_one(lp.extent):
            raise ScheduleError(
                f"cannot {what}: loop {lp.loop_var.name} under a reduction loop runs {lp.extent} times but "
                f"no block iter uses it"
            )


def _identity_ok(kind, init) -> bool:
    """Whether `init` is the identity of the reducer `kind` (TVM's reducer patterns)."""
    import math

    from ..expr import Add, FloatImm, Max, Min, Mul
    from ..op import max_value, min_value

    if not isinstance(init, IntImm | FloatImm):
        return False
    v = init.value
    if kind is Add:
        return v == 0
    if kind is Mul:
        return v == 1
    if kind is Max:
        return v == min_value(init.dtype).value or (isinstance(v, float) and math.isinf(v) and v < 0)
    if kind is Min:
        return v == max_value(init.dtype).value or (isinstance(v, float) and math.isinf(v) and v > 0)
    return False


def _combiner(block: Block, what: str):
    """(buffer, indices, combine, operand) of `B[idx] = combine(B[idx], operand)`."""
    from ..expr import Add, BufferLoad, Max, Min, Mul
    from ..stmt import BufferStore

    store = block.body
    if not isinstance(store, BufferStore) or not isinstance(block.init, BufferStore):
        raise ScheduleError(f"cannot {what}: the block must be `B[...] = B[...] <op> value` with a T.init()")
    value = store.value
    if type(value) not in (Add, Mul, Max, Min):
        raise ScheduleError(f"cannot {what}: the update must combine with +, *, max or min")

    def is_self(e):
        return (
            isinstance(e, BufferLoad) and e.buffer is store.buffer and _same_indices(e.indices, store.indices)
        )

    if is_self(value.a):
        operand = value.b
    elif is_self(value.b):
        operand = value.a
    else:
        raise ScheduleError(
            f"cannot {what}: the update does not read {store.buffer.name} at the stored indices"
        )
    init = block.init
    if init.buffer is not store.buffer or not _same_indices(init.indices, store.indices):
        raise ScheduleError(
            f"cannot {what}: the init does not write {store.buffer.name} where the update does"
        )
    if not _identity_ok(type(value), init.value):
        op = {"Add": "+", "Mul": "*", "Max": "max", "Min": "min"}[type(value).__name__]
        raise ScheduleError(
            f"cannot {what}: the reduction is not a recognised commutative reducer: the init value "
            f"{init.value} is not the identity of {op}"
        )
    if _loads(operand, store.buffer):
        raise ScheduleError(f"cannot {what}: the reduced value reads {store.buffer.name} again")
    return store.buffer, store.indices, type(value), operand


def _loads(expr, buffer) -> list:
    from ..functor import post_order_visit

    found: list = []
    post_order_visit(expr, lambda e: found.append(e) if getattr(e, "buffer", None) is buffer else None)
    return found


def _same_indices(a, b) -> bool:
    from ..analysis.block_access import same_expr

    return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))


def _combine(kind, a, b):
    from ..expr import Max, Min, Mul, max_value_of, min_value_of

    if kind is Max:
        return max_value_of(a, b)
    if kind is Min:
        return min_value_of(a, b)
    return a * b if kind is Mul else a + b


def rfactor(func, func_name: str, name: str, loop_var: Var, factor_axis: int):
    """Factor the reduction over loop `loop_var` into new buffers; returns (new_func, rf block name).

    As TVM places them: the rf block gets a copy of the block's loop nest (keeping the loop
    variables, so loop handles follow the rf block), placed before the nest; the write-back block
    takes the block's place in the nest, under the loops that drive its spatial iters and the rf
    loop (the nest's other loops and blocks stay as they were).
    """
    from ..buffer import decl_buffer
    from ..expr import Range
    from ..stmt import LetStmt
    from .reducer import match_reducer
    from .scope import check_reduction, check_stage_pipeline

    path = find_block_path(func.body, name)
    realize: BlockRealize = path[-1]
    block = realize.block
    what = f"rfactor block {name!r} over loop {loop_var.name}"
    loops = loops_above(path)
    rf_loop = next((lp for lp in loops if lp.loop_var is loop_var), None)
    if rf_loop is None:
        raise ScheduleError(f"cannot {what}: the loop is not one of the loops around the block")
    if rf_loop.kind != ForKind.SERIAL or rf_loop.thread_binding is not None:
        raise ScheduleError(
            f"cannot {what}: the loop must be serial, but it is {rf_loop.kind.value}; rfactor before "
            f"parallelizing, vectorizing, unrolling or binding it"
        )
    red = match_reducer(block, what)
    bufs, indices = red.buffers, red.indices
    spatial = [
        (iv, v) for iv, v in zip(block.iter_vars, realize.iter_values) if iv.iter_type == IterType.DATA_PAR
    ]
    reduce_ = [
        (iv, v) for iv, v in zip(block.iter_vars, realize.iter_values) if iv.iter_type == IterType.COMM_REDUCE
    ]
    if len(spatial) + len(reduce_) != len(block.iter_vars):
        raise ScheduleError(f"cannot {what}: the block has iters that are neither spatial nor reduce")
    if any(uses_var(v, loop_var) for _, v in spatial) or not any(uses_var(v, loop_var) for _, v in reduce_):
        raise ScheduleError(f"cannot {what}: the loop must drive reduce iters only")
    if not (isinstance(rf_loop.min, IntImm) and rf_loop.min.value == 0):
        raise ScheduleError(f"cannot {what}: the loop starts at {rf_loop.min}, rfactor needs a loop from 0")
    _check_init_reached(func, block, realize, loops, what)
    later = _after_in_nest(loops[0], realize)
    for buf in bufs:
        others = [r.block.name_hint for r in walk(func.body) if isinstance(r, BlockRealize)
                  and r is not realize and r.block.name_hint != "root" and id(r) not in later
                  and buf in write_buffers(r.block)]  # fmt: skip
        if others:
            raise ScheduleError(
                f"cannot {what}: {buf.name} is also written by block(s) {', '.join(others)}; the write-back "
                f"block would run after them"
            )
    check_stage_pipeline(func, path, what)
    tails = any(id(r) in later and b in write_buffers(r.block) for r in walk(loops[0]) for b in bufs)
    check_reduction(func, path, what, dominant=not tails)  # a partitioned tail writes it too
    red_loops = [lp for lp in loops if any(uses_var(v, lp.loop_var) for _, v in reduce_)]
    _check_rfactor_loops(loops, realize, spatial, reduce_, what)
    ndim = len(bufs[0].shape)
    if not isinstance(factor_axis, int) or not -(ndim + 1) <= factor_axis <= ndim:
        raise ScheduleError(
            f"cannot {what}: factor_axis {factor_axis} is out of range [{-(ndim + 1)}, {ndim}] for "
            f"{bufs[0].name}"
        )
    factor_axis = factor_axis + ndim + 1 if factor_axis < 0 else factor_axis
    # the rf block now runs, for all points, before anything else in the nest: nothing else there may
    # write what it reads
    block_reads = read_buffers(block)
    clobber = [(r.block.name_hint, b.name) for r in walk(loops[0]) if isinstance(r, BlockRealize)
               and r is not realize for b in write_buffers(r.block) if b in block_reads]  # fmt: skip
    if clobber:
        raise ScheduleError(
            f"cannot {what}: block {clobber[0][0]!r} in the same loop nest writes {clobber[0][1]}, which the "
            f"block reads; the rf block runs before the whole nest and would read it unfinished"
        )
    if find_block_path(func.body, f"{name}_rf") is not None:
        raise ScheduleError(f"cannot {what}: a block named {name + '_rf'!r} already exists")
    between = path[path.index(loops[0]) : -1]
    odd = [s for s in between if not isinstance(s, For | SeqStmt)]
    if odd:
        raise ScheduleError(
            f"cannot {what}: a {type(odd[0]).__name__} stands between the loops; the rf block's copy of the "
            f"loop nest holds loops only"
        )

    # the rfactor block: every loop of the reduction gets its own iter; the rf loop's one is spatial
    loop_ivs = {
        lp.loop_var: IterVar(
            Range(lp.min, lp.extent),
            Var(f"v{lp.loop_var.name}", lp.loop_var.dtype),
            IterType.DATA_PAR if lp is rf_loop else IterType.COMM_REDUCE,
        )
        for lp in red_loops
    }
    to_iv = {lp: iv.var for lp, iv in loop_ivs.items()}
    rvmap = {iv.var: substitute(v, to_iv) for iv, v in reduce_}
    rf_var = loop_ivs[loop_var].var
    rf_bufs = []
    for buf in bufs:
        rf_shape = list(buf.shape)
        rf_shape.insert(factor_axis, rf_loop.extent)
        rf_bufs.append(decl_buffer(tuple(rf_shape), buf.dtype, f"{buf.name}_rf", scope=buf.scope))
    rf_idx = list(indices)
    rf_idx.insert(factor_axis, rf_var)
    operands = [substitute(op, rvmap) for op in red.operands]
    has_reduce = len(red_loops) > 1
    if has_reduce:
        rf_values_new = red.combine([b[tuple(rf_idx)] for b in rf_bufs], operands)
        rf_body = _store_all(rf_bufs, rf_idx, rf_values_new, LetStmt)
        rf_init = _store_all(rf_bufs, rf_idx, red.inits, None)
    else:  # one element per partial result: the identity folded with it is the operand itself
        rf_body, rf_init = _store_all(rf_bufs, rf_idx, operands, None), None
    rf_ivs = (
        [loop_ivs[loop_var]]
        + [iv for iv, _ in spatial]
        + [loop_ivs[lp.loop_var] for lp in red_loops if lp is not rf_loop]
    )
    rf_block = Block(tuple(rf_ivs), (), (), f"{name}_rf", rf_body, rf_init)
    reads, writes = get_block_read_write_region(rf_block)
    reads = _in_order(reads, [r.buffer for r in block.reads])  # the block's own order, as TVM keeps it
    rf_block = rf_block.replace(reads=reads, writes=writes)
    rf_values = [loop_var] + [v for _, v in spatial] + [lp.loop_var for lp in red_loops if lp is not rf_loop]
    rf_stmt = BlockRealize(tuple(rf_values), realize.predicate, rf_block)
    for lp in reversed(loops):  # the rf nest: the nest's loops (their variables) around the rf block only
        rf_stmt = lp.replace(body=rf_stmt)

    # the write-back block: B[idx] = B[idx] <op> B_rf[idx with the rf iter], reducing over the rf iter;
    # the nest it stays in gets new loop variables
    new_loop_vars = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in loops}
    first_red = next(k for k, lp in enumerate(loops) if lp in red_loops)
    wb_loops = [lp for lp in loops[first_red:]
                if lp is rf_loop or any(uses_var(v, lp.loop_var) for _, v in spatial)]  # fmt: skip
    wb_spatial = [IterVar(iv.dom, Var(iv.var.name, iv.var.dtype), IterType.DATA_PAR) for iv, _ in spatial]
    wb_rf = IterVar(
        Range(rf_loop.min, rf_loop.extent), Var(f"v{loop_var.name}", loop_var.dtype), IterType.COMM_REDUCE
    )
    svmap = {iv.var: new.var for (iv, _), new in zip(spatial, wb_spatial)}
    wb_idx = [substitute(i, svmap) for i in indices]
    wb_rf_idx = list(wb_idx)
    wb_rf_idx.insert(factor_axis, wb_rf.var)
    wb_new = red.combine([b[tuple(wb_idx)] for b in bufs], [b[tuple(wb_rf_idx)] for b in rf_bufs])
    wb_body = _store_all(bufs, wb_idx, wb_new, LetStmt)
    wb_init = _store_all(bufs, wb_idx, red.inits, None)
    wb_block = Block(tuple([wb_rf] + wb_spatial), (), (), name, wb_body, wb_init)
    reads, writes = get_block_read_write_region(wb_block)
    wb_block = wb_block.replace(reads=_in_order(reads, rf_bufs), writes=writes)
    # TVM orders the write-back block's iters rf iter first
    wb_values = [new_loop_vars[loop_var]] + [substitute(v, new_loop_vars) for _, v in spatial]
    kept = {lp.loop_var for lp in loops[:first_red] + wb_loops}
    wb_pred = _init_predicate(realize.predicate, new_loop_vars, {lp.loop_var for lp in loops} - kept, what)
    wb_stmt = BlockRealize(tuple(wb_values), wb_pred, wb_block)
    for lp in reversed(wb_loops):
        wb_stmt = lp.replace(body=wb_stmt)
    top = loops[0]
    nest = replace_stmts(top, {loops[first_red]: wb_stmt})
    nest = _rename_loops(nest, new_loop_vars)

    scope = enclosing_block(path)
    scope_body = replace_stmts(scope.body, {top: SeqStmt((rf_stmt, nest))})
    new_scope = scope.replace(body=scope_body, alloc_buffers=scope.alloc_buffers + tuple(rf_bufs))
    return func.with_body(replace_stmts(func.body, {scope: new_scope})), rf_block.name_hint


def _after_in_nest(top, realize) -> set:
    """ids of the blocks after `realize` inside loop `top` (in program order): a reduction's
    `loop_partition` tail. They run after the write-back block too, which takes `realize`'s place."""
    found, seen = set(), False
    for r in walk(top):
        if r is realize:
            seen = True
        elif seen and isinstance(r, BlockRealize):
            found.add(id(r))
    return found


def _in_order(regions, buffers) -> tuple:
    """`regions` sorted (stably) by where their buffer is in `buffers`; others after."""
    rank = {id(b): k for k, b in enumerate(buffers)}
    return tuple(sorted(regions, key=lambda r: rank.get(id(r.buffer), len(rank))))


def _store_all(bufs, idx, values, let_cls):
    """Store values[k] into bufs[k][idx]; with `let_cls` and several buffers, bind the new values
    first (each is computed from the old ones) and store them after, as TVM writes a tuple reducer."""
    if len(bufs) == 1:
        return bufs[0].vstore(list(idx), values[0])
    if let_cls is None:
        return SeqStmt(tuple(b.vstore(list(idx), v) for b, v in zip(bufs, values)))
    let_vars = [Var(f"v_{b.name}", b.dtype) for b in bufs]
    stmt = SeqStmt(tuple(b.vstore(list(idx), v) for b, v in zip(bufs, let_vars)))
    for var, v in reversed(list(zip(let_vars, values))):
        stmt = let_cls(var, v, stmt)
    return stmt


def _rename_loops(stmt, new_vars: dict):
    """`stmt` with the loops of `new_vars` given their new variables (uses substituted throughout)."""
    from ..functor import StmtMutator

    class _Rename(StmtMutator):
        def visit_For(self, op):
            body = self.visit_stmt(op.body)
            var = new_vars.get(op.loop_var, op.loop_var)
            if body is op.body and var is op.loop_var:
                return op
            return op.replace(loop_var=var, body=body)

    return substitute(_Rename().visit_stmt(stmt), new_vars)
