"""Floor and truncating division/modulo rules over linear forms, under known bounds.

`(q * c + r) // c` is `q + r // c`, and `r // c` is decided when bounds put `r` inside one
period; the gcd of the coefficients reduces `(i * 2) // 4` to `i // 2`; nested divisions
merge. The split pair `(x // c) * c + x % c` folds back to `x` (also for a symbolic `c`,
the index pattern of fused loops).

>>> from graphc.tir import Var, Range
>>> from graphc.tir.arith import Analyzer
>>> from graphc.tir.arith.keys import expr_text
>>> i, j = Var("i"), Var("j")
>>> ana = Analyzer(); ana.bind(j, Range(0, 4))
>>> expr_text(ana.simplify((i * 4 + j) // 4)), expr_text(ana.simplify((i * 4 + j) % 4))
('i', 'j')
"""

from __future__ import annotations

from math import gcd

from .. import expr as tir_expr
from ..expr import FloorDiv, FloorMod, IntImm, PrimExpr, const
from .bound import NEG_INF, POS_INF
from .keys import expr_key
from .linear import LinearSum, monomial_key


def _int_operands(self, expr):
    from .simplifier import is_index

    a, b = self.visit(expr.a), self.visit(expr.b)
    if not is_index(expr) or (isinstance(a, IntImm) and isinstance(b, IntImm)):
        return None, self.rebuild(expr, a, b)
    return (a, b), None


def floordiv(self, expr: FloorDiv) -> PrimExpr:
    ops, done = _int_operands(self, expr)
    if done is not None:
        return done
    result = floordiv_of(self, *ops)
    return result if result is not None else self.rebuild(expr, *ops)


def floormod(self, expr: FloorMod) -> PrimExpr:
    ops, done = _int_operands(self, expr)
    if done is not None:
        return done
    result = floormod_of(self, *ops)
    return result if result is not None else self.rebuild(expr, *ops)


def _nonneg_operands(self, expr):
    ops, done = _int_operands(self, expr)
    if done is not None:
        return None, done
    a, b = ops
    if self.sym_min(self.sum_of(a), goal=0) >= 0 and self.bound(b).min_value >= 0:
        return ops, None
    return None, self.rebuild(expr, a, b)


def truncdiv(self, expr: tir_expr.Div) -> PrimExpr:
    """Truncating division equals floor division when both operands are non-negative."""
    ops, done = _nonneg_operands(self, expr)
    if done is not None:
        return done
    result = floordiv_of(self, *ops)
    return result if result is not None else self.rebuild(expr, *ops)


def truncmod(self, expr: tir_expr.Mod) -> PrimExpr:
    ops, done = _nonneg_operands(self, expr)
    if done is not None:
        return done
    result = floormod_of(self, *ops)
    return result if result is not None else self.rebuild(expr, *ops)


# --- the rules --------------------------------------------------------------------------


def _split(s: LinearSum, c: int) -> tuple[LinearSum, LinearSum]:
    """(quotient, rest): terms whose coefficient `c` divides, and the others."""
    quot, rest = LinearSum(s.dtype), LinearSum(s.dtype)
    for coeff, factors in s.terms.values():
        if coeff % c == 0:
            quot.add_term(coeff // c, factors)
        else:
            rest.add_term(coeff, factors)
    return quot, rest


def _period(self, rest: LinearSum, c: int) -> int | None:
    """k when bounds show k * c <= rest < (k + 1) * c."""
    lo, hi = self.sym_min(rest), self.sym_max(rest)
    if lo <= NEG_INF or hi >= POS_INF:
        return None
    return lo // c if lo // c == hi // c else None


def _reduced(self, rest: LinearSum, g: int) -> PrimExpr:
    """rest / g without its constant (valid when 0 <= constant < g)."""
    out = LinearSum(rest.dtype)
    for coeff, factors in rest.terms.values():
        out.add_term(coeff // g, factors)
    return self.finish(out)


def floordiv_of(self, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
    """Simplified `a // b` for simplified integer operands, or None for "keep as is"."""
    dtype = a.dtype
    if not isinstance(b, IntImm):
        return _symbolic(self, a, b, mod=False)
    c = b.value
    if c <= 0:
        return None
    if c == 1:
        return a
    s = self.sum_of(a)
    quot, rest = _split(s, c)
    q, r = divmod(s.const, c)
    rest.const = r
    k = _period(self, rest, c)
    if k is not None:  # r // c decided by bounds: 0 <= r - k*c < c
        quot.const += q + k
        return self.finish(quot)
    g = gcd(rest.coeff_gcd(), c)
    inner = None
    if g > 1 and r < g:  # (g*X + r) // (g*d) == X // d when 0 <= r < g
        inner = floordiv_of(self, _reduced(self, rest, g), const(c // g, dtype))
    elif r == 0:
        f = rest.single_factor()
        if isinstance(f, FloorDiv) and isinstance(f.b, IntImm) and f.b.value > 0:  # x // a // b
            inner = floordiv_of(self, f.a, const(c * f.b.value, dtype))
        elif isinstance(f, FloorMod) and isinstance(f.b, IntImm) and f.b.value % c == 0:
            # (x % (c*m)) // c -> (x // c) % m: one normal form for the middle digit of a split
            inner = floormod_of(self, floordiv_of(self, f.a, b), const(f.b.value // c, dtype))
    if inner is None:
        if r != 0 and q != 0:  # keep the constant inside rather than `(x + 3) // 4 - 1`
            rest.const, q = s.const, 0
        inner = FloorDiv(self.finish(rest), b, dtype)
    quot.const += q
    quot.add_sum(self.sum_of(inner))
    return self.finish(quot)


def floormod_of(self, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
    """Simplified `a % b` for simplified integer operands, or None for "keep as is"."""
    dtype = a.dtype
    if not isinstance(b, IntImm):
        return _symbolic(self, a, b, mod=True)
    c = b.value
    if c <= 0:
        return None
    if c == 1:
        return const(0, dtype)
    s = self.sum_of(a)
    _, rest = _split(s, c)
    rest.const = s.const % c
    k = _period(self, rest, c)
    if k is not None:  # rest lies in [k*c, (k+1)*c)
        rest.const -= k * c
        return self.finish(rest)
    g = gcd(rest.coeff_gcd(), c)
    if g > 1 and rest.const < g:  # (g*X + r) % (g*d) == g * (X % d) + r when 0 <= r < g
        inner = floormod_of(self, _reduced(self, rest, g), const(c // g, dtype))
        out = self.sum_of(inner).scale(g)
        out.const += rest.const
        return self.finish(out)
    f = rest.single_factor()
    if isinstance(f, FloorMod) and isinstance(f.b, IntImm) and f.b.value % c == 0:  # x % 8 % 4
        return floormod_of(self, f.a, b)
    return FloorMod(self.finish(rest), b, dtype)


def _symbolic(self, a: PrimExpr, b: PrimExpr, mod: bool) -> PrimExpr | None:
    """`a // n`, `a % n` for a non-negative (so, as a divisor, positive) symbolic n.

    Terms with the factor n divide out; the rest is dropped when 0 <= rest < n.
    """
    if self.bound(b).min_value < 0:
        return None
    f = self.sum_of(b).single_factor()
    quot, rest = LinearSum(a.dtype), LinearSum(a.dtype)
    s = self.sum_of(a)
    rest.const = s.const
    fkey = expr_key(f) if f is not None else None
    for coeff, factors in s.terms.values():
        keys = [expr_key(x) for x in factors]
        if fkey is not None and fkey in keys:
            i = keys.index(fkey)
            quot.add_term(coeff, factors[:i] + factors[i + 1 :])
        else:
            rest.add_term(coeff, factors)
    rest_expr = self.finish(rest)
    in_range = self.sym_min(rest, goal=0) >= 0 and self.prove_lt(rest_expr, b)
    if mod:
        if in_range:
            return rest_expr
        return FloorMod(rest_expr, b, a.dtype) if quot.terms or quot.const else None
    if in_range:
        return self.finish(quot)
    if not (quot.terms or quot.const):
        return None
    quot.add_sum(self.sum_of(FloorDiv(rest_expr, b, a.dtype)))
    return self.finish(quot)


def _take(s: LinearSum, *keys) -> None:
    for key in keys:
        del s.terms[key]


def _pair_merge_mod(self, s: LinearSum, key, coeff, factors, idx, f) -> bool:
    """(x % d) * k * F + (x // d) * (d * k) * F -> x * k * F  (also for symbolic d)"""
    if not isinstance(f, FloorMod):
        return False
    others = factors[:idx] + factors[idx + 1 :]
    div = self.visit(FloorDiv(f.a, f.b, f.dtype))  # simplified: (x // a) % m pairs with x // (a*m)
    if isinstance(f.b, IntImm):
        partner, pcoeff = others + (div,), coeff * f.b.value
    else:
        partner, pcoeff = others + (div, f.b), coeff
    pkey = monomial_key(partner)
    entry = s.terms.get(pkey)
    if entry is None or entry[0] != pcoeff or pkey == key:
        return False
    _take(s, key, pkey)
    x = self.sum_of(f.a)
    if others:
        x = x.mul_sum(_monomial(s.dtype, others))
    s.add_sum(x, coeff)
    return True


def _pair_make_mod(self, s: LinearSum, key, coeff, factors, idx, f) -> bool:
    """x * k - (x // d) * (d * k) -> (x % d) * k  (x a single factor)"""
    if not (isinstance(f, FloorDiv) and len(factors) <= 2 and self.sum_of(f.a).single_factor() is f.a):
        return False
    rest = factors[:idx] + factors[idx + 1 :]
    if isinstance(f.b, IntImm) and not rest and coeff % f.b.value == 0:
        k = -coeff // f.b.value
    elif rest and not isinstance(f.b, IntImm) and expr_key(rest[0]) == expr_key(f.b):
        k = -coeff
    else:
        return False
    xkey = monomial_key((f.a,))
    entry = s.terms.get(xkey)
    if entry is None or entry[0] != k:
        return False
    _take(s, key, xkey)
    s.add_term(k, (FloorMod(f.a, f.b, s.dtype),))
    return True


def _pair_nested_mod(self, s: LinearSum, key, coeff, factors, idx, f) -> bool:
    """((x // b) % m) * (b * k) + (x % b) * k -> (x % (b * m)) * k  (constants b, m)"""
    if not (len(factors) == 1 and isinstance(f, FloorMod) and isinstance(f.b, IntImm)):
        return False
    inner = f.a
    if not (isinstance(inner, FloorDiv) and isinstance(inner.b, IntImm) and inner.b.value > 0):
        return False
    b, m = inner.b.value, f.b.value
    if coeff % b != 0:
        return False
    pkey = monomial_key((FloorMod(inner.a, inner.b, s.dtype),))
    entry = s.terms.get(pkey)
    if entry is None or entry[0] != coeff // b:
        return False
    _take(s, key, pkey)
    s.add_sum(self.sum_of(self.visit(FloorMod(inner.a, const(b * m, s.dtype), s.dtype))), coeff // b)
    return True


PAIR_RULES = [
    ("merge_mod", _pair_merge_mod),
    ("make_mod", _pair_make_mod),
    ("nested_mod", _pair_nested_mod),
]


def fold_split_pairs(self, s: LinearSum, max_rounds: int = 4) -> None:
    """In place, apply PAIR_RULES (two terms of a sum that together are one split index)."""
    for _ in range(max_rounds):
        if not _fold_once(self, s):
            return


def _fold_once(self, s: LinearSum) -> bool:
    if len(s.terms) < 2:
        return False
    for key, (coeff, factors) in list(s.terms.items()):
        if key not in s.terms:
            continue
        for idx, f in enumerate(factors):
            if isinstance(f, FloorDiv | FloorMod):
                for _, rule in PAIR_RULES:
                    if rule(self, s, key, coeff, factors, idx, f):
                        return True
    return False


def _monomial(dtype: str, factors: tuple) -> LinearSum:
    out = LinearSum(dtype)
    out.add_term(1, factors)
    return out
