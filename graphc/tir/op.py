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

import enum
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
# host code of GPU functions (SplitHostDevice): launch a kernel, allocate device memory
register_intrin("tir.device_launch", None, pure=False)
register_intrin("tir.device_alloc", 1, pure=False)
register_intrin("tir.device_free", 1, pure=False)
# warp-level primitives (CUDA's __shfl_*_sync, __activemask), made by LowerThreadAllreduce
register_intrin("tir.tvm_warp_activemask", 0, pure=False)
register_intrin("tir.tvm_warp_shuffle", 4, pure=False)  # (mask, value, src lane, width)
register_intrin("tir.tvm_warp_shuffle_down", 4, pure=False)  # (mask, value, delta, width)
register_intrin("tir.assume", 1, pure=False)
register_intrin("tir.address_of", 1)
# warp-wide 16x16x16 tensor-core operations (graphc/tir/tensor_intrin.py); each 16 x 16 tile is
# given by the loads of its first and last elements, so the row stride survives compaction and
# flattening: fill(acc, acc_last, value), load_a/load_b(frag, frag_last, src, src_last),
# mma(d, d_last, a, a_last, b, b_last, c, c_last), store(dst, dst_last, acc, acc_last)
# (load_bt and mma_bt: B read as [j, k], a column-major B tile)
for _name, _arity in (("fill", 3), ("load_a", 4), ("load_b", 4), ("load_bt", 4), ("mma", 8), ("mma_bt", 8),
                      ("store", 4)):
    register_intrin(f"tir.wmma_{_name}", _arity, pure=False)
register_intrin("tir.infinity", 0)
register_intrin("tir.check_index", 4)
register_intrin("tir.check_size", 3)


class CallEffectKind(enum.IntEnum):
    """What a call does besides computing its value (TVM's `tir.CallEffectKind`), the value of
    an intrinsic's "TCallEffectKind" attribute (`graphc.ir.register_op_attr`)."""

    ExprAnnotation = 0
    Pure = 1
    ReadState = 2
    UpdateState = 3
    Opaque = 3


def call_intrin(dtype: str, name: str, *args) -> Call:
    """A call of the intrinsic `name` (with or without the "tir." prefix) returning `dtype`.

    The intrinsic must be registered: with `register_intrin`, or, as in TVM, by giving it an
    effect kind with `graphc.ir.register_op_attr(name, "TCallEffectKind", CallEffectKind.Pure)`.
    """
    if not name.startswith("tir."):
        name = "tir." + name
    intrin = INTRINSICS.get(name)
    if intrin is None:
        from ..ir.op_attr import get_op_attr

        effect = get_op_attr(name, "TCallEffectKind")
        if effect is not None:
            intrin = register_intrin(name, None, pure=int(effect) == CallEffectKind.Pure)
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


INDEX_ERROR = "index {index} is out of range [{lo}, {hi})"


def check_index(index, extent, wrap=False, message: str = INDEX_ERROR) -> PrimExpr:
    """`index` as an int64 position in [0, extent), checked when the kernel runs.

    With `wrap`, a negative index counts from the end once (numpy, ONNX, Python's `x[-1]`);
    without it only [0, extent) is valid (torch's embedding, gather and scatter). Any other
    value stops the kernel before the access: it returns an error code, and the runtime
    raises `IndexError` with `message` formatted with the fields `{index}` (the value as
    given), `{lo}` and `{hi}` (the valid range: [-extent, extent) with `wrap`, else
    [0, extent)). Other braces in `message` must be doubled, as for `str.format`.

    >>> from graphc.tir import Var
    >>> i = Var("i", "int32")
    >>> check_index(i, 10, True).args[:3]
    (T.Cast("int64", i), T.int64(10), T.bool(True))
    >>> check_index(-3, 10, True)
    T.int64(7)
    """
    from .expr import IntImm, StringImm

    index = convert(index)
    if not DataType(index.dtype).is_integer or DataType(index.dtype).lanes != 1:
        raise TIRError(f"tir.check_index needs a scalar integer index, got {index.dtype}")
    index, extent = cast(index, "int64"), cast(convert(extent), "int64")
    wrap = bool(wrap.value if isinstance(wrap, IntImm) else wrap)
    if isinstance(index, IntImm) and isinstance(extent, IntImm):
        pos = index.value + extent.value if wrap and index.value < 0 else index.value
        if 0 <= pos < extent.value:
            return const(pos, "int64")
    text = message.value if isinstance(message, StringImm) else str(message)
    return Call("int64", "tir.check_index", (index, extent, const(wrap, "bool"), StringImm(text)))


def check_size(value, ok, message: str) -> PrimExpr:
    """`value` (an int64 size computed when the kernel runs) when `ok` holds; otherwise the
    kernel stops, returning an error code, and the runtime raises `ValueError` with `message`
    formatted with the field `{value}`. `ok` says what a valid size is (not negative, computed
    without wrapping around); other braces in `message` must be doubled.

    >>> from graphc.tir import Var
    >>> n = Var("n", "int64")
    >>> check_size(n - 1, n >= 1, "size {value} is negative").op
    'tir.check_size'
    """
    from .expr import IntImm, StringImm

    value, ok = cast(convert(value), "int64"), convert(ok)
    if isinstance(ok, IntImm) and ok.value:
        return value
    text = message.value if isinstance(message, StringImm) else str(message)
    return Call("int64", "tir.check_size", (value, ok, StringImm(text)))


def likely(cond) -> PrimExpr:
    """Mark a condition as likely true (a hint to code generation)."""
    cond = convert(cond)
    return Call(cond.dtype, "tir.likely", (cond,))


def tvm_storage_sync(scope: str = "shared") -> PrimExpr:
    """A barrier: every thread of the block waits here until all arrive (`scope` is "shared")."""
    from .expr import StringImm

    scope = scope if isinstance(scope, StringImm) else StringImm(scope)
    return Call("int32", "tir.tvm_storage_sync", (scope,))


def device_launch(name, index, grid_x, grid_y, grid_z, block_x, block_y, block_z, dyn_shared, *args):
    """Host code: launch kernel `name` (number `index` of its module) on a grid of blocks."""
    from .expr import StringImm

    name = name if isinstance(name, StringImm) else StringImm(name)
    dims = (index, grid_x, grid_y, grid_z, block_x, block_y, block_z, dyn_shared)
    args = (*(convert(d) for d in dims), *(convert(a) for a in args))
    return Call("int32", "tir.device_launch", (name, *args))


def device_alloc(nbytes) -> PrimExpr:
    """Host code: `nbytes` of memory on the device the function runs on (a handle)."""
    return Call("handle", "tir.device_alloc", (convert(nbytes),))


def device_free(ptr) -> PrimExpr:
    """Host code: release memory from `device_alloc`."""
    return Call("int32", "tir.device_free", (convert(ptr),))


def tvm_thread_allreduce(kind: str, value, cond, dest, *threads) -> PrimExpr:
    """Combine `value` (where `cond` holds) across the threads `threads` into `dest` (a load of a
    "local" buffer); `kind` is "sum", "prod", "max" or "min". LowerThreadAllreduce lowers it."""
    from .expr import StringImm

    value = convert(value)
    kind = kind if isinstance(kind, StringImm) else StringImm(kind)
    return Call(value.dtype, "tir.tvm_thread_allreduce",
                (kind, value, convert(cond), dest, *(convert(t) for t in threads)))


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
    "CallEffectKind",
    "device_alloc",
    "device_free",
    "device_launch",
    "tvm_storage_sync",
    "tvm_thread_allreduce",
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
    "check_index",
    "check_size",
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
