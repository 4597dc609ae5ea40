"""Bounds of index expressions for schedule primitives, knowing that buffer sizes are >= 0.

A fresh `Analyzer` knows nothing about a symbolic size `m`, so it cannot tell the sign of
`(m + 1) // 2` and relaxes `i0 * ((m + 1) // 2)` to the int32 limits; an extent built from
such a bound overflows. `shape_analyzer(func)` records that every variable of a parameter or
allocated buffer's shape is non-negative (as a buffer size must be), and `relax_in` relaxes
through it. `clip_to_domain` intersects a region with an iter var's domain and refuses
extents that are not meaningful (wider than the domain or past the int32 range).

>>> from graphc import tir
>>> m, i0, i1 = tir.Var("m"), tir.Var("i0"), tir.Var("i1")
>>> A = tir.decl_buffer((m,), "float32", "A")
>>> ana = shape_analyzer(tir.PrimFunc([], tir.Evaluate(0)), extra_buffers=[A])
>>> lo, hi = relax_in(ana, i0 * ((m + 1) // 2) + i1, {i0: tir.Range.make(2)})
>>> str(lo), str(hi)
('i1', '(m + 1) // 2 + i1')
"""

from __future__ import annotations

from ..analysis.block_access import affine_difference, extent_between
from ..analysis.var_use import used_vars
from ..arith import Analyzer
from ..arith.bound import POS_INF, ConstIntBound
from ..expr import IntImm, PrimExpr
from ..stmt import Block
from .state import walk

INT32_MAX = (1 << 31) - 1


def shape_analyzer(func, dom: dict | None = None, extra_buffers=()) -> Analyzer:
    """An Analyzer where the shape variables of `func`'s buffers are >= 0 and `dom` is bound."""
    buffers = list(func.buffer_map.values()) + list(extra_buffers)
    for stmt in walk(func.body):
        if isinstance(stmt, Block):
            buffers.extend(stmt.alloc_buffers)
    ana = Analyzer()
    for var in used_vars(*(dim for buf in buffers for dim in buf.shape)):
        ana.update(var, ConstIntBound(0, POS_INF))
    for var, rng in (dom or {}).items():
        ana.bind(var, rng, allow_override=True)
    return ana


def relax_in(ana: Analyzer, expr: PrimExpr, dom: dict):
    """(lo, hi) of `expr` while the Vars of `dom` (Var -> Range) vary, or None if unbounded."""
    int_set = ana.int_set(expr, dom)
    lo, hi = int_set.min_value, int_set.max_value
    if not (isinstance(lo, PrimExpr) and isinstance(hi, PrimExpr)):
        return None
    return lo, hi


def relax_all_in(ana: Analyzer, exprs: list, dom: dict) -> list:
    """`relax_in` of each of `exprs` over the same `dom`, bound once (the same results)."""
    out = []
    for int_set in ana.int_sets(exprs, dom):
        lo, hi = int_set.min_value, int_set.max_value
        out.append((lo, hi) if isinstance(lo, PrimExpr) and isinstance(hi, PrimExpr) else None)
    return out


def clip_to_domain(ana: Analyzer, lo, hi, dom_min, dom_extent):
    """(lo, hi, extent) of [lo, hi] intersected with [dom_min, dom_min + dom_extent).

    Ends provably outside the domain are replaced by the domain's; a region that is provably
    at least as wide as the domain, or whose width does not fit in int32 (a bound that came
    from the dtype's limits, not from the loops), becomes the whole domain.
    """
    top = ana.simplify(dom_min + dom_extent - 1)
    if ana.can_prove(lo <= dom_min):
        lo = dom_min
    if ana.can_prove(hi >= top):
        hi = top
    width = affine_difference(hi, lo)
    if width is not None:
        too_wide = width + 1 >= INT32_MAX
        if isinstance(dom_extent, IntImm):
            too_wide = too_wide or width + 1 >= dom_extent.value
    else:
        b = ana.const_int_bound(hi - lo)
        too_wide = b.min_value >= INT32_MAX - 1 or ana.can_prove(hi - lo + 1 >= dom_extent)
    if too_wide:
        return dom_min, top, dom_extent
    return lo, hi, extent_between(lo, hi)
