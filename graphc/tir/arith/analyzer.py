"""`Analyzer`: what is known about variables, and the queries that use it (TVM's arith::Analyzer).

Facts come from `bind` (a loop variable's Range, or a let value), `update` (a constant
bound) and `constraint_scope` (a condition known to hold inside a `with` block). Queries:
`simplify`, `const_int_bound`, `modular_set`, `int_set`, `can_prove`, `can_prove_equal`.

>>> from graphc.tir import Var, SizeVar, Range
>>> i, n = Var("i"), SizeVar("n")
>>> ana = Analyzer()
>>> ana.bind(i, Range(0, n))
>>> ana.can_prove(i < n), ana.can_prove(i < n - 1)
(True, False)
>>> with ana.constraint_scope(i < 4):
...     ana.const_int_bound(i).max_value
3
"""

from __future__ import annotations

from contextlib import contextmanager

from ...errors import TIRError
from ..analysis.var_use import uses_var
from ..expr import (
    EQ,
    LE,
    LT,
    And,
    IntImm,
    Or,
    PrimExpr,
    Range,
    SizeVar,
    Var,
    const,
    convert,
)  # fmt: skip
from .bound import POS_INF, ConstIntBound, dtype_bound
from .int_set import IntervalSet, eval_int_set, eval_int_sets
from .keys import expr_key
from .modular import ModularSet, modular_set
from .simplifier import Simplifier

_MAX_CACHE = 100_000


class Analyzer:
    """Simplification and bound queries under the facts bound so far."""

    def __init__(self):
        self._bounds: dict[Var, ConstIntBound] = {}
        self._upper: dict[Var, list] = {}  # symbolic inclusive upper bounds
        self._lower: dict[Var, list] = {}
        self._subst: dict[Var, PrimExpr] = {}  # vars bound to a constant or another var
        self._facts: list[PrimExpr] = []
        self._cache: dict = {}
        self._sum_cache: dict = {}
        self._bound_memo: dict = {}
        self._sym_memo: dict = {}
        self._depth = 0
        self._simplifier = Simplifier(self)

    # --- simplification ---------------------------------------------------------------

    def simplify(self, expr) -> PrimExpr:
        """The simplest equivalent expression found (canonical form plus rewrite rules).

        >>> i, j = Var("i"), Var("j")
        >>> Analyzer().simplify(i * 4 + j - i * 4) is j
        True
        """
        if len(self._cache) > _MAX_CACHE:
            self._cache.clear()
        if len(self._sum_cache) > _MAX_CACHE:
            self._sum_cache.clear()
        return self._simplifier.simplify(convert(expr))

    canonical_simplify = simplify
    rewrite_simplify = simplify

    @property
    def rewrite_steps(self) -> int:
        """How much work `simplify` has done for this analyzer so far: expression nodes
        rewritten (memo hits are free) plus terms collected from long sums.

        A count, not a time, so a test can bound it on a loaded machine:

        >>> ana = Analyzer()
        >>> _ = ana.simplify(Var("i") * 2 + 1)
        >>> 0 < ana.rewrite_steps < 10
        True
        """
        return self._simplifier.steps

    # --- facts ------------------------------------------------------------------------

    def bind(self, var, value=None, allow_override: bool = False) -> None:
        """Bind `var` to a Range (a loop's domain) or to a value (a let binding).

        A dict binds several at once. A value that is a constant or another Var is also
        substituted by `simplify`, and so is the single point of a one-element Range.
        """
        if isinstance(var, dict):
            for v, val in var.items():
                self.bind(v, val, allow_override)
            return
        if not isinstance(var, Var):
            raise TIRError(f"Analyzer.bind expects a Var, got {type(var).__name__}")
        self._changed()
        if allow_override:
            self._bounds.pop(var, None)
            self._upper.pop(var, None)
            self._lower.pop(var, None)
            self._subst.pop(var, None)
        if isinstance(value, Range) and isinstance(self.simplify(value.extent), IntImm):
            if self.simplify(value.extent).value == 1:  # a one-point range binds the value
                value = value.min
        if isinstance(value, Range):
            lo = self.simplify(value.min)
            hi = self.simplify(value.min + value.extent - 1)
            self._add_sym(var, lo, hi)
            bound = ConstIntBound(self._bound(lo).min_value, self._bound(hi).max_value)
        else:
            value = self.simplify(convert(value, var.dtype))
            if isinstance(value, IntImm | Var) and value is not var:
                self._subst[var] = value
            self._add_sym(var, value, value)
            bound = self._bound(value)
        self.update(var, bound)

    def update(self, var: Var, bound: ConstIntBound, allow_override: bool = False) -> None:
        """Record that `var` lies in `bound` (intersected with what is known unless overriding)."""
        self._changed()
        old = self._bounds.get(var)
        if old is None or allow_override:
            old = ConstIntBound(0, POS_INF) if isinstance(var, SizeVar) else dtype_bound(var.dtype)
        self._bounds[var] = old.intersect(bound)

    @contextmanager
    def constraint_scope(self, cond):
        """Within the `with` block, `cond` is assumed to hold."""
        saved = self._save()
        self._depth += 1
        try:
            self._add_constraint(convert(cond))
            yield self
        finally:
            self._depth -= 1
            self._restore(saved)

    @contextmanager
    def _scoped_bind(self, var: Var, value):
        saved = self._save()
        try:
            self.bind(var, value, allow_override=True)
            yield self
        finally:
            self._restore(saved)

    def _add_sym(self, var: Var, lo: PrimExpr, hi: PrimExpr) -> None:
        if not _mentions(lo, var):
            self._lower.setdefault(var, []).append(lo)
        if not _mentions(hi, var):
            self._upper.setdefault(var, []).append(hi)

    def _add_constraint(self, cond: PrimExpr) -> None:
        cond = self.simplify(cond)
        if isinstance(cond, And):
            self._add_constraint(cond.a)
            self._add_constraint(cond.b)
            return
        if isinstance(cond, IntImm):
            return
        self._changed()
        self._facts.append(cond)
        if isinstance(cond, LT | LE | EQ) and cond.a.dtype != "bool":
            k = 1 if isinstance(cond, LT) else 0
            a, b = cond.a, cond.b
            if isinstance(a, Var) and not _mentions(b, a):  # a <= b - k
                hi = self.simplify(b - k)
                self._upper.setdefault(a, []).append(hi)
                self.update(a, ConstIntBound(ConstIntBound.NEG_INF, self._bound(hi).max_value))
            if isinstance(b, Var) and not _mentions(a, b):  # b >= a + k
                lo = self.simplify(a + k)
                self._lower.setdefault(b, []).append(lo)
                self.update(b, ConstIntBound(self._bound(lo).min_value, ConstIntBound.POS_INF))
            if isinstance(cond, EQ):
                self._add_constraint(LE(b, a, "bool"))

    def _save(self):
        return (
            dict(self._bounds), {k: list(v) for k, v in self._upper.items()},
            {k: list(v) for k, v in self._lower.items()}, dict(self._subst), list(self._facts),
        )  # fmt: skip

    def _restore(self, saved) -> None:
        self._bounds, self._upper, self._lower, self._subst, self._facts = saved
        self._changed()

    def _changed(self) -> None:
        self._cache.clear()
        self._bound_memo.clear()
        self._sym_memo.clear()

    # --- queries ----------------------------------------------------------------------

    def _bound(self, expr: PrimExpr) -> ConstIntBound:
        return self._simplifier.bound(expr)

    def const_int_bound(self, expr) -> ConstIntBound:
        """Constant bounds of an integer expression (NEG_INF / POS_INF when unbounded).

        >>> i = Var("i"); ana = Analyzer(); ana.bind(i, Range(0, 16))
        >>> ana.const_int_bound(i // 4 * 2 + 1)
        ConstIntBound(min_value=1, max_value=7)
        """
        expr = convert(expr)
        bound = self._bound(expr)
        simplified = self.simplify(expr)
        if simplified is not expr:
            bound = bound.intersect(self._bound(simplified))
        return bound

    def modular_set(self, expr) -> ModularSet:
        """Values of `expr` are `coeff * k + base` (coeff 0: exactly base).

        >>> i = Var("i")
        >>> Analyzer().modular_set(i * 8 + 3)
        ModularSet(coeff=8, base=3)
        """
        return modular_set(self.simplify(expr), self._subst)

    def int_set(self, expr, dom_map: dict | None = None) -> IntervalSet:
        """The interval `expr` covers while each Var in `dom_map` ranges over its Range.

        >>> i, j = Var("i"), Var("j")
        >>> s = Analyzer().int_set(i * 16 + j, {j: Range(0, 16)})
        >>> from graphc.tir.arith.keys import expr_text
        >>> expr_text(s.min_value), expr_text(s.max_value)
        ('i * 16', 'i * 16 + 15')
        """
        return eval_int_set(self, convert(expr), dict(dom_map or {}))

    def int_sets(self, exprs, dom_map: dict | None = None) -> list[IntervalSet]:
        """`int_set` of each of `exprs` over the same `dom_map` (bound once for all of them).

        >>> i, j = Var("i"), Var("j")
        >>> sets = Analyzer().int_sets([j, i * 16 + j], {j: Range(0, 16)})
        >>> from graphc.tir.arith.keys import expr_text
        >>> [(expr_text(s.min_value), expr_text(s.max_value)) for s in sets]
        [('0', '15'), ('i * 16', 'i * 16 + 15')]
        """
        return eval_int_sets(self, [convert(e) for e in exprs], dict(dom_map or {}))

    def can_prove(self, cond) -> bool:
        """True only when `cond` holds for every value the known facts allow."""
        cond = self.simplify(cond)
        if isinstance(cond, IntImm):
            return bool(cond.value)
        if isinstance(cond, And):
            return self.can_prove(cond.a) and self.can_prove(cond.b)
        if isinstance(cond, Or):
            return self.can_prove(cond.a) or self.can_prove(cond.b)
        key = expr_key(cond)
        if any(expr_key(f) == key for f in self._facts):
            return True
        return False

    def can_prove_equal(self, a, b) -> bool:
        """`a == b` for every value of the variables."""
        a, b = convert(a), convert(b)
        diff = self.simplify(a - b)
        if isinstance(diff, IntImm) and diff.value == 0:
            return True
        return expr_key(self.simplify(a)) == expr_key(self.simplify(b))

    def can_prove_less(self, a, b) -> bool:
        return self.can_prove(convert(a) < convert(b))


def _mentions(expr: PrimExpr | None, var: Var) -> bool:
    return expr is not None and uses_var(expr, var)


__all__ = ["Analyzer", "ConstIntBound", "IntervalSet", "ModularSet", "const"]
