"""blockize: wrap the loops under a loop, and the block inside them, in a new outer block.

`blockize(L)` needs exactly one block under loop L, reached through loops only. Each of its
bindings is divided into an outer part (over the loops above L) and an inner part (over L and
the loops below it): `binding == outer * E + inner`, with `inner` ranging over [0, E). The
new block `<name>_o` gets one iter var per original iter var (the outer parts, over
`dom / E`), reads and writes covering what the inner block touches in one outer iteration,
and the loops from L down as its body. The inner block keeps its name; its iter vars are the
inner parts (those of extent 1 are dropped) and each original iter var `v` becomes
`v_o * E + v_i`. A reduction block's init moves to the outer block (as a loop nest over the
inner spatial iters, block `<name>_init`), as TVM does; when an outer iter var is a
reduction the inner block also reads what it writes.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
...     for i, j in T.grid(8, 8):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vi, vj] * 2.0
... ''')
>>> sch = tir.Schedule(f)
>>> i, j = sch.get_loops(sch.get_block("B"))
>>> outer = sch.blockize(j)
>>> [str(r) for r in sch.get(outer).reads], len(sch.get_loops(sch.get_block("B")))
(['A[vi_o, 0:8]'], 1)
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.block_access import from_affine, to_affine
from ..analysis.var_use import used_vars, uses_any_var, uses_var
from ..expr import And, IntImm, Range, Var, const, logical_and
from ..functor import substitute
from ..stmt import Block, BlockRealize, BufferRegion, For, IterType, IterVar
from .blocks import access
from .bounds import relax_in, shape_analyzer
from .state import find_block_path, find_loop_path, is_one, replace_stmts, scope_realizes, simplify


def _conjuncts(pred) -> list:
    if isinstance(pred, And):
        return _conjuncts(pred.a) + _conjuncts(pred.b)
    if isinstance(pred, IntImm) and pred.value == 1:
        return []
    return [pred]


def _all(conds: list):
    out = const(True)
    for c in conds:
        out = c if isinstance(out, IntImm) else logical_and(out, c)
    return out


def _divide(iv: IterVar, value, inner: dict, what: str):
    """(outer binding, outer extent, inner binding, inner extent) of one binding."""
    uses_in, uses_out = uses_any_var(value, set(inner)), uses_any_var(value, _free_loop_vars(value, inner))
    one = const(1, iv.var.dtype)
    if not uses_in:
        return value, iv.dom.extent, const(0, iv.var.dtype), one
    if not uses_out:
        return const(0, iv.var.dtype), one, value, iv.dom.extent
    form = to_affine(value)
    if form is None and isinstance(iv.dom.extent, IntImm):
        split = _split_outer(iv, value, inner, what)
        if split is not None:
            return split
    if (
        form is None
        or not isinstance(iv.dom.extent, IntImm)
        or not (isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0)
    ):
        raise ScheduleError(
            f"cannot {what}: the binding {value} of {iv.var.name} mixes the loops inside and outside "
            f"the blockized loop in a way that is not outer * E + inner"
        )
    coeffs, constant = form
    inner_terms = sorted(((k, v) for v, k in coeffs.items() if v in inner), key=lambda t: t[0])
    expected = 1
    for k, v in inner_terms:
        ext = inner[v]
        if k != expected or not isinstance(ext, IntImm):
            raise ScheduleError(
                f"cannot {what}: the inner loops of {iv.var.name}'s binding {value} do not form a "
                f"dense sub-space (loop {v.name} has stride {k}, expected {expected})"
            )
        expected *= ext.value
    outer_terms = {v: k for v, k in coeffs.items() if v not in inner}
    if iv.dom.extent.value % expected:
        raise ScheduleError(
            f"cannot {what}: the domain {iv.dom.extent.value} of {iv.var.name} is not a multiple of the "
            f"inner extent {expected} (a non-dividing split); blockize needs whole inner tiles"
        )
    if any(k % expected for k in outer_terms.values()) or constant % expected:
        raise ScheduleError(
            f"cannot {what}: the outer part of {iv.var.name}'s binding {value} is not a multiple of "
            f"the inner extent {expected}"
        )
    outer_b = from_affine(
        {v: k // expected for v, k in outer_terms.items()}, constant // expected, value.dtype
    )
    inner_b = from_affine({v: k for k, v in inner_terms}, 0, value.dtype)
    dt = iv.var.dtype
    return outer_b, const(iv.dom.extent.value // expected, dt), inner_b, const(expected, dt)


def _terms(value, sign: int = 1) -> list:
    """The (sign, term) pairs of the additive terms of `value`."""
    from ..expr import Add, Sub

    if isinstance(value, Add):
        return _terms(value.a, sign) + _terms(value.b, sign)
    if isinstance(value, Sub):
        return _terms(value.a, sign) + _terms(value.b, -sign)
    return [(sign, value)]


def _split_outer(iv: IterVar, value, inner: dict, what: str):
    """`_divide` of a binding `outer + inner` whose outer part is not affine (the block index of
    fused loops, `f // 4 * 64`) but a provable multiple of the inner part's extent; None when the
    binding is not of that form."""
    from ..arith import Analyzer
    from ..expr import floordiv

    outer_part, inner_part = const(0, value.dtype), const(0, value.dtype)
    for sign, term in _terms(value):
        signed = term if sign > 0 else const(0, value.dtype) - term
        if uses_any_var(term, set(inner)):
            inner_part = inner_part + signed
        else:
            outer_part = outer_part + signed
    form = to_affine(inner_part)
    if form is None or form[1] != 0 or not (isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0):
        return None
    coeffs, _ = form
    if any(v not in inner for v in coeffs):
        return None
    expected = 1
    for k, v in sorted(((k, v) for v, k in coeffs.items()), key=lambda t: t[0]):
        if k != expected or not isinstance(inner[v], IntImm):
            return None
        expected *= inner[v].value
    if iv.dom.extent.value % expected:
        return None
    mod = Analyzer().modular_set(outer_part)
    if mod.coeff % expected or mod.base % expected:
        return None
    dt = iv.var.dtype
    outer_b = simplify(floordiv(outer_part, const(expected, outer_part.dtype)))
    return outer_b, const(iv.dom.extent.value // expected, dt), simplify(inner_part), const(expected, dt)


def _free_loop_vars(value, inner: dict) -> set:
    return {v for v in used_vars(value) if v not in inner}


def blockize(func, func_name: str, loop_var: Var, preserve_unit_iters: bool = True):
    """Blockize the subtree of loop `loop_var`; returns (new_func, outer block name)."""
    what = f"blockize loop {loop_var.name}"
    lpath = find_loop_path(func.body, loop_var)
    if lpath is None:
        raise ScheduleError(f"cannot {what}: the loop does not exist in function {func_name!r}")
    loop = lpath[-1]
    realizes = scope_realizes(loop)
    if len(realizes) != 1:
        raise ScheduleError(f"cannot {what}: it must contain exactly one block, found {len(realizes)}")
    realize = realizes[0]
    inner_loops, stmt = [], loop
    while isinstance(stmt, For):
        inner_loops.append(stmt)
        stmt = stmt.body
    if stmt is not realize:
        raise ScheduleError(
            f"cannot {what}: only loops may lie between it and block {realize.block.name_hint!r} "
            f"(found {type(stmt).__name__})"
        )
    block = realize.block
    if block.init is not None:  # the init moves to the outer block, which must reach it as often
        from .reduction import _check_init_reached
        from .state import loops_above

        bpath = find_block_path(func.body, block.name_hint)
        _check_init_reached(func, block, realize, loops_above(bpath), what)
    outer_name = f"{block.name_hint}_o"
    if find_block_path(func.body, outer_name) is not None:
        raise ScheduleError(f"cannot {what}: a block named {outer_name!r} already exists")
    inner = {lp.loop_var: lp.extent for lp in inner_loops}
    # The loops outside the blockized one, so that a dropped unit iter becomes its one value
    # rather than a loop var the new outer block would use directly.
    outside = shape_analyzer(func, {})
    for lp in find_loop_path(func.body, loop_var)[:-1]:
        if isinstance(lp, For):
            outside.bind(lp.loop_var, Range(lp.min, lp.extent))
    o_ivs, o_vals, i_ivs, i_vals, vmap = [], [], [], [], {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        ob, oext, ib, iext = _divide(iv, value, inner, what)
        unit_out, unit_in = is_one(oext), is_one(iext)
        # TVM keeps an outer iter for every iter; without preserve_unit_iters a unit one is bound
        # to its one value (and the inner block uses that value, not the iter)
        o_var = Var(f"{iv.var.name}_o", iv.var.dtype)
        o_dom = iv.dom if unit_in else Range(const(0, iv.var.dtype), oext)
        o_ivs.append(IterVar(o_dom, o_var, iv.iter_type))
        if unit_out and not preserve_unit_iters:
            outer_expr = outside.simplify(ob)
            o_vals.append(outer_expr)
        else:
            o_vals.append(ob)
            outer_expr = o_var
        if unit_in:  # the binding uses only outer loops: no inner iter var
            vmap[iv.var] = outer_expr
        elif unit_out:  # only inner loops: the inner block keeps the iter var as it is
            i_ivs.append(iv)
            i_vals.append(ib)
        else:
            i_var = Var(f"{iv.var.name}_i", iv.var.dtype)
            i_ivs.append(IterVar(Range(const(0, iv.var.dtype), iext), i_var, iv.iter_type))
            i_vals.append(ib)
            vmap[iv.var] = outer_expr * iext + i_var
    vmap = {k: v for k, v in vmap.items() if v is not k}
    o_pred, i_pred = [], []
    for c in _conjuncts(realize.predicate):
        uses_in, uses_out = uses_any_var(c, set(inner)), bool(_free_loop_vars(c, inner))
        if uses_in and uses_out:
            raise ScheduleError(
                f"cannot {what}: the block predicate {c} mixes loops inside and outside the blockized "
                f"loop (a non-dividing split); blockize a loop whose extent divides evenly"
            )
        (i_pred if uses_in else o_pred).append(c)
    new_block = substitute(block, vmap) if vmap else block
    reads, writes = access(new_block)
    has_outer_reduce = block.init is not None and any(iv.iter_type == IterType.COMM_REDUCE for iv in o_ivs)
    inner_reads = tuple(writes) + tuple(reads) if has_outer_reduce else tuple(reads)
    inner_block = new_block.replace(
        iter_vars=tuple(i_ivs), init=None, reads=inner_reads, writes=tuple(writes)
    )
    inner_realize = BlockRealize(tuple(i_vals), _all(i_pred), inner_block)
    dom = {iv.var: iv.dom for iv in i_ivs}
    ana = shape_analyzer(func, {iv.var: iv.dom for iv in o_ivs})
    body = _rebuild_loops(inner_loops, inner_realize)
    init = None
    if block.init is not None:
        init = _outer_init(new_block.init, inner_realize, inner_loops, f"{block.name_hint}_init", what)
    outer_block = Block(
        tuple(o_ivs),
        tuple(_relax_region(ana, r, dom, what) for r in reads),
        tuple(_relax_region(ana, w, dom, what) for w in writes),
        outer_name,
        body,
        init=init,
    )
    outer_realize = BlockRealize(tuple(o_vals), _all(o_pred), outer_block)
    return func.with_body(replace_stmts(func.body, {loop: outer_realize})), outer_name


def _rebuild_loops(loops: list, body):
    for lp in reversed(loops):
        body = lp.replace(body=body)
    return body


def _relax_region(ana, region: BufferRegion, dom: dict, what: str) -> BufferRegion:
    ranges = []
    for r in region.region:
        lo = relax_in(ana, r.min, dom)
        hi = relax_in(ana, r.min + r.extent - 1, dom)
        if lo is None or hi is None:
            raise ScheduleError(f"cannot {what}: the region of {region.buffer.name} cannot be bounded")
        lo_e, hi_e = simplify(lo[0]), simplify(hi[1])
        ranges.append(Range(lo_e, simplify(ana.simplify(hi_e - lo_e + 1))))
    return BufferRegion(region.buffer, tuple(ranges))


def _outer_init(init, inner_realize: BlockRealize, loops: list, name: str, what: str):
    """The outer block's init: the original init over the inner spatial iters it uses."""
    blk = inner_realize.block
    ivs, vals, subst = [], [], {}
    for iv, value in zip(blk.iter_vars, inner_realize.iter_values):
        if iv.iter_type == IterType.DATA_PAR and uses_var(init, iv.var):
            new = Var(f"{iv.var.name}_init", iv.var.dtype)
            subst[iv.var] = new
            ivs.append(iv.replace(var=new))
            vals.append(value)
    init_loops = {lp.loop_var for lp in loops if any(uses_var(v, lp.loop_var) for v in vals)}
    other_loops = {lp.loop_var for lp in loops} - init_loops
    conds = []
    for c in _conjuncts(inner_realize.predicate):
        if not uses_any_var(c, other_loops):
            conds.append(c)
        elif uses_any_var(c, init_loops):
            raise ScheduleError(
                f"cannot {what}: the block predicate {c} ties the reduction loops to the spatial ones, "
                f"so the init cannot be separated"
            )  # a condition on reduction loops only holds for some iteration: the init runs anyway
    stmt = BlockRealize(tuple(vals), _all(conds), Block(tuple(ivs), (), blk.writes, name, init))
    for lp in reversed(loops):
        if lp.loop_var in init_loops:
            new = Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype)
            subst[lp.loop_var] = new
            stmt = lp.replace(loop_var=new, body=stmt)
    return substitute(stmt, subst)
