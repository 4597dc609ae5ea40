"""The expression simplifier: canonical linear forms plus rule tables, under known bounds.

Integer `+ - *` go through `LinearSum` (terms collected, constants folded, the
`(x // c) * c + x % c` pair folded back to `x`); `//` and `%` through `div_rules`;
min/max, comparisons, booleans and Select through the tables in `rules`. Floats only
fold constants: their arithmetic is never reordered. Results are memoized per analyzer
state, and `simplify` repeats to a fixed point for at most `MAX_ROUNDS` rounds.

>>> from graphc.tir import Var
>>> from graphc.tir.arith import Analyzer
>>> i = Var("i")
>>> Analyzer().simplify(i * 2 + i).b.value
3
"""

from __future__ import annotations

import sys

from ...ir.dispatch import rule_table
from ...ir.dtype import DataType
from .. import expr as tir_expr
from ..expr import FloorDiv, FloorMod, IntImm, PrimExpr, Var
from ..generic import BINARY_BUILDERS
from . import div_rules, rules
from .bound import ConstIntBound, bound_add, bound_mul, bound_scale, const_int_bound
from .keys import expr_key
from .linear import LinearSum

MAX_ROUNDS = 3
_RECURSION_LIMIT = 20_000
_SYM_DEPTH = 2
_SYM_WIDTH = 4



def is_index(expr: PrimExpr) -> bool:
    """Scalar signed/unsigned integer expressions get the canonical treatment."""
    dt = DataType(expr.dtype)
    return dt.is_integer and dt.lanes == 1


class Simplifier:
    """Rewrites expressions bottom-up with the facts an Analyzer holds."""

    def __init__(self, analyzer):
        self.analyzer = analyzer
        self._sym_active = 0  # nesting of symbolic bound searches (they may simplify)
        # Work done so far, counted where a blow-up would show: one step per node rewritten
        # (memo hits are free) and per term collected from a long sum. Tests bound it
        # instead of timing the simplifier.
        self.steps = 0

    # --- entry points -----------------------------------------------------------------

    def simplify(self, expr: PrimExpr) -> PrimExpr:
        expr = tir_expr.convert(expr)
        old_limit = sys.getrecursionlimit()
        if old_limit < _RECURSION_LIMIT:
            sys.setrecursionlimit(_RECURSION_LIMIT)
        try:
            new = self.visit(expr)
            for _ in range(MAX_ROUNDS - 1):
                if new is expr or isinstance(new, IntImm | Var):
                    break
                expr, new = new, self.visit(new)
                if new is expr or expr_key(new) == expr_key(expr):
                    break
            return new
        finally:
            if old_limit < _RECURSION_LIMIT:
                sys.setrecursionlimit(old_limit)

    def visit(self, expr: PrimExpr) -> PrimExpr:
        cache = self.analyzer._cache
        hit = cache.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        result = self._visit(expr)
        if result is not expr and type(result) is type(expr) and expr_key(result) == expr_key(expr):
            result = expr  # unchanged: keep the caller's object so "did it change?" is `is`
        cache[id(expr)] = (expr, result)
        return result

    def _visit(self, expr: PrimExpr) -> PrimExpr:
        self.steps += 1
        if isinstance(expr, IntImm | tir_expr.FloatImm | tir_expr.StringImm):
            return expr
        if isinstance(expr, Var):
            return self.analyzer._subst.get(expr, expr)
        handler = _HANDLERS[type(expr)]
        if handler is None:
            return expr
        return handler(self, expr)

    # --- linear forms -----------------------------------------------------------------

    def sum_of(self, expr: PrimExpr) -> LinearSum:
        """The (already simplified) expression as a LinearSum copy."""
        cache = self.analyzer._sum_cache
        hit = cache.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1].copy()
        s = LinearSum.of(expr)
        cache[id(expr)] = (expr, s.copy())
        return s

    def finish(self, s: LinearSum) -> PrimExpr:
        """Fold split pairs, then rebuild the expression (and remember its form)."""
        div_rules.fold_split_pairs(self, s)
        result = s.to_expr()
        self.analyzer._sum_cache[id(result)] = (result, s.copy())
        return result

    def _arith(self, expr: PrimExpr) -> PrimExpr:
        if is_index(expr) and not isinstance(expr, tir_expr.Mul):
            return self._sum_chain(expr)
        a, b = self.visit(expr.a), self.visit(expr.b)
        if not is_index(expr):
            return self.rebuild(expr, a, b)
        sa = self.sum_of(a).mul_sum(self.sum_of(b))
        sa = self.sum_of(self.finish(sa)) if not sa.is_const() else sa
        return self.finish(sa)

    def _sum_chain(self, expr: PrimExpr) -> PrimExpr:
        """A tree of integer + and - collected without recursion (long sums stay cheap)."""
        total = LinearSum(expr.dtype)
        stack = [(expr, 1)]
        while stack:
            e, scale = stack.pop()
            self.steps += 1
            if isinstance(e, tir_expr.Add | tir_expr.Sub) and e is not expr and id(e) in self.analyzer._cache:
                hit = self.analyzer._cache[id(e)]
                if hit[0] is e:
                    total.add_sum(self.sum_of(hit[1]), scale)
                    continue
            if isinstance(e, tir_expr.Add):
                stack.append((e.b, scale))
                stack.append((e.a, scale))
            elif isinstance(e, tir_expr.Sub):
                stack.append((e.b, -scale))
                stack.append((e.a, scale))
            else:
                total.add_sum(self.sum_of(self.visit(e)), scale)
        return self.finish(total)

    @staticmethod
    def rebuild(expr, a, b):
        if a is expr.a and b is expr.b:
            if isinstance(a, IntImm | tir_expr.FloatImm) and isinstance(b, IntImm | tir_expr.FloatImm):
                return BINARY_BUILDERS.get(type(expr), lambda x, y: expr)(a, b)
            return expr
        build = BINARY_BUILDERS.get(type(expr))
        return build(a, b) if build is not None else expr.replace(a=a, b=b)

    # --- bounds -----------------------------------------------------------------------

    def bound(self, expr: PrimExpr) -> ConstIntBound:
        a = self.analyzer
        return const_int_bound(expr, a._bounds.get, a._bound_memo)

    def sum_bound(self, s: LinearSum) -> ConstIntBound:
        total = ConstIntBound(s.const, s.const)
        for coeff, factors in s.terms.values():
            b = self.bound(factors[0])
            for f in factors[1:]:
                b = bound_mul(b, self.bound(f))
            total = bound_add(total, bound_scale(b, coeff))
        return total

    def sym_max(self, s: LinearSum, depth: int = _SYM_DEPTH, goal: int | None = None) -> int:
        """An upper bound of `s`, also substituting symbolic bounds of its variables.

        One variable is replaced at a time (its upper bound where its coefficient is
        positive, its lower bound where negative), up to `depth` substitutions deep;
        the search stops once the bound reaches `goal`.
        """
        best = self.sum_bound(s).max_value
        if depth == 0 or (goal is not None and best <= goal) or self._sym_active > 2:
            return best
        memo = self.analyzer._sym_memo
        key = (s.const, depth, goal, frozenset((k, c) for k, (c, _) in s.terms.items()))
        hit = memo.get(key)
        if hit is not None:
            return hit
        self._sym_active += 1
        try:
            result = self._sym_search(s, depth, goal, best)
        finally:
            self._sym_active -= 1
        memo[key] = result
        return result

    def _sym_search(self, s: LinearSum, depth: int, goal: int | None, best: int) -> int:
        tried = 0
        for key, (coeff, factors) in list(s.terms.items()):
            for idx, f in enumerate(factors):
                others = factors[:idx] + factors[idx + 1 :]
                sign = self._sign(others) * coeff
                if sign == 0:
                    continue
                cands = self._sym_upper(f) if sign > 0 else self._sym_lower(f)
                for cand in cands[-2:]:
                    t = s.copy()
                    del t.terms[key]
                    replaced = self.sum_of(cand)
                    if others:
                        replaced = replaced.mul_sum(_monomial_sum(s.dtype, others))
                    t.add_sum(replaced, coeff)
                    best = min(best, self.sym_max(t, depth - 1, goal))
                    if goal is not None and best <= goal:
                        return best
                tried += bool(cands)
            if tried >= _SYM_WIDTH:
                break
        return best

    def _sign(self, factors: tuple) -> int:
        """+1 / -1 when the product of `factors` is provably >= 0 / <= 0, else 0."""
        sign = 1
        for f in factors:
            b = self.bound(f)
            if b.min_value >= 0:
                continue
            if b.max_value <= 0:
                sign = -sign
            else:
                return 0
        return sign

    def sym_min(self, s: LinearSum, goal: int | None = None) -> int:
        return -self.sym_max(s.copy().scale(-1), goal=None if goal is None else -goal)

    def _sym_upper(self, f: PrimExpr) -> list:
        if isinstance(f, Var):  # constant bounds are already in the ConstIntBound
            return [u for u in self.analyzer._upper.get(f, ()) if not isinstance(u, IntImm)]
        if isinstance(f, FloorMod) and not isinstance(f.b, IntImm) and self.bound(f.b).min_value > 0:
            return [self.visit(f.b - 1)]
        if isinstance(f, tir_expr.Min):
            return [f.a, f.b]
        if isinstance(f, FloorDiv) and isinstance(f.a, Var) and self.bound(f.b).min_value >= 0:
            return [self.visit(FloorDiv(u, f.b, f.dtype)) for u in self._sym_upper(f.a)]
        return []

    def _sym_lower(self, f: PrimExpr) -> list:
        if isinstance(f, Var):
            return [lo for lo in self.analyzer._lower.get(f, ()) if not isinstance(lo, IntImm)]
        if isinstance(f, tir_expr.Max):
            return [f.a, f.b]
        if isinstance(f, FloorDiv) and isinstance(f.a, Var) and self.bound(f.b).min_value >= 0:
            return [self.visit(FloorDiv(lo, f.b, f.dtype)) for lo in self._sym_lower(f.a)]
        return []

    def diff(self, a: PrimExpr, b: PrimExpr) -> LinearSum:
        s = self.sum_of(a)
        s.add_sum(self.sum_of(b), -1)
        div_rules.fold_split_pairs(self, s)
        return s

    def prove_le(self, a: PrimExpr, b: PrimExpr) -> bool:
        """a <= b provably (integer expressions)."""
        return self.sym_max(self.diff(a, b), goal=0) <= 0

    def prove_lt(self, a: PrimExpr, b: PrimExpr) -> bool:
        return self.sym_max(self.diff(a, b), goal=-1) < 0


def _monomial_sum(dtype: str, factors: tuple) -> LinearSum:
    out = LinearSum(dtype)
    out.add_term(1, factors)
    return out


def _cast(self: Simplifier, expr: tir_expr.Cast):
    value = self.visit(expr.value)
    if isinstance(value, tir_expr.Cast) and is_index(value) and is_index(value.value) and is_index(expr):
        inner = value.value
        if DataType(inner.dtype).bits <= DataType(value.dtype).bits and DataType(value.dtype).is_int:
            return tir_expr.cast(inner, expr.dtype)  # widening then casting: cast once
    if value is expr.value and not isinstance(value, IntImm | tir_expr.FloatImm):
        return expr
    return tir_expr.cast(value, expr.dtype)


def _let(self: Simplifier, expr: tir_expr.Let):
    value = self.visit(expr.value)
    if isinstance(value, IntImm | Var):
        from ..functor import substitute

        return self.visit(substitute(expr.body, {expr.var: value}))
    with self.analyzer._scoped_bind(expr.var, value):
        body = self.simplify(expr.body)
    return expr.replace(value=value, body=body)


def _tuple_args(self: Simplifier, items):
    new = tuple(self.visit(x) for x in items)
    return items if all(a is b for a, b in zip(new, items)) else new


def _call(self: Simplifier, expr: tir_expr.Call):
    args = _tuple_args(self, expr.args)
    if expr.op == "tir.if_then_else" and isinstance(args[0], IntImm):
        return args[1] if args[0].value else args[2]
    return expr.replace(args=args)


def _buffer_load(self: Simplifier, expr: tir_expr.BufferLoad):
    return expr.replace(indices=_tuple_args(self, expr.indices))


def _ramp(self: Simplifier, expr: tir_expr.Ramp):
    return expr.replace(base=self.visit(expr.base), stride=self.visit(expr.stride))


def _broadcast(self: Simplifier, expr: tir_expr.Broadcast):
    return expr.replace(value=self.visit(expr.value))


def _shuffle(self: Simplifier, expr: tir_expr.Shuffle):
    return expr.replace(vectors=_tuple_args(self, expr.vectors))


_HANDLERS = rule_table({
    tir_expr.Add: Simplifier._arith, tir_expr.Sub: Simplifier._arith, tir_expr.Mul: Simplifier._arith,
    tir_expr.FloorDiv: div_rules.floordiv, tir_expr.FloorMod: div_rules.floormod,
    tir_expr.Div: div_rules.truncdiv, tir_expr.Mod: div_rules.truncmod,
    tir_expr.Min: rules.min_max, tir_expr.Max: rules.min_max, tir_expr.CmpOp: rules.compare,
    tir_expr.And: rules.logical, tir_expr.Or: rules.logical, tir_expr.Not: rules.logical_not,
    tir_expr.Select: rules.select,
    tir_expr.Cast: _cast, tir_expr.Let: _let, tir_expr.Call: _call, tir_expr.BufferLoad: _buffer_load,
    tir_expr.Ramp: _ramp,
    tir_expr.Broadcast: _broadcast, tir_expr.Shuffle: _shuffle,
})  # fmt: skip

__all__ = ["Simplifier", "is_index", "FloorDiv"]
