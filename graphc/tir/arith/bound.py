"""Constant integer bounds of expressions (TVM's ConstIntBound), by interval arithmetic.

`POS_INF` / `NEG_INF` are sentinels for "unbounded"; arithmetic on them saturates.

>>> from graphc.tir import Var
>>> i = Var("i")
>>> b = const_int_bound(i % 8 + 2, lambda v: None)
>>> b.min_value, b.max_value
(2, 9)
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.dispatch import rule_table
from ...ir.dtype import DataType
from ..expr import (
    Add,
    And,
    Broadcast,
    Cast,
    CmpOp,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    SizeVar,
    Sub,
    Var,
)  # fmt: skip

POS_INF = (1 << 63) - 1
NEG_INF = -POS_INF


@dataclass(frozen=True)
class ConstIntBound:
    """The closed interval [min_value, max_value]; NEG_INF / POS_INF mean unbounded."""

    min_value: int
    max_value: int

    POS_INF = POS_INF
    NEG_INF = NEG_INF

    def is_const(self) -> bool:
        return self.min_value == self.max_value

    def contains(self, value: int) -> bool:
        return self.min_value <= value <= self.max_value

    def intersect(self, other: ConstIntBound) -> ConstIntBound:
        return ConstIntBound(max(self.min_value, other.min_value), min(self.max_value, other.max_value))

    def union(self, other: ConstIntBound) -> ConstIntBound:
        return ConstIntBound(min(self.min_value, other.min_value), max(self.max_value, other.max_value))


EVERYTHING = ConstIntBound(NEG_INF, POS_INF)


def _sat(x: int) -> int:
    return POS_INF if x >= POS_INF else NEG_INF if x <= NEG_INF else x


def _inf(x: int) -> bool:
    return x >= POS_INF or x <= NEG_INF


def bound_add(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    lo = NEG_INF if a.min_value <= NEG_INF or b.min_value <= NEG_INF else _sat(a.min_value + b.min_value)
    hi = POS_INF if a.max_value >= POS_INF or b.max_value >= POS_INF else _sat(a.max_value + b.max_value)
    return ConstIntBound(lo, hi)


def bound_neg(a: ConstIntBound) -> ConstIntBound:
    return ConstIntBound(-a.max_value, -a.min_value)


def _mul(x: int, y: int) -> int:
    if x == 0 or y == 0:
        return 0
    if _inf(x) or _inf(y):
        return POS_INF if (x > 0) == (y > 0) else NEG_INF
    return _sat(x * y)


def bound_mul(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    corners = [_mul(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)]
    return ConstIntBound(min(corners), max(corners))


def bound_scale(a: ConstIntBound, c: int) -> ConstIntBound:
    return bound_mul(a, ConstIntBound(c, c))


def _fdiv(x: int, y: int) -> int:
    if _inf(x):
        return x if y > 0 else -x
    return x // y


def _nonzero(b: ConstIntBound) -> ConstIntBound:
    """A divisor is never zero (division by zero is undefined): [0, n] acts as [1, n]."""
    if b.min_value == 0 and b.max_value > 0:
        return ConstIntBound(1, b.max_value)
    if b.max_value == 0 and b.min_value < 0:
        return ConstIntBound(b.min_value, -1)
    return b


def bound_floordiv(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    b = _nonzero(b)
    if b.min_value > 0 or b.max_value < 0:
        corners = [_fdiv(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)
                   if not _inf(y)]  # fmt: skip
        if b.min_value > 0 and b.max_value >= POS_INF:
            corners += [0 if a.min_value >= 0 else -1, 0 if a.max_value >= 0 else -1]
        if b.max_value < 0 and b.min_value <= NEG_INF:
            corners += [0 if a.max_value <= 0 else -1, 0 if a.min_value <= 0 else -1]
        return ConstIntBound(min(corners), max(corners))
    return EVERYTHING


def bound_floormod(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    b = _nonzero(b)
    if b.min_value > 0:
        hi = b.max_value - 1 if not _inf(b.max_value) else POS_INF
        if a.min_value >= 0:
            if a.max_value < b.min_value:
                return a
            return ConstIntBound(0, min(a.max_value, hi))
        return ConstIntBound(0, hi)
    if b.max_value < 0:
        return ConstIntBound(b.min_value + 1 if not _inf(b.min_value) else NEG_INF, 0)
    return EVERYTHING


def _tdiv(x: int, y: int) -> int:
    if _inf(y):
        return 0
    if _inf(x):
        return x if y > 0 else -x
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def bound_truncdiv(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    b = _nonzero(b)
    if b.min_value > 0 or b.max_value < 0:  # monotone in each argument on each side of zero
        corners = [_tdiv(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)]
        return ConstIntBound(min(corners), max(corners))
    return EVERYTHING


def bound_truncmod(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    m = max(abs(b.min_value), abs(b.max_value))
    if m == 0 or _inf(m):
        m = POS_INF
    else:
        m -= 1
    lo = 0 if a.min_value >= 0 else max(a.min_value, -m)
    hi = 0 if a.max_value <= 0 else min(a.max_value, m)
    return ConstIntBound(lo, hi)


def dtype_bound(dtype: str) -> ConstIntBound:
    """The values a scalar of `dtype` can hold (int64 and wider count as unbounded)."""
    dt = DataType(dtype)
    if dt.is_bool:
        return ConstIntBound(0, 1)
    if dt.is_integer and dt.bits < 64:
        return ConstIntBound(int(dt.min_value()), int(dt.max_value()))
    if dt.is_uint:
        return ConstIntBound(0, POS_INF)
    return EVERYTHING


def const_int_bound(expr: PrimExpr, lookup, memo: dict | None = None) -> ConstIntBound:
    """Bounds of `expr`; `lookup(var)` gives a known ConstIntBound for a Var or None."""
    memo = {} if memo is None else memo
    return _Bounder(lookup, memo).bound(expr)


class _Bounder:
    def __init__(self, lookup, memo: dict):
        self.lookup = lookup
        self.memo = memo
        self.lets: dict = {}

    def bound(self, expr) -> ConstIntBound:
        hit = self.memo.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        result = self._bound(expr)
        if not isinstance(expr, IntImm):
            dtb = dtype_bound(expr.dtype)
            if DataType(expr.dtype).lanes == 1:
                result = result.intersect(dtb)
        self.memo[id(expr)] = (expr, result)
        return result

    def _bound(self, e) -> ConstIntBound:
        if isinstance(e, IntImm):
            return ConstIntBound(e.value, e.value)
        if isinstance(e, Var):
            if e in self.lets:
                return self.lets[e]
            known = self.lookup(e)
            if known is not None:
                return known
            if isinstance(e, SizeVar):
                return ConstIntBound(0, POS_INF)
            return dtype_bound(e.dtype)
        rule = _RULES[type(e)]
        if rule is None:
            return dtype_bound(e.dtype) if not DataType(e.dtype).is_float else EVERYTHING
        return rule(self, e)

    def _let(self, e: Let) -> ConstIntBound:
        self.lets[e.var] = self.bound(e.value)
        return self.bound(e.body)

    def _cast(self, e: Cast) -> ConstIntBound:
        src = DataType(e.value.dtype)
        if src.is_integer or src.is_bool:
            return self.bound(e.value).intersect(dtype_bound(e.dtype))
        return dtype_bound(e.dtype)


def _binary(fn):
    return lambda self, e: fn(self.bound(e.a), self.bound(e.b))


def _select(self, e: Select) -> ConstIntBound:
    return self.bound(e.true_value).union(self.bound(e.false_value))


def _boolean(self, e) -> ConstIntBound:
    return ConstIntBound(0, 1)


_RULES = rule_table({
    Add: _binary(bound_add),
    Sub: _binary(lambda a, b: bound_add(a, bound_neg(b))),
    Mul: _binary(bound_mul),
    FloorDiv: _binary(bound_floordiv),
    FloorMod: _binary(bound_floormod),
    Div: _binary(bound_truncdiv),
    Mod: _binary(bound_truncmod),
    Min: _binary(lambda a, b: ConstIntBound(min(a.min_value, b.min_value), min(a.max_value, b.max_value))),
    Max: _binary(lambda a, b: ConstIntBound(max(a.min_value, b.min_value), max(a.max_value, b.max_value))),
    Select: _select,
    Let: _Bounder._let,
    Cast: _Bounder._cast,
    Ramp: lambda self, e: bound_add(
        self.bound(e.base), bound_mul(self.bound(e.stride), ConstIntBound(0, e.lanes - 1))
    ),
    Broadcast: lambda self, e: self.bound(e.value),
    CmpOp: _boolean, And: _boolean, Or: _boolean, Not: _boolean,
})
