"""Symbolic integer intervals: the range an index covers while loop variables vary.

`eval_int_set(analyzer, expr, dom_map)` relaxes every Var in `dom_map` (Var -> Range or
IntervalSet) over its range by interval arithmetic on the simplified expression; other
variables stay symbolic points. Endpoints are simplified; `None` means unbounded.

>>> from graphc.tir import Var, Range
>>> from graphc.tir.arith import Analyzer
>>> from graphc.tir.arith.keys import expr_text
>>> i0, i1, i2 = Var("i0"), Var("i1"), Var("i2")
>>> s = Analyzer().int_set(i0 * 16 + i1 * 4 + i2, {i1: Range(0, 4), i2: Range(0, 4)})
>>> expr_text(s.min_value), expr_text(s.max_value)
('i0 * 16', 'i0 * 16 + 15')
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as tir_expr
from ..expr import IntImm, PrimExpr, Range, Var, const
from .bound import NEG_INF, POS_INF, ConstIntBound, dtype_bound


@dataclass(frozen=True)
class IntervalSet:
    """The closed interval [min_value, max_value]; a None end is unbounded."""

    min_value: PrimExpr | None
    max_value: PrimExpr | None

    @staticmethod
    def single_point(value: PrimExpr) -> IntervalSet:
        return IntervalSet(value, value)

    @staticmethod
    def everything() -> IntervalSet:
        return IntervalSet(None, None)

    def has_lower_bound(self) -> bool:
        return self.min_value is not None

    def has_upper_bound(self) -> bool:
        return self.max_value is not None

    def is_everything(self) -> bool:
        return self.min_value is None and self.max_value is None

    def is_single_point(self) -> bool:
        return self.min_value is not None and self.min_value is self.max_value

    def to_range(self) -> Range:
        """[min, max] as Range(min, max - min + 1); needs both ends."""
        if self.min_value is None or self.max_value is None:
            from ...errors import TIRError

            raise TIRError("cannot make a Range of an unbounded interval")
        from .analyzer import Analyzer

        return Range(self.min_value, Analyzer().simplify(self.max_value - self.min_value + 1))


def eval_int_set(analyzer, expr: PrimExpr, dom_map: dict) -> IntervalSet:
    """The interval of `expr` with the Vars of `dom_map` relaxed (see the module docstring)."""
    return eval_int_sets(analyzer, [expr], dom_map)[0]


def eval_int_sets(analyzer, exprs: list, dom_map: dict) -> list[IntervalSet]:
    """`eval_int_set` of each of `exprs` over the same `dom_map`, which is bound once: each
    interval is the one `eval_int_set` gives (the analyzer's facts are the same for each; only
    its memo, a pure cache, carries over), for a fraction of the binding and re-simplifying."""
    dom: dict = {}
    for var, rng in dom_map.items():
        if isinstance(rng, IntervalSet):
            dom[var] = (rng.min_value, rng.max_value)
        else:
            dom[var] = (rng.min, analyzer.simplify(rng.min + rng.extent - 1))
    if not dom:
        return [IntervalSet(e, e) for e in map(analyzer.simplify, exprs)]
    saved = analyzer._save()
    out = []
    try:
        for var, rng in dom_map.items():
            if isinstance(rng, Range):
                analyzer.bind(var, rng, allow_override=True)
        for expr in exprs:
            try:
                lo, hi = _Relaxer(analyzer, dom).interval(analyzer.simplify(expr))
            except _Overflow:
                out.append(IntervalSet.everything())
                continue
            lo = analyzer.simplify(lo) if lo is not None else None
            hi = analyzer.simplify(hi) if hi is not None else None
            out.append(IntervalSet(lo, hi))
    finally:
        analyzer._restore(saved)
    return out


class _Overflow(Exception):
    """An end of the interval, folded from constants, leaves its dtype's range: at run time the
    expression wraps around, so the interval says nothing."""


def _add(x, y):
    if x is None or y is None:
        return None
    if isinstance(x, IntImm) and isinstance(y, IntImm):
        return _const_in_range(x.value + y.value, x.dtype)
    return x + y


def _scale(x, y):
    """`x * y`, y not depending on the relaxed variables."""
    if x is None:
        return None
    if isinstance(x, IntImm) and isinstance(y, IntImm):
        return _const_in_range(x.value * y.value, x.dtype)
    return x * y


def _const_in_range(value: int, dtype: str) -> IntImm:
    bound = dtype_bound(dtype)
    if not bound.min_value <= value <= bound.max_value:
        raise _Overflow
    return const(value, dtype)


def _negate(x):
    if x is None:
        return None
    return _const_in_range(-x.value, x.dtype) if isinstance(x, IntImm) else -x


def _neg_swap(iv):
    lo, hi = iv
    return (_negate(hi), _negate(lo))


class _Relaxer:
    def __init__(self, analyzer, dom: dict):
        self.analyzer = analyzer
        self.dom = dom
        self.memo: dict = {}

    def depends(self, expr) -> bool:
        hit = self.memo.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        if isinstance(expr, Var):
            result = expr in self.dom
        else:
            from ..functor import post_order_visit

            found = []
            dom = self.dom
            post_order_visit(expr, lambda e: found.append(1) if isinstance(e, Var) and e in dom else None)
            result = bool(found)
        self.memo[id(expr)] = (expr, result)
        return result

    def interval(self, e: PrimExpr) -> tuple:
        if isinstance(e, Var) and e in self.dom:
            return self.dom[e]
        if not self.depends(e):
            return (e, e)
        rule = _RULES.get(type(e))
        result = rule(self, e) if rule is not None else None
        return result if result is not None else self.fallback(e)

    def fallback(self, e: PrimExpr) -> tuple:
        b = self.analyzer._bound(e).intersect(ConstIntBound(NEG_INF + 1, POS_INF - 1))
        dt = dtype_bound(e.dtype)  # a bound at the dtype's limit only says "unknown"
        lo = const(b.min_value, e.dtype) if b.min_value > dt.min_value else None
        hi = const(b.max_value, e.dtype) if b.max_value < dt.max_value else None
        return (lo, hi)

    def sign(self, e: PrimExpr) -> int:
        b = self.analyzer._bound(e)
        return 1 if b.min_value >= 0 else -1 if b.max_value <= 0 else 0

    def _add(self, e):
        a, b = self.interval(e.a), self.interval(e.b)
        return (_add(a[0], b[0]), _add(a[1], b[1]))

    def _sub(self, e):
        a, b = self.interval(e.a), _neg_swap(self.interval(e.b))
        return (_add(a[0], b[0]), _add(a[1], b[1]))

    def _mul(self, e):
        for x, y in ((e.a, e.b), (e.b, e.a)):
            if not self.depends(y):
                lo, hi = self.interval(x)
                s = self.sign(y)
                if s == 0:
                    return None
                lo, hi = _scale(lo, y), _scale(hi, y)
                return (lo, hi) if s > 0 else (hi, lo)
        return None

    def _div(self, e, build):
        if self.depends(e.b) or self.analyzer._bound(e.b).min_value < 0:  # a divisor is never 0
            return None
        if build is tir_expr.truncdiv and self.analyzer._bound(e.a).min_value < 0:
            return None
        lo, hi = self.interval(e.a)
        return (None if lo is None else tir_expr.floordiv(lo, e.b),
                None if hi is None else tir_expr.floordiv(hi, e.b))

    def _mod(self, e, build):
        if self.depends(e.b) or self.analyzer._bound(e.b).min_value < 0:
            return None
        if build is tir_expr.truncmod and self.analyzer._bound(e.a).min_value < 0:
            return None
        lo, hi = self.interval(e.a)
        simplify = self.analyzer.simplify
        if lo is not None and hi is not None:
            qlo, qhi = simplify(tir_expr.floordiv(lo, e.b)), simplify(tir_expr.floordiv(hi, e.b))
            if self.analyzer.can_prove_equal(qlo, qhi):
                return (tir_expr.floormod(lo, e.b), tir_expr.floormod(hi, e.b))
        return (const(0, e.dtype), e.b - 1)

    def _minmax(self, e, build):
        a, b = self.interval(e.a), self.interval(e.b)
        if build is tir_expr.min_value_of:
            lo = None if a[0] is None or b[0] is None else build(a[0], b[0])
            hi = b[1] if a[1] is None else a[1] if b[1] is None else build(a[1], b[1])
        else:
            lo = b[0] if a[0] is None else a[0] if b[0] is None else build(a[0], b[0])
            hi = None if a[1] is None or b[1] is None else build(a[1], b[1])
        return (lo, hi)

    def _select(self, e):
        t, f = self.interval(e.true_value), self.interval(e.false_value)
        lo = None if t[0] is None or f[0] is None else tir_expr.min_value_of(t[0], f[0])
        hi = None if t[1] is None or f[1] is None else tir_expr.max_value_of(t[1], f[1])
        return (lo, hi)

    def _ramp(self, e):
        if self.depends(e.stride) or not isinstance(e.stride, IntImm):
            return None
        lo, hi = self.interval(e.base)
        last = e.stride.value * (e.lanes - 1)
        lo_off, hi_off = min(0, last), max(0, last)
        return (None if lo is None else lo + lo_off, None if hi is None else hi + hi_off)


_RULES = {
    tir_expr.Add: _Relaxer._add,
    tir_expr.Sub: _Relaxer._sub,
    tir_expr.Mul: _Relaxer._mul,
    tir_expr.FloorDiv: lambda self, e: self._div(e, tir_expr.floordiv),
    tir_expr.Div: lambda self, e: self._div(e, tir_expr.truncdiv),
    tir_expr.FloorMod: lambda self, e: self._mod(e, tir_expr.floormod),
    tir_expr.Mod: lambda self, e: self._mod(e, tir_expr.truncmod),
    tir_expr.Min: lambda self, e: self._minmax(e, tir_expr.min_value_of),
    tir_expr.Max: lambda self, e: self._minmax(e, tir_expr.max_value_of),
    tir_expr.Select: _Relaxer._select,
    tir_expr.Ramp: _Relaxer._ramp,
    tir_expr.Broadcast: lambda self, e: self.interval(e.value),
}
