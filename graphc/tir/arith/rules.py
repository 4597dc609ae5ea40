"""Rule tables for min/max, comparisons, booleans and Select.

Each table is a list of `(name, fn)`; `fn` returns the rewritten expression or None when
it does not apply, and the first rule that applies wins. Integer comparisons are decided
from the bounds of `a - b` and otherwise put in a normal form (`GT`/`GE` become `LT`/`LE`
with swapped operands, variables on the left: `i + 1 < n` becomes `i < n - 1`).

>>> from graphc.tir import Var, Range, min as tmin
>>> from graphc.tir.arith import Analyzer
>>> i = Var("i"); ana = Analyzer(); ana.bind(i, Range(0, 8))
>>> ana.simplify(tmin(i, 10)) is i, ana.simplify(i < 16).value
(True, 1)
"""

from __future__ import annotations

from ...ir.dtype import DataType
from .. import expr as tir_expr
from ..expr import EQ, GE, GT, LE, LT, NE, IntImm, Max, Min, Not, PrimExpr, const
from .keys import expr_key
from .linear import LinearSum

# --- min / max ----------------------------------------------------------------------------


def _mm_fold(self, is_min, a, b):
    """min(c1, c2) -> constant"""
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return const(min(a.value, b.value) if is_min else max(a.value, b.value), a.dtype)
    return None


def _mm_bounds(self, is_min, a, b):
    """min(a, b) -> a when a <= b is provable (and the mirror cases)"""
    d = self.diff(a, b)
    if self.sym_max(d, goal=0) <= 0:
        return a if is_min else b
    if self.sym_min(d, goal=0) >= 0:
        return b if is_min else a
    return None


def _mm_absorb(self, is_min, a, b):
    """min(x, max(x, y)) -> x;  max(x, min(x, y)) -> x"""
    other = Max if is_min else Min
    for x, y in ((a, b), (b, a)):
        if isinstance(y, other) and expr_key(x) in (expr_key(y.a), expr_key(y.b)):
            return x
    return None


def _mm_nested_const(self, is_min, a, b):
    """min(min(x, c1), c2) -> min(x, min(c1, c2))"""
    cls = Min if is_min else Max
    if isinstance(b, IntImm) and isinstance(a, cls) and isinstance(a.b, IntImm):
        c = min(a.b.value, b.value) if is_min else max(a.b.value, b.value)
        return self.visit(cls(a.a, const(c, a.dtype), a.dtype))
    if isinstance(a, IntImm) and not isinstance(b, IntImm):  # constants second
        return self.visit(cls(b, a, a.dtype))
    return None


MIN_MAX_RULES = [
    ("fold", _mm_fold),
    ("bounds", _mm_bounds),
    ("absorb", _mm_absorb),
    ("nested_const", _mm_nested_const),
]


def min_max(self, expr: PrimExpr) -> PrimExpr:
    from .simplifier import is_index

    a, b = self.visit(expr.a), self.visit(expr.b)
    if not is_index(expr):
        return self.rebuild(expr, a, b)
    is_min = isinstance(expr, Min)
    for _, fn in MIN_MAX_RULES:
        result = fn(self, is_min, a, b)
        if result is not None:
            return result
    return self.rebuild(expr, a, b)


# --- comparisons ----------------------------------------------------------------------------

_TRUE, _FALSE = (lambda: const(True)), (lambda: const(False))


def _cmp_bounds(self, cls, d: LinearSum):
    """decide `d < 0`, `d <= 0`, `d == 0`, `d != 0` from the bounds of d"""
    if d.is_const():
        lo = hi = d.const
    else:
        hi_goal, lo_goal = {LT: (-1, 0), LE: (0, 1)}.get(cls, (-1, 1))
        hi, lo = self.sym_max(d, goal=hi_goal), self.sym_min(d, goal=lo_goal)
    decided = {
        LT: (hi < 0, lo >= 0), LE: (hi <= 0, lo > 0),
        EQ: (lo == hi == 0, hi < 0 or lo > 0), NE: (hi < 0 or lo > 0, lo == hi == 0),
    }[cls]  # fmt: skip
    if decided[0]:
        return _TRUE()
    if decided[1]:
        return _FALSE()
    return None


def _cmp_modular(self, cls, d: LinearSum):
    """g*x + c == 0 is false when g does not divide c"""
    g = d.coeff_gcd()
    if cls in (EQ, NE) and g > 1 and d.const % g != 0:
        return _FALSE() if cls is EQ else _TRUE()
    return None


def _cmp_divide(self, cls, d: LinearSum):
    """g*x + c < 0 -> x + c // g < 0 (and the like for <=, ==): smaller coefficients"""
    g = d.coeff_gcd()
    if g <= 1:
        return None
    c = d.const
    if cls is LT:
        new_const = c // g
    elif cls is LE:
        new_const = -((-c) // g)
    elif c % g == 0:
        new_const = c // g
    else:
        return None
    out = LinearSum(d.dtype, new_const)
    for coeff, factors in d.terms.values():
        out.add_term(coeff // g, factors)
    return _normal_form(self, cls, out)


def _normal_form(self, cls, d: LinearSum) -> PrimExpr:
    """positive terms on the left, the rest (and the constant) on the right"""
    if cls in (EQ, NE) and not any(c > 0 for c, _ in d.terms.values()):
        d = d.copy().scale(-1)
    left, right = LinearSum(d.dtype), LinearSum(d.dtype)
    for coeff, factors in d.terms.values():
        (left if coeff > 0 else right).add_term(abs(coeff), factors)
    if left.terms:
        right.const = -d.const
    else:
        left.const = d.const
    return cls(self.finish(left), self.finish(right), "bool")


def _cmp_floordiv(self, cls, d: LinearSum):
    """x // c < m -> x < m * c;  x // c <= m -> x < (m + 1) * c  (and mirrored for -x // c)"""
    if cls not in (LT, LE) or len(d.terms) != 1:
        return None
    coeff, factors = next(iter(d.terms.values()))
    f = factors[0]
    if not (len(factors) == 1 and abs(coeff) == 1 and isinstance(f, tir_expr.FloorDiv)):
        return None
    if not (isinstance(f.b, IntImm) and f.b.value > 0):
        return None
    c, k = f.b.value, d.const
    out = self.sum_of(f.a)
    if coeff == 1:  # x // c < -k  (or <= -k)
        m = -k if cls is LT else -k + 1
        out.const -= m * c
        return _decide(self, LT, out)
    m = k + 1 if cls is LT else k  # x // c >= m  <=>  m * c - x <= 0
    out.scale(-1)
    out.const += m * c
    return _decide(self, LE, out)


CMP_RULES = [
    ("bounds", _cmp_bounds),
    ("modular", _cmp_modular),
    ("floordiv", _cmp_floordiv),
    ("divide", _cmp_divide),
    ("normal_form", _normal_form),
]


def _decide(self, cls, d: LinearSum) -> PrimExpr:
    for _, fn in CMP_RULES:
        result = fn(self, cls, d)
        if result is not None:
            return result
    return _normal_form(self, cls, d)


def compare(self, expr: PrimExpr) -> PrimExpr:
    from .simplifier import is_index

    a, b = self.visit(expr.a), self.visit(expr.b)
    cls = type(expr)
    if not is_index(a):
        if a is expr.a and b is expr.b and not (tir_expr._is_const(a) and tir_expr._is_const(b)):
            return expr
        return tir_expr._compare(cls, a, b)
    if cls in (GT, GE):
        a, b, cls = b, a, {GT: LT, GE: LE}[cls]
    return _decide(self, cls, self.diff(a, b))


# --- booleans and select ------------------------------------------------------------------


def _complement(x, y) -> bool:
    return isinstance(x, Not) and expr_key(x.a) == expr_key(y)


def logical(self, expr: PrimExpr) -> PrimExpr:
    """And/Or: constants, idempotence, complements, and one side decided under the other."""
    is_and = isinstance(expr, tir_expr.And)
    a, b = self.visit(expr.a), self.visit(expr.b)
    for x, y in ((a, b), (b, a)):
        if isinstance(x, IntImm):
            return y if bool(x.value) == is_and else x
    if expr_key(a) == expr_key(b):
        return a
    if _complement(a, b) or _complement(b, a):
        return const(not is_and)
    if isinstance(a, tir_expr.CmpOp) and isinstance(b, tir_expr.CmpOp) and self.analyzer._depth < 4:
        with self.analyzer.constraint_scope(a if is_and else tir_expr.logical_not(a)):
            b2 = self.analyzer.simplify(b)
        if isinstance(b2, IntImm):
            if is_and:
                return a if b2.value else b2
            return b2 if b2.value else a
    if a is expr.a and b is expr.b:
        return expr
    return tir_expr.logical_and(a, b) if is_and else tir_expr.logical_or(a, b)


_NEGATE = {LT: lambda a, b: LE(b, a, "bool"), LE: lambda a, b: LT(b, a, "bool"),
           GT: lambda a, b: LE(a, b, "bool"), GE: lambda a, b: LT(a, b, "bool"),
           EQ: lambda a, b: NE(a, b, "bool"), NE: lambda a, b: EQ(a, b, "bool")}  # fmt: skip


def logical_not(self, expr: Not) -> PrimExpr:
    a = self.visit(expr.a)
    if isinstance(a, IntImm):
        return const(not a.value)
    if isinstance(a, Not):
        return a.a
    negate = _NEGATE.get(type(a))
    if negate is not None and a.dtype == "bool":
        return self.visit(negate(a.a, a.b))
    return expr.replace(a=a)


def select(self, expr: tir_expr.Select) -> PrimExpr:
    """Select: a decided condition picks its side; each side is simplified knowing the condition."""
    cond = self.visit(expr.condition)
    if isinstance(cond, IntImm):
        return self.visit(expr.true_value if cond.value else expr.false_value)
    ana = self.analyzer
    if DataType(cond.dtype).lanes == 1 and ana._depth < 4:
        with ana.constraint_scope(cond):
            t = ana.simplify(expr.true_value)
        with ana.constraint_scope(tir_expr.logical_not(cond)):
            f = ana.simplify(expr.false_value)
    else:
        t, f = self.visit(expr.true_value), self.visit(expr.false_value)
    if expr_key(t) == expr_key(f):
        return t
    if isinstance(cond, LT | LE) and DataType(t.dtype).is_integer:
        keys = (expr_key(cond.a), expr_key(cond.b))
        if keys == (expr_key(t), expr_key(f)):  # select(a < b, a, b) -> min(a, b)
            return self.visit(Min(t, f, t.dtype))
        if keys == (expr_key(f), expr_key(t)):  # select(a < b, b, a) -> max(a, b)
            return self.visit(Max(f, t, t.dtype))
    return expr.replace(condition=cond, true_value=t, false_value=f)
