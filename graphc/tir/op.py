"""Intrinsic calls (`tir.exp`, `tir.sqrt`, ...) and the helpers that build them.

Every intrinsic is a `Call` whose `op` is a name in `INTRINSICS`. Codegen lowers
each name per target (see `graphc.target.intrin`); users can register their own
intrinsics with `register_intrin`.

>>> from graphc.tir import Var, const
>>> x = Var("x", "float32")
>>> exp(x).op
'tir.exp'
>>> sqrt(const(4.0)).dtype
'float32'
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import TIRError
from ..ir.dtype import DataType
from .expr import (
    Call,
    PrimExpr,
    cast,
    const,
    convert,
    logical_and,
    logical_or,
    match_types,
    max_value_of,
    min_value_of,
    select,
)


@dataclass(frozen=True)
class Intrinsic:
    """What graphc knows about one intrinsic: its arity and whether it is pure."""

    name: str
    num_args: int | None
    pure: bool = True
    float_only: bool = False


INTRINSICS: dict[str, Intrinsic] = {}


def register_intrin(name: str, num_args: int | None, pure: bool = True, float_only: bool = False):
    """Register an intrinsic named `name` (e.g. "tir.mylog"); returns its record."""
    intrin = Intrinsic(name, num_args, pure, float_only)
    INTRINSICS[name] = intrin
    return intrin


_UNARY_FLOAT = [
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
    "tanh", "sigmoid", "erf", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "floor", "ceil", "round", "nearbyint", "trunc",
]  # fmt: skip
for _name in _UNARY_FLOAT:
    register_intrin(f"tir.{_name}", 1, float_only=True)
for _name in ["fabs", "abs", "isnan", "isinf", "isfinite", "popcount", "bitwise_not"]:
    register_intrin(f"tir.{_name}", 1)
for _name in ["pow", "atan2", "fmod", "hypot", "copysign", "nextafter", "ldexp"]:
    register_intrin(f"tir.{_name}", 2, float_only=True)
for _name in ["shift_left", "shift_right", "bitwise_and", "bitwise_or", "bitwise_xor"]:
    register_intrin(f"tir.{_name}", 2)
register_intrin("tir.if_then_else", 3)
register_intrin("tir.likely", 1)
register_intrin("tir.reinterpret", 1)
register_intrin("tir.call_extern", None, pure=False)
register_intrin("tir.call_pure_extern", None)
register_intrin("tir.tvm_thread_allreduce", None, pure=False)
register_intrin("tir.tvm_storage_sync", None, pure=False)
register_intrin("tir.assume", 1, pure=False)
register_intrin("tir.address_of", 1)
register_intrin("tir.infinity", 0)


def call_intrin(dtype: str, name: str, *args) -> Call:
    """A call of the intrinsic `name` (with or without the "tir." prefix) returning `dtype`."""
    if not name.startswith("tir."):
        name = "tir." + name
    intrin = INTRINSICS.get(name)
    if intrin is None:
        raise TIRError(f"unknown intrinsic {name!r}; register it with tir.register_intrin first")
    args = tuple(convert(a) for a in args)
    if intrin.num_args is not None and len(args) != intrin.num_args:
        raise TIRError(f"{name} takes {intrin.num_args} arguments, got {len(args)}")
    return Call(dtype, name, args)


def call_extern(dtype: str, func_name: str, *args) -> Call:
    """A call of the external C function `func_name` (may have side effects)."""
    return Call(dtype, "tir.call_extern", (const_str(func_name), *(convert(a) for a in args)))


def call_pure_extern(dtype: str, func_name: str, *args) -> Call:
    """A call of the external, side-effect free C function `func_name`."""
    return Call(dtype, "tir.call_pure_extern", (const_str(func_name), *(convert(a) for a in args)))


def const_str(text: str):
    from .expr import StringImm

    return StringImm(text)


def _float_arg(x, name: str) -> PrimExpr:
    x = convert(x)
    dt = DataType(x.dtype)
    if not dt.is_float:
        if dt.is_integer or dt.is_bool:
            return cast(x, "float32" if dt.lanes == 1 else f"float32x{dt.lanes}")
        raise TIRError(f"tir.{name} needs a float argument, got {x.dtype}")
    return x


def _unary_float(name: str):
    def build(x) -> PrimExpr:
        x = _float_arg(x, name)
        return Call(x.dtype, f"tir.{name}", (x,))

    build.__name__ = name
    build.__doc__ = f"The intrinsic tir.{name}, elementwise on a float expression."
    return build


exp = _unary_float("exp")
exp2 = _unary_float("exp2")
exp10 = _unary_float("exp10")
log = _unary_float("log")
log2 = _unary_float("log2")
log10 = _unary_float("log10")
log1p = _unary_float("log1p")
expm1 = _unary_float("expm1")
sqrt = _unary_float("sqrt")
rsqrt = _unary_float("rsqrt")
tanh = _unary_float("tanh")
sigmoid = _unary_float("sigmoid")
erf = _unary_float("erf")
sin = _unary_float("sin")
cos = _unary_float("cos")
tan = _unary_float("tan")
asin = _unary_float("asin")
acos = _unary_float("acos")
atan = _unary_float("atan")
sinh = _unary_float("sinh")
cosh = _unary_float("cosh")
asinh = _unary_float("asinh")
acosh = _unary_float("acosh")
atanh = _unary_float("atanh")
nearbyint = _unary_float("nearbyint")


def _rounding(name: str):
    def build(x) -> PrimExpr:
        x = convert(x)
        if not DataType(x.dtype).is_float:
            return x  # rounding an integer is the identity
        return Call(x.dtype, f"tir.{name}", (x,))

    build.__name__ = name
    build.__doc__ = f"The intrinsic tir.{name}; the identity on integers."
    return build


floor = _rounding("floor")
ceil = _rounding("ceil")
round = _rounding("round")  # noqa: A001 - TVM's name
trunc = _rounding("trunc")


def fabs(x) -> PrimExpr:
    """Absolute value of a float."""
    x = _float_arg(x, "fabs")
    return Call(x.dtype, "tir.fabs", (x,))


def abs(x) -> PrimExpr:  # noqa: A001 - TVM's name
    """Absolute value; for integers |x|, for floats fabs."""
    x = convert(x)
    dt = DataType(x.dtype)
    if dt.is_uint or dt.is_bool:
        return x
    if hasattr(x, "value") and isinstance(x.value, int | float):
        return const(-x.value if x.value < 0 else x.value, x.dtype)
    if dt.is_float:
        return Call(x.dtype, "tir.fabs", (x,))
    return select(x < 0, -x, x)


def _float_predicate(name: str):
    def build(x) -> PrimExpr:
        x = convert(x)
        dt = DataType(x.dtype)
        if not dt.is_float:
            return const(name == "isfinite", "bool")
        return Call("bool" if dt.lanes == 1 else f"boolx{dt.lanes}", f"tir.{name}", (x,))

    build.__name__ = name
    build.__doc__ = f"tir.{name}: a bool per element (constant for integer inputs)."
    return build


isnan = _float_predicate("isnan")
isinf = _float_predicate("isinf")
isfinite = _float_predicate("isfinite")


def _binary_float(name: str):
    def build(x, y) -> PrimExpr:
        x, y = match_types(_float_arg(x, name), y)
        x, y = _float_arg(x, name), _float_arg(y, name)
        return Call(x.dtype, f"tir.{name}", (x, y))

    build.__name__ = name
    build.__doc__ = f"The intrinsic tir.{name} on two float expressions."
    return build


pow = _binary_float("pow")  # noqa: A001 - TVM's name
power = pow
atan2 = _binary_float("atan2")
fmod = _binary_float("fmod")
hypot = _binary_float("hypot")
copysign = _binary_float("copysign")
nextafter = _binary_float("nextafter")


def _binary_int(name: str):
    def build(x, y) -> PrimExpr:
        x, y = match_types(x, y)
        return Call(x.dtype, f"tir.{name}", (x, y))

    build.__name__ = name
    return build


shift_left = _binary_int("shift_left")
shift_right = _binary_int("shift_right")
bitwise_and = _binary_int("bitwise_and")
bitwise_or = _binary_int("bitwise_or")
bitwise_xor = _binary_int("bitwise_xor")


def bitwise_not(x) -> PrimExpr:
    x = convert(x)
    return Call(x.dtype, "tir.bitwise_not", (x,))


def popcount(x) -> PrimExpr:
    x = convert(x)
    return Call(x.dtype, "tir.popcount", (x,))


def if_then_else(cond, t, f) -> PrimExpr:
    """`t` if `cond` else `f`, evaluating only the side taken (unlike Select)."""
    cond = convert(cond)
    t, f = match_types(t, f)
    from .expr import IntImm

    if isinstance(cond, IntImm):
        return t if cond.value else f
    return Call(t.dtype, "tir.if_then_else", (cond, t, f))


def likely(cond) -> PrimExpr:
    """Mark a condition as likely true (a hint to code generation)."""
    cond = convert(cond)
    return Call(cond.dtype, "tir.likely", (cond,))


def reinterpret(dtype: str, value) -> PrimExpr:
    """The bits of `value` read as `dtype` (same width)."""
    value = convert(value)
    return Call(dtype, "tir.reinterpret", (value,))


def infinity(dtype: str) -> PrimExpr:
    """+inf for float types; the maximum value for integer types."""
    dt = DataType(dtype)
    if dt.is_float:
        return const(float("inf"), dtype)
    return const(dt.max_value(), dtype)


def _finfo(np_dtype):
    import numpy as np

    try:
        return np.finfo(np_dtype)
    except ValueError:  # bfloat16 and the other ml_dtypes floats
        import ml_dtypes

        return ml_dtypes.finfo(np_dtype)


def max_value(dtype: str) -> PrimExpr:
    """The largest finite value of `dtype`."""
    dt = DataType(dtype)
    if dt.is_float:
        return const(float(_finfo(dt.numpy_dtype()).max), dtype)
    return const(dt.max_value(), dtype)


def min_value(dtype: str) -> PrimExpr:
    """The smallest finite value of `dtype`."""
    dt = DataType(dtype)
    if dt.is_float:
        return const(float(_finfo(dt.numpy_dtype()).min), dtype)
    return const(dt.min_value(), dtype)


def min(a, b, *rest) -> PrimExpr:  # noqa: A001 - TVM's name
    result = min_value_of(a, b)
    for x in rest:
        result = min_value_of(result, x)
    return result


def max(a, b, *rest) -> PrimExpr:  # noqa: A001 - TVM's name
    result = max_value_of(a, b)
    for x in rest:
        result = max_value_of(result, x)
    return result


def all(*conds) -> PrimExpr:  # noqa: A001 - TVM's name
    result = const(True)
    for c in conds:
        result = logical_and(result, c)
    return result


def any(*conds) -> PrimExpr:  # noqa: A001 - TVM's name
    result = const(False)
    for c in conds:
        result = logical_or(result, c)
    return result


def ceildiv(a, b) -> PrimExpr:
    """ceil(a / b) for integers, as `(a + b - 1) // b` for positive b."""
    from .expr import floordiv

    a, b = match_types(a, b)
    return floordiv(a + b - 1, b)


# The helpers re-exported as tir.<name>, te.<name> and T.<name>.
__all__ = [
    "abs",
    "acos",
    "acosh",
    "all",
    "any",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "call_extern",
    "call_intrin",
    "call_pure_extern",
    "ceil",
    "ceildiv",
    "copysign",
    "cos",
    "cosh",
    "erf",
    "exp",
    "exp2",
    "exp10",
    "expm1",
    "fabs",
    "floor",
    "fmod",
    "hypot",
    "if_then_else",
    "infinity",
    "isfinite",
    "isinf",
    "isnan",
    "likely",
    "log",
    "log1p",
    "log2",
    "log10",
    "max",
    "max_value",
    "min",
    "min_value",
    "nearbyint",
    "nextafter",
    "popcount",
    "pow",
    "power",
    "register_intrin",
    "reinterpret",
    "round",
    "rsqrt",
    "shift_left",
    "shift_right",
    "sigmoid",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
]
