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

from typing import Any

from ..errors import TIRError
from ..ir.dtype import DataType, canonical
from ..ir.node import Node, node, repr_text


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
        return repr_text(self)


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

    __structural_number__ = True  # as an attribute value, equal to the Python number it holds

    dtype: str
    value: int

    def __init__(self, dtype: str, value: int):
        info = _INT_DTYPES.get(dtype) if type(dtype) is str else None
        if info is None:
            info = _int_dtype(dtype)
        dtype, is_bool, lo, hi = info
        value = int(value)
        if is_bool:
            value = 1 if value else 0
        elif not lo <= value <= hi:
            value = _wrap(value, DataType(dtype))
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

    __structural_number__ = True  # as an attribute value, equal to the Python number it holds

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


# dtype string -> (canonical dtype, is bool, min, max) of the IntImm dtypes seen (IntImm is the
# most made node: its checks read these instead of parsing the dtype again)
_INT_DTYPES: dict[str, tuple] = {}


def _int_dtype(dtype) -> tuple:
    name = canonical(dtype)
    dt = DataType(name)
    if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
        raise TIRError(f"IntImm needs a scalar integer or bool dtype, got {name}")
    info = (name, dt.is_bool, dt.min_value(), dt.max_value())
    if type(dtype) is str:
        _INT_DTYPES[dtype] = info
    return info


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
        begin, end = match_types(begin, end)  # (0, n) with an int64 n is an int64 range
        return Range(begin, end - begin if not _is_zero(begin) else end)

    def __repr__(self) -> str:
        return f"Range({self.min!r}, {self.extent!r})"


# The builders live in generic.py; the node classes' Python operators call them from here.
from .generic import (  # noqa: E402, F401 - re-exported
    _as_bool,
    _check_divisor,
    _compare,
    _int_result,
    _is_const,
    _is_one,
    _is_zero,
    _operand,
    add,
    all_of,
    any_of,
    broadcast,
    cast,
    const,
    convert,
    div,
    floordiv,
    floormod,
    let,
    logical_and,
    logical_not,
    logical_or,
    match_types,
    max_value_of,
    min_value_of,
    mul,
    ramp,
    select,
    sub,
    truediv,
    truncdiv,
    truncmod,
)

EqualOp._node_cls = EQ
