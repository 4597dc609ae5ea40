"""Generic operators: the builders behind Python operators on TensorIR expressions.

Conversion of Python values to constants, type matching (int32 with int64 gives int64,
ints with floats give the float), and arithmetic, comparison and logical builders that fold
constants on the way, as TVM's `tir.generic` operators do. `graphc.tir.expr` re-exports
them, since the node classes' Python operators call them.

>>> from graphc.tir import Var
>>> add(Var("i"), 0).name
'i'
>>> floordiv(-7, 2).value
-4
"""

from __future__ import annotations

import math

from ..errors import TIRError
from ..ir.dtype import DataType, canonical
from .expr import (
    Add,
    And,
    Broadcast,
    Cast,
    Div,
    EqualOp,
    FloatImm,
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
    Sub,
    Var,
)  # fmt: skip

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
    info = _CONST_DTYPES.get(dtype) if type(dtype) is str else None
    if info is None:
        info = _const_dtype(dtype)
    name, lanes, element, is_float = info
    if lanes > 1:
        return Broadcast(const(value, element), lanes, name)
    if is_float:
        return FloatImm(name, float(value))
    if isinstance(value, float) and not value.is_integer():
        raise TIRError(f"cannot make a {dtype} constant from {value!r}")
    return IntImm(name, int(value))


# dtype string -> (canonical dtype, lanes, the lane's dtype, is float), for `const`
_CONST_DTYPES: dict[str, tuple] = {}


def _const_dtype(dtype) -> tuple:
    dt = DataType(dtype)
    info = (str(dt), dt.lanes, str(dt.element_of()), dt.is_float)
    if type(dtype) is str:
        _CONST_DTYPES[dtype] = info
    return info


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


# node class -> the folding builder that makes it (rebuild a changed node so that constants fold)
BINARY_BUILDERS = {
    Add: add, Sub: sub, Mul: mul, FloorDiv: floordiv, FloorMod: floormod,
    Min: min_value_of, Max: max_value_of, Div: truediv, Mod: truncmod,
}

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
