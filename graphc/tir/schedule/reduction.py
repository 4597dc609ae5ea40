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
from ..stmt import Block, BlockRealize, For, IterType, IterVar, SeqStmt
from .blocks import read_buffers, write_buffers
from .state import enclosing_block, find_block_path, loops_above, replace_stmts, walk


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
    init_block = Block(tuple(new_ivs), (), (), f"{name}_init", init_body)
    reads, writes = get_block_read_write_region(init_block)
    init_block = init_block.replace(reads=reads, writes=writes)
    values = tuple(substitute(v, copies) for _, v in spatial)
    predicate = _init_predicate(realize.predicate, copies, inner_vars - set(copies), what)
    stmt = BlockRealize(values, predicate, init_block)
    for lp in reversed(kept):
        extent = substitute(lp.extent, copies)
        stmt = For(
            copies[lp.loop_var], lp.min, extent, lp.kind, stmt, lp.thread_binding, dict(lp.annotations)
        )
    update = block.replace(init=None, name_hint=f"{name}_update")
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
    return store.buffer, store.indices, type(value), operand


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
    """Factor the reduction over loop `loop_var` into a new buffer; returns (new_func, rf block name)."""
    from ..buffer import decl_buffer
    from ..expr import Range

    path = find_block_path(func.body, name)
    realize: BlockRealize = path[-1]
    block = realize.block
    what = f"rfactor block {name!r} over loop {loop_var.name}"
    buf, indices, kind, operand = _combiner(block, what)
    loops = loops_above(path)
    rf_loop = next((lp for lp in loops if lp.loop_var is loop_var), None)
    if rf_loop is None:
        raise ScheduleError(f"cannot {what}: the loop is not one of the loops around the block")
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
    others = [r.block.name_hint for r in walk(func.body) if isinstance(r, BlockRealize) and r is not realize
              and r.block.name_hint != "root" and buf in write_buffers(r.block)]  # fmt: skip
    if others:
        raise ScheduleError(
            f"cannot {what}: {buf.name} is also written by block(s) {', '.join(others)}; the write-back "
            f"block would run after them"
        )
    red_loops = [lp for lp in loops if any(uses_var(v, lp.loop_var) for _, v in reduce_)]
    for lp in red_loops:
        if any(uses_var(v, lp.loop_var) for _, v in spatial):
            raise ScheduleError(
                f"cannot {what}: loop {lp.loop_var.name} drives both spatial and reduce iters"
            )
    if not 0 <= factor_axis <= len(buf.shape):
        raise ScheduleError(f"cannot {what}: factor_axis {factor_axis} is out of range for {buf.name}")
    sharing = [r.block.name_hint for r in walk(loops[0]) if isinstance(r, BlockRealize) and r is not realize
               and buf in read_buffers(r.block)]  # fmt: skip
    if sharing:
        raise ScheduleError(
            f"cannot {what}: block {sharing[0]!r} in the same loop nest reads {buf.name}; the write-back "
            f"block goes after the nest, so it would read unfinished results"
        )
    if find_block_path(func.body, f"{name}_rf") is not None:
        raise ScheduleError(f"cannot {what}: a block named {name + '_rf'!r} already exists")

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
    rf_shape = list(buf.shape)
    rf_shape.insert(factor_axis, rf_loop.extent)
    rf_buf = decl_buffer(tuple(rf_shape), buf.dtype, f"{buf.name}_rf", scope=buf.scope)
    rf_idx = list(indices)
    rf_idx.insert(factor_axis, rf_var)
    rf_load = rf_buf[tuple(rf_idx)]
    rf_body = rf_buf.vstore(rf_idx, _combine(kind, rf_load, substitute(operand, rvmap)))
    rf_init = rf_buf.vstore(rf_idx, block.init.value)
    rf_ivs = (
        [loop_ivs[loop_var]]
        + [iv for iv, _ in spatial]
        + [loop_ivs[lp.loop_var] for lp in red_loops if lp is not rf_loop]
    )
    rf_block = Block(tuple(rf_ivs), (), (), f"{name}_rf", rf_body, rf_init)
    reads, writes = get_block_read_write_region(rf_block)
    rf_block = rf_block.replace(reads=reads, writes=writes)
    rf_values = [loop_var] + [v for _, v in spatial] + [lp.loop_var for lp in red_loops if lp is not rf_loop]
    rf_realize = BlockRealize(tuple(rf_values), realize.predicate, rf_block)

    # the write-back block: B[idx] = B[idx] <op> B_rf[idx with the rf iter], reducing over the rf iter
    wb_loops = [lp for lp in loops if lp is rf_loop or any(uses_var(v, lp.loop_var) for _, v in spatial)]
    new_loop_vars = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in wb_loops}
    wb_spatial = [IterVar(iv.dom, Var(iv.var.name, iv.var.dtype), IterType.DATA_PAR) for iv, _ in spatial]
    wb_rf = IterVar(
        Range(rf_loop.min, rf_loop.extent), Var(f"v{loop_var.name}", loop_var.dtype), IterType.COMM_REDUCE
    )
    svmap = {iv.var: new.var for (iv, _), new in zip(spatial, wb_spatial)}
    wb_idx = [substitute(i, svmap) for i in indices]
    wb_rf_idx = list(wb_idx)
    wb_rf_idx.insert(factor_axis, wb_rf.var)
    wb_body = buf.vstore(wb_idx, _combine(kind, buf[tuple(wb_idx)], rf_buf[tuple(wb_rf_idx)]))
    wb_block = Block(tuple(wb_spatial + [wb_rf]), (), (), name, wb_body, buf.vstore(wb_idx, block.init.value))
    reads, writes = get_block_read_write_region(wb_block)
    wb_block = wb_block.replace(reads=reads, writes=writes)
    wb_values = [substitute(v, new_loop_vars) for _, v in spatial] + [new_loop_vars[loop_var]]
    dropped = {lp.loop_var for lp in loops} - set(new_loop_vars)
    wb_pred = _init_predicate(realize.predicate, new_loop_vars, dropped, what)
    stmt = BlockRealize(tuple(wb_values), wb_pred, wb_block)
    for lp in reversed(wb_loops):
        v = new_loop_vars[lp.loop_var]
        stmt = For(v, lp.min, substitute(lp.extent, new_loop_vars), lp.kind, stmt, lp.thread_binding)

    top = loops[0]
    scope = enclosing_block(path)
    new_top = replace_stmts(top, {realize: rf_realize})
    scope_body = replace_stmts(scope.body, {top: SeqStmt((new_top, stmt))})
    new_scope = scope.replace(body=scope_body, alloc_buffers=scope.alloc_buffers + (rf_buf,))
    return func.with_body(replace_stmts(func.body, {scope: new_scope})), rf_block.name_hint
