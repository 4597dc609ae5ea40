"""Canonical linear forms: an integer expression as `sum(coeff * monomial) + constant`.

A monomial is a sorted tuple of non-linear factors (variables, `x // 4`, `min(a, b)`,
loads, ...). Collecting terms by monomial is what turns `i * 4 + j - i * 4` into `j`.
`to_expr` prints the form back TVM-style: positive terms first by decreasing coefficient,
then subtracted terms, the constant last.

>>> from graphc.tir import Var
>>> i, j = Var("i"), Var("j")
>>> s = LinearSum.of(i * 4 + j - i * 4 + (i + 1) * 2 - 2)
>>> to_text = lambda e: __import__("graphc.tir.arith.keys", fromlist=["x"]).expr_text(e)
>>> to_text(s.to_expr())
'i * 2 + j'
"""

from __future__ import annotations

from ..expr import Add, IntImm, Mul, PrimExpr, Sub, const
from .keys import expr_key, sort_key

_MAX_DISTRIBUTE = 16


class LinearSum:
    """A mutable `sum(coeff * monomial) + const` of one integer dtype."""

    __slots__ = ("terms", "const", "dtype")

    def __init__(self, dtype: str, constant: int = 0):
        self.terms: dict[tuple, list] = {}  # key -> [coeff, factors]
        self.const = constant
        self.dtype = dtype

    # --- building ---------------------------------------------------------------------

    @staticmethod
    def of(expr: PrimExpr) -> LinearSum:
        """Decompose an expression built from +, -, * (everything else is a factor)."""
        s = LinearSum(expr.dtype)
        s.add_expr(expr, 1)
        return s

    def copy(self) -> LinearSum:
        s = LinearSum(self.dtype, self.const)
        s.terms = {k: [c, f] for k, (c, f) in self.terms.items()}
        return s

    def add_term(self, coeff: int, factors: tuple) -> None:
        if coeff == 0:
            return
        if not factors:
            self.const += coeff
            return
        factors = tuple(sorted(factors, key=sort_key)) if len(factors) > 1 else factors
        key = monomial_key(factors, presorted=True)
        entry = self.terms.get(key)
        if entry is None:
            self.terms[key] = [coeff, factors]
        else:
            entry[0] += coeff
            if entry[0] == 0:
                del self.terms[key]

    def add_sum(self, other: LinearSum, scale: int = 1) -> LinearSum:
        for coeff, factors in list(other.terms.values()):
            self.add_term(coeff * scale, factors)
        self.const += other.const * scale
        return self

    def add_expr(self, expr: PrimExpr, scale: int) -> None:
        if isinstance(expr, IntImm):
            self.const += expr.value * scale
        elif isinstance(expr, Add):
            self.add_expr(expr.a, scale)
            self.add_expr(expr.b, scale)
        elif isinstance(expr, Sub):
            self.add_expr(expr.a, scale)
            self.add_expr(expr.b, -scale)
        elif isinstance(expr, Mul):
            if isinstance(expr.b, IntImm):
                self.add_expr(expr.a, scale * expr.b.value)
            elif isinstance(expr.a, IntImm):
                self.add_expr(expr.b, scale * expr.a.value)
            else:
                self.add_sum(LinearSum.of(expr.a).mul_sum(LinearSum.of(expr.b)), scale)
        else:
            self.add_term(scale, (expr,))

    def mul_sum(self, other: LinearSum) -> LinearSum:
        """The product; distributes when small, else one monomial of the two factors."""
        if not other.terms:
            return self.copy().scale(other.const)
        if not self.terms:
            return other.copy().scale(self.const)
        n = (len(self.terms) + (self.const != 0)) * (len(other.terms) + (other.const != 0))
        out = LinearSum(self.dtype)
        if n > _MAX_DISTRIBUTE:
            out.add_term(1, (self.to_expr(), other.to_expr()))
            return out
        for ca, fa in self._items():
            for cb, fb in other._items():
                out.add_term(ca * cb, fa + fb)
        return out

    def _items(self):
        yield from self.terms.values()
        if self.const:
            yield self.const, ()

    def scale(self, k: int) -> LinearSum:
        if k == 0:
            self.terms.clear()
        else:
            for entry in self.terms.values():
                entry[0] *= k
        self.const *= k
        return self

    # --- queries ----------------------------------------------------------------------

    def is_const(self) -> bool:
        return not self.terms

    def single_factor(self) -> PrimExpr | None:
        """The factor when the sum is exactly `1 * factor + 0`."""
        if self.const == 0 and len(self.terms) == 1:
            coeff, factors = next(iter(self.terms.values()))
            if coeff == 1 and len(factors) == 1:
                return factors[0]
        return None

    def coeff_gcd(self) -> int:
        from math import gcd

        g = 0
        for coeff, _ in self.terms.values():
            g = gcd(g, coeff)
        return abs(g)

    # --- back to IR -------------------------------------------------------------------

    def to_expr(self) -> PrimExpr:
        dtype = self.dtype
        items = list(self.terms.values())
        pos = sorted((t for t in items if t[0] > 0), key=lambda t: -t[0])
        neg = sorted((t for t in items if t[0] < 0), key=lambda t: t[0])
        result = None
        for coeff, factors in pos:
            term = monomial_expr(coeff, factors, dtype)
            result = term if result is None else Add(result, term, dtype)
        if result is None and (self.const > 0 or (self.const < 0 and neg)):
            result = const(self.const, dtype)
            constant = 0
        else:
            constant = self.const
        for coeff, factors in neg:
            if result is None:
                result = monomial_expr(coeff, factors, dtype)
            else:
                result = Sub(result, monomial_expr(-coeff, factors, dtype), dtype)
        if result is None:
            return const(constant, dtype)
        if constant > 0:
            result = Add(result, const(constant, dtype), dtype)
        elif constant < 0:
            result = Sub(result, const(-constant, dtype), dtype)
        return result


def monomial_key(factors: tuple, presorted: bool = False) -> tuple:
    """The dictionary key of a monomial (its factors in canonical order)."""
    if not presorted and len(factors) > 1:
        factors = tuple(sorted(factors, key=sort_key))
    return tuple(expr_key(f) for f in factors)


def monomial_expr(coeff: int, factors: tuple, dtype: str) -> PrimExpr:
    """`f1 * f2 * ... * coeff` (the coefficient last, omitted when 1)."""
    result = factors[0]
    for f in factors[1:]:
        result = Mul(result, f, dtype)
    if coeff != 1:
        result = Mul(result, const(coeff, dtype), dtype)
    return result
