"""TensorIR expressions (`PrimExpr`) and the Python operators that build them.

`i * 4 + j` on expressions builds IR. Python numbers are converted to constants of the
other operand's type, mixed integer widths promote to the wider one, integers mixed
with floats promote to the float, and operations on two constants fold at once
(as TVM's operator builders do), so `const(2) + 3` is `IntImm(5)`.

>>> i, j = Var("i", "int32"), Var("j", "int32")
>>> e = i * 4 + j
>>> type(e).__name__, e.dtype
('Add', 'int32')
>>> (const(6) // 4).value
1
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import TIRError
from ..ir.dtype import DataType, canonical
from ..ir.node import Node, node


class PrimExpr(Node):
    """Base class of scalar (and vector) expressions. Every PrimExpr has a `dtype` string."""

    __slots__ = ()
    dtype: str

    # Identity hash: nodes are compared by identity; `==` builds IR (see EqualOp).
    __hash__ = object.__hash__

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return sub(self, other)

    def __rsub__(self, other):
        return sub(other, self)

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    def __truediv__(self, other):
        return truediv(self, other)

    def __rtruediv__(self, other):
        return truediv(other, self)

    def __floordiv__(self, other):
        return floordiv(self, other)

    def __rfloordiv__(self, other):
        return floordiv(other, self)

    def __mod__(self, other):
        return floormod(self, other)

    def __rmod__(self, other):
        return floormod(other, self)

    def __neg__(self):
        if isinstance(self, IntImm | FloatImm):
            return type(self)(self.dtype, -self.value)
        return sub(const(0, self.dtype), self)

    def __pos__(self):
        return self

    def __lt__(self, other):
        return _compare(LT, self, other)

    def __le__(self, other):
        return _compare(LE, self, other)

    def __gt__(self, other):
        return _compare(GT, self, other)

    def __ge__(self, other):
        return _compare(GE, self, other)

    def __eq__(self, other):
        return EqualOp(self, other)

    def __ne__(self, other):
        return NotEqualOp(self, other)

    def __and__(self, other):
        return logical_and(self, other)

    def __rand__(self, other):
        return logical_and(other, self)

    def __or__(self, other):
        return logical_or(self, other)

    def __ror__(self, other):
        return logical_or(other, self)

    def __invert__(self):
        return logical_not(self)

    def __bool__(self):
        raise TIRError(
            "cannot use a symbolic expression as a Python bool; "
            "use tir.all/tir.any, or T.if_then_else / Select to build a condition"
        )

    def astype(self, dtype: str) -> PrimExpr:
        return cast(self, dtype)

    def __repr__(self) -> str:
        from ..script.printer import expr_text

        return expr_text(self)


class EqualOp:
    """Result of `a == b` on expressions: IR when used as one, identity when used as bool.

    TVM behaves the same way so that expressions can live in dicts and `if a == b:`
    means "the same object", while `T.if_then_else(i == 0, ...)` gets an `EQ` node.
    """

    __slots__ = ("a", "b")
    _node_cls: Any = None

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __bool__(self) -> bool:
        return self.a is self.b

    def asobject(self) -> PrimExpr:
        return _compare(self._node_cls or EQ, self.a, self.b)

    def __repr__(self) -> str:
        return repr(self.asobject())


class NotEqualOp(EqualOp):
    """Result of `a != b` on expressions; see EqualOp."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return self.a is not self.b

    def asobject(self) -> PrimExpr:
        return _compare(NE, self.a, self.b)


# --- leaves ---------------------------------------------------------------------------


@node
class Var(PrimExpr):
    """A scalar variable (loop variable, shape variable, parameter or pointer handle).

    `type_annotation` refines a handle: for a buffer's data pointer it is the element dtype.
    """

    name: str
    dtype: str = "int32"
    type_annotation: str | None = None
    __structural_binding__ = True

    def __init__(self, name: str, dtype: str = "int32", type_annotation: str | None = None):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dtype", canonical(dtype))
        object.__setattr__(self, "type_annotation", type_annotation)

    @property
    def name_hint(self) -> str:
        return self.name


@node
class SizeVar(Var):
    """A variable known to be non-negative (a tensor dimension)."""

    def __init__(self, name: str, dtype: str = "int32", type_annotation: str | None = None):
        Var.__init__(self, name, dtype, type_annotation)


@node
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    dtype: str
    value: int

    def __init__(self, dtype: str, value: int):
        dtype = canonical(dtype)
        dt = DataType(dtype)
        if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
            raise TIRError(f"IntImm needs a scalar integer or bool dtype, got {dtype}")
        value = int(value)
        if dt.is_bool:
            value = 1 if value else 0
        elif not dt.min_value() <= value <= dt.max_value():
            value = _wrap(value, dt)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "value", value)

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __bool__(self) -> bool:
        return self.value != 0

    def __float__(self) -> float:
        return float(self.value)


@node
class FloatImm(PrimExpr):
    """A floating-point constant."""

    dtype: str
    value: float

    def __init__(self, dtype: str, value: float):
        dtype = canonical(dtype)
        if not DataType(dtype).is_float:
            raise TIRError(f"FloatImm needs a float dtype, got {dtype}")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "value", float(value))

    def __float__(self) -> float:
        return self.value


@node
class StringImm(PrimExpr):
    """A string constant (used in calls and attributes)."""

    value: str
    dtype: str = "handle"


def _wrap(value: int, dt: DataType) -> int:
    mask = (1 << dt.bits) - 1
    value &= mask
    if dt.is_int and value >= 1 << (dt.bits - 1):
        value -= 1 << dt.bits
    return value


# --- compound expressions -------------------------------------------------------------


@node
class Cast(PrimExpr):
    """Convert `value` to `dtype`."""

    dtype: str
    value: PrimExpr


@node
class BinaryOp(PrimExpr):
    """Base of two-operand arithmetic nodes; `dtype` equals both operands' dtype."""

    a: PrimExpr
    b: PrimExpr
    dtype: str


@node
class Add(BinaryOp):
    """a + b"""


@node
class Sub(BinaryOp):
    """a - b"""


@node
class Mul(BinaryOp):
    """a * b"""


@node
class Div(BinaryOp):
    """a / b: true division for floats, truncating (C) division for integers."""


@node
class Mod(BinaryOp):
    """Truncating remainder (C's %): the sign follows a."""


@node
class FloorDiv(BinaryOp):
    """a // b rounding toward negative infinity."""


@node
class FloorMod(BinaryOp):
    """a % b with the sign of b (Python's %)."""


@node
class Min(BinaryOp):
    """min(a, b)"""


@node
class Max(BinaryOp):
    """max(a, b)"""


@node
class CmpOp(PrimExpr):
    """Base of comparisons; the result is bool (with the operands' lanes)."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = "bool"


@node
class EQ(CmpOp):
    """a == b"""


@node
class NE(CmpOp):
    """a != b"""


@node
class LT(CmpOp):
    """a < b"""


@node
class LE(CmpOp):
    """a <= b"""


@node
class GT(CmpOp):
    """a > b"""


@node
class GE(CmpOp):
    """a >= b"""


@node
class And(PrimExpr):
    """Logical and of two bool expressions."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = "bool"


@node
class Or(PrimExpr):
    """Logical or of two bool expressions."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = "bool"


@node
class Not(PrimExpr):
    """Logical negation of a bool expression."""

    a: PrimExpr
    dtype: str = "bool"


@node
class Select(PrimExpr):
    """`true_value if condition else false_value`; both sides may be evaluated."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: str


@node
class Let(PrimExpr):
    """Bind `var` to `value` within `body`."""

    var: Var
    value: PrimExpr
    body: PrimExpr
    dtype: str


@node
class Call(PrimExpr):
    """Call of an intrinsic (`op` is its name, e.g. ``"tir.exp"``) or an external function."""

    dtype: str
    op: str
    args: tuple


@node
class Ramp(PrimExpr):
    """The vector `base + stride * [0, 1, ..., lanes-1]`."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: str


@node
class Broadcast(PrimExpr):
    """The scalar `value` repeated in `lanes` lanes."""

    value: PrimExpr
    lanes: int
    dtype: str


@node
class Shuffle(PrimExpr):
    """Lanes picked from the concatenation of `vectors` at `indices`."""

    vectors: tuple
    indices: tuple
    dtype: str


@node
class BufferLoad(PrimExpr):
    """Read `buffer[indices]`; the dtype is the buffer's (with lanes for vector loads)."""

    buffer: Any
    indices: tuple
    dtype: str
    predicate: PrimExpr | None = None


@node
class Range(Node):
    """The half-open interval [min, min + extent)."""

    min: PrimExpr
    extent: PrimExpr

    @staticmethod
    def from_min_extent(min_value, extent) -> Range:
        return Range(convert(min_value), convert(extent))

    @staticmethod
    def make(begin, end=None) -> Range:
        """`Range.make(n)` is [0, n); `Range.make(a, b)` is [a, b)."""
        if end is None:
            begin, end = 0, begin
        begin, end = convert(begin), convert(end)
        return Range(begin, end - begin if not _is_zero(begin) else end)

    def __repr__(self) -> str:
        return f"Range({self.min!r}, {self.extent!r})"


# --- conversion and constants ---------------------------------------------------------


def const(value, dtype: str | None = None) -> PrimExpr:
    """A constant: `int` gives int32, `float` gives float32, `bool` gives bool by default.

    >>> const(3).dtype, const(1.5).dtype, const(True).dtype, const(2, "int64").dtype
    ('int32', 'float32', 'bool', 'int64')
    """
    if isinstance(value, PrimExpr):
        return value if dtype is None else cast(value, dtype)
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -(2**31) <= value < 2**31 else "int64"
        elif isinstance(value, float):
            dtype = "float32"
        elif hasattr(value, "dtype"):  # numpy scalar
            dtype = canonical(value.dtype)
            value = value.item()
        else:
            raise TIRError(f"cannot make a constant from {value!r}")
    dt = DataType(dtype)
    if dt.lanes > 1:
        return Broadcast(const(value, str(dt.element_of())), dt.lanes, str(dt))
    if dt.is_float:
        return FloatImm(str(dt), float(value))
    if isinstance(value, float) and not value.is_integer():
        raise TIRError(f"cannot make a {dtype} constant from {value!r}")
    return IntImm(str(dt), int(value))


def convert(value, dtype: str | None = None) -> PrimExpr:
    """Turn a Python number, bool or expression into a PrimExpr."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, EqualOp):
        return value.asobject()
    if hasattr(value, "asobject"):
        return value.asobject()
    return const(value, dtype)


def _is_const(x) -> bool:
    return isinstance(x, IntImm | FloatImm)


def _is_zero(x) -> bool:
    return _is_const(x) and x.value == 0


def _is_one(x) -> bool:
    return _is_const(x) and x.value == 1


def _operand(value, like: PrimExpr | None) -> PrimExpr:
    """Convert a Python number using the dtype of the other operand where sensible."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, EqualOp):
        return value.asobject()
    if like is not None and isinstance(value, int | float) and not isinstance(value, bool):
        dt = DataType(like.dtype)
        if dt.is_float or (dt.is_integer and isinstance(value, int)):
            try:
                return const(value, like.dtype)
            except TIRError:
                pass
        if isinstance(value, float) and not dt.is_float:
            return const(value, "float32")
    if like is not None and isinstance(value, bool) and DataType(like.dtype).is_bool:
        return const(value, like.dtype)
    return convert(value)


def match_types(a, b) -> tuple[PrimExpr, PrimExpr]:
    """Convert and promote two operands to one dtype (TVM's BinaryOpMatchTypes)."""
    if not isinstance(a, PrimExpr):
        b = convert(b)
        a = _operand(a, b)
    else:
        b = _operand(b, a)
    if a.dtype == b.dtype:
        return a, b
    da, db = DataType(a.dtype), DataType(b.dtype)
    if da.lanes != db.lanes:
        if da.lanes == 1:
            a = broadcast(a, db.lanes)
            da = DataType(a.dtype)
        elif db.lanes == 1:
            b = broadcast(b, da.lanes)
            db = DataType(b.dtype)
        else:
            raise TIRError(f"cannot combine vectors of {da.lanes} and {db.lanes} lanes")
        if a.dtype == b.dtype:
            return a, b
    if da.is_float and not db.is_float:
        return a, cast(b, a.dtype)
    if db.is_float and not da.is_float:
        return cast(a, b.dtype), b
    if da.is_float and db.is_float or da.is_integer and db.is_integer:
        target = da if da.bits >= db.bits else db
        if da.bits == db.bits and da.code != db.code:
            target = da.with_bits(da.bits) if da.is_int else db
        return cast(a, str(target)), cast(b, str(target))
    if da.is_bool:
        return cast(a, b.dtype), b
    if db.is_bool:
        return a, cast(b, a.dtype)
    raise TIRError(f"cannot combine operands of dtype {a.dtype} and {b.dtype}")


def broadcast(value, lanes: int) -> PrimExpr:
    value = convert(value)
    if lanes == 1:
        return value
    return Broadcast(value, lanes, str(DataType(value.dtype).with_lanes(lanes)))


def cast(value, dtype: str) -> PrimExpr:
    """`value` converted to `dtype`; a no-op when it already has it, folded for constants."""
    value = convert(value)
    dtype = canonical(dtype)
    if value.dtype == dtype:
        return value
    dt = DataType(dtype)
    if isinstance(value, IntImm | FloatImm) and dt.lanes == 1:
        if dt.is_float:
            return FloatImm(dtype, float(value.value))
        if dt.is_bool:
            return IntImm(dtype, value.value != 0)
        if isinstance(value, FloatImm):
            if math.isfinite(value.value):
                return IntImm(dtype, int(value.value))
            return Cast(dtype, value)
        return IntImm(dtype, value.value)
    vd = DataType(value.dtype)
    if dt.lanes > 1 and vd.lanes == 1:
        return broadcast(cast(value, str(dt.element_of())), dt.lanes)
    if isinstance(value, Broadcast) and dt.lanes == vd.lanes:
        return broadcast(cast(value.value, str(dt.element_of())), dt.lanes)
    return Cast(dtype, value)


# --- arithmetic builders with constant folding ----------------------------------------


def _int_result(dtype: str, value: int) -> IntImm:
    return IntImm(dtype, value)


def add(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if _is_const(a) and _is_const(b):
        return const(a.value + b.value, a.dtype)
    if _is_zero(b):
        return a
    if _is_zero(a):
        return b
    return Add(a, b, a.dtype)


def sub(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if _is_const(a) and _is_const(b):
        return const(a.value - b.value, a.dtype)
    if _is_zero(b):
        return a
    return Sub(a, b, a.dtype)


def mul(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if _is_const(a) and _is_const(b):
        return const(a.value * b.value, a.dtype)
    if _is_one(b):
        return a
    if _is_one(a):
        return b
    if DataType(a.dtype).is_integer and (_is_zero(a) or _is_zero(b)):
        return const(0, a.dtype)
    return Mul(a, b, a.dtype)


def _check_divisor(b: PrimExpr, what: str) -> None:
    if isinstance(b, IntImm) and b.value == 0:
        raise TIRError(f"{what} by the constant zero")


def truediv(a, b) -> PrimExpr:
    """`a / b`: float division; on integers TVM's semantics are truncating division."""
    a, b = match_types(a, b)
    if DataType(a.dtype).is_float:
        if _is_const(a) and _is_const(b) and b.value != 0:
            return const(a.value / b.value, a.dtype)
        if _is_one(b):
            return a
        return Div(a, b, a.dtype)
    return truncdiv(a, b)


def div(a, b) -> PrimExpr:
    """Division with C semantics (`tir.Div`)."""
    return truediv(a, b)


def truncdiv(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    _check_divisor(b, "integer division")
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        q = abs(a.value) // abs(b.value)
        return _int_result(a.dtype, q if (a.value >= 0) == (b.value > 0) else -q)
    if _is_one(b):
        return a
    return Div(a, b, a.dtype)


def truncmod(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    _check_divisor(b, "integer modulo")
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        r = abs(a.value) % abs(b.value)
        return _int_result(a.dtype, r if a.value >= 0 else -r)
    if _is_one(b):
        return const(0, a.dtype)
    return Mod(a, b, a.dtype)


def floordiv(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if DataType(a.dtype).is_float:
        from .op import floor

        return floor(truediv(a, b))
    _check_divisor(b, "floor division")
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return _int_result(a.dtype, a.value // b.value)
    if _is_one(b):
        return a
    return FloorDiv(a, b, a.dtype)


def floormod(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if DataType(a.dtype).is_float:
        from .op import floor

        return sub(a, mul(b, floor(truediv(a, b))))
    _check_divisor(b, "floor modulo")
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return _int_result(a.dtype, a.value % b.value)
    if _is_one(b):
        return const(0, a.dtype)
    return FloorMod(a, b, a.dtype)


def min_value_of(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if _is_const(a) and _is_const(b):
        return const(min(a.value, b.value), a.dtype)
    if a is b:
        return a
    return Min(a, b, a.dtype)


def max_value_of(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if _is_const(a) and _is_const(b):
        return const(max(a.value, b.value), a.dtype)
    if a is b:
        return a
    return Max(a, b, a.dtype)


_FOLD_CMP = {
    "EQ": lambda x, y: x == y,
    "NE": lambda x, y: x != y,
    "LT": lambda x, y: x < y,
    "LE": lambda x, y: x <= y,
    "GT": lambda x, y: x > y,
    "GE": lambda x, y: x >= y,
}


def _compare(cls, a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if _is_const(a) and _is_const(b):
        return const(bool(_FOLD_CMP[cls.__name__](a.value, b.value)), "bool")
    lanes = DataType(a.dtype).lanes
    return cls(a, b, "bool" if lanes == 1 else f"boolx{lanes}")


def _as_bool(x) -> PrimExpr:
    x = convert(x)
    if not DataType(x.dtype).is_bool:
        raise TIRError(f"logical operators need bool operands, got {x.dtype}")
    return x


def logical_and(a, b) -> PrimExpr:
    a, b = _as_bool(a), _as_bool(b)
    if isinstance(a, IntImm):
        return b if a.value else a
    if isinstance(b, IntImm):
        return a if b.value else b
    return And(a, b, a.dtype)


def logical_or(a, b) -> PrimExpr:
    a, b = _as_bool(a), _as_bool(b)
    if isinstance(a, IntImm):
        return a if a.value else b
    if isinstance(b, IntImm):
        return b if b.value else a
    return Or(a, b, a.dtype)


def logical_not(a) -> PrimExpr:
    a = _as_bool(a)
    if isinstance(a, IntImm):
        return const(not a.value, "bool")
    if isinstance(a, Not):
        return a.a
    return Not(a, a.dtype)


def select(condition, true_value, false_value) -> PrimExpr:
    condition = _as_bool(condition)
    true_value, false_value = match_types(true_value, false_value)
    return Select(condition, true_value, false_value, true_value.dtype)


def let(var: Var, value, body) -> PrimExpr:
    body = convert(body)
    return Let(var, convert(value, var.dtype), body, body.dtype)


def ramp(base, stride, lanes: int) -> PrimExpr:
    base = convert(base)
    stride = _operand(stride, base)
    return Ramp(base, stride, lanes, str(DataType(base.dtype).with_lanes(lanes)))


def all_of(*conds) -> PrimExpr:
    """Logical and of all conditions (`tir.all`)."""
    result = const(True)
    for cond in conds:
        result = logical_and(result, cond)
    return result


def any_of(*conds) -> PrimExpr:
    """Logical or of all conditions (`tir.any`)."""
    result = const(False)
    for cond in conds:
        result = logical_or(result, cond)
    return result


EqualOp._node_cls = EQ
