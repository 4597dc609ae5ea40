"""Elementwise math: unary functions, binary arithmetic and comparisons, logic and bits,
the variadic Sum/Max/Min/Mean, Clip, Where, Cast and CastLike.

Binary operators broadcast the numpy way from opset 7; before it, `broadcast=1` with an
`axis` aligns the second operand with the first at `axis`. Integer division truncates
toward zero and Mod follows the dividend's sign only with `fmod=1`, as ONNX says.
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from ...topi.float_formats import FLOAT_FORMATS
from .common import Emitting, cast, const_like, dtype_of, fold, ndim_of, norm_axis
from .dtypes import NARROW, NARROW_BITS, graphc_dtype, is_float, narrow_format, numpy_dtype, onnx_elem_type
from .importer import Known
from .registry import converter

op = Emitting(relax.op)

# -- unary ----------------------------------------------------------------------------------

_UNARY = {
    "Abs": (op.abs, np.abs),
    "Neg": (op.negative, np.negative),
    "Exp": (op.exp, np.exp),
    "Log": (op.log, np.log),
    "Sqrt": (op.sqrt, np.sqrt),
    "Sin": (op.sin, np.sin),
    "Cos": (op.cos, np.cos),
    "Tan": (op.tan, np.tan),
    "Asin": (op.asin, np.arcsin),
    "Acos": (op.acos, np.arccos),
    "Atan": (op.atan, np.arctan),
    "Sinh": (op.sinh, np.sinh),
    "Cosh": (op.cosh, np.cosh),
    "Asinh": (op.asinh, np.arcsinh),
    "Acosh": (op.acosh, np.arccosh),
    "Atanh": (op.atanh, np.arctanh),
    "Tanh": (op.tanh, np.tanh),
    "Sigmoid": (op.sigmoid, None),
    "Erf": (op.erf, None),
    "Floor": (op.floor, np.floor),
    "Ceil": (op.ceil, np.ceil),
    "Round": (op.round, np.round),
    "Sign": (op.sign, np.sign),
    "Not": (op.logical_not, np.logical_not),
    "BitwiseNot": (op.bitwise_not, np.invert),
}


def _unary(relax_fn, numpy_fn):
    def convert(node):
        if numpy_fn is not None:
            folded = fold(node, lambda x: numpy_fn(x) if x.dtype != object else None)
            if folded is not None:
                return folded
        return relax_fn(node.input(0))

    return convert


for _name, (_fn, _np) in _UNARY.items():
    converter(_name, since=1)(_unary(_fn, _np))


@converter("Reciprocal", since=1)
def reciprocal(node):
    x = node.input(0)
    return op.divide(const_like(1, x), x)


@converter("IsNaN", since=9)
def isnan(node):
    return op.isnan(node.input(0))


@converter("IsInf", since=10)
def isinf(node):
    x = node.input(0)
    pos, neg = node.attr("detect_positive"), node.attr("detect_negative")
    inf = op.isinf(x)
    if pos and neg:
        return inf
    if not pos and not neg:
        return op.zeros_like(x, "bool")
    sign = op.greater(x, const_like(0, x)) if pos else op.less(x, const_like(0, x))
    return op.logical_and(inf, sign)


# -- binary ---------------------------------------------------------------------------------


def _trunc_div(a, b):
    if a.dtype == object or b.dtype == object:
        return np.vectorize(
            lambda x, y: (
                tir.truncdiv(x, y)
                if isinstance(x, tir.PrimExpr) or isinstance(y, tir.PrimExpr)
                else int(np.trunc(x / y))
            ),
            otypes=[object],
        )(a, b)
    if np.issubdtype(a.dtype, np.integer):
        q = np.floor_divide(a, b)
        r = np.remainder(a, b)
        return (q + ((r != 0) & ((a < 0) ^ (b < 0))).astype(q.dtype)).astype(a.dtype)
    return np.divide(a, b).astype(a.dtype)


def _same_dtype(fn):
    def run(a, b):
        out = fn(a, b)
        return (
            out.astype(a.dtype) if out.dtype != object and a.dtype != object and out.dtype != a.dtype else out
        )

    return run


_BINARY = {
    "Add": (op.add, _same_dtype(np.add)),
    "Sub": (op.subtract, _same_dtype(np.subtract)),
    "Mul": (op.multiply, _same_dtype(np.multiply)),
    "Div": (op.divide, _trunc_div),
    "Equal": (op.equal, np.equal),
    "Less": (op.less, np.less),
    "Greater": (op.greater, np.greater),
    "LessOrEqual": (op.less_equal, np.less_equal),
    "GreaterOrEqual": (op.greater_equal, np.greater_equal),
    "And": (op.logical_and, np.logical_and),
    "Or": (op.logical_or, np.logical_or),
    "Xor": (op.logical_xor, np.logical_xor),
    "BitwiseAnd": (op.bitwise_and, np.bitwise_and),
    "BitwiseOr": (op.bitwise_or, np.bitwise_or),
    "BitwiseXor": (op.bitwise_xor, np.bitwise_xor),
}
_NUMERIC_ONLY = {
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "And",
    "Or",
    "Xor",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
}


_COMPARE = {
    "Equal": tir.EQ,
    "Less": tir.LT,
    "Greater": tir.GT,
    "LessOrEqual": tir.LE,
    "GreaterOrEqual": tir.GE,
}


def _compare_sizes(node, name, x, y):
    """A comparison of symbolic sizes (object arrays of PrimExprs and ints) as a bool array when
    every element is decided at import (sizes are never negative, so `n == -1` is false: the
    `Shape -> Equal(-1) -> Where` chains of exported `expand` calls fold), else None."""
    if name not in _COMPARE:
        return None
    analyzer = node.importer.analyzer()
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, dtype=bool)
    for index in np.ndindex(x.shape):
        a, b = (v if isinstance(v, tir.PrimExpr) else tir.const(int(v), "int64")
                for v in (x[index], y[index]))
        if a.dtype != b.dtype:
            return None
        decided = analyzer.simplify(_COMPARE[name](a, b))
        if not isinstance(decided, tir.IntImm):
            return None
        out[index] = bool(decided.value)
    return out


def _legacy_operands(node):
    """Opset < 7: `broadcast=1` aligns b with a at `axis` (default: the trailing axes)."""
    a, b = node.input(0), node.input(1)
    if not node.attr("broadcast", 0):
        return a, b
    axis = node.attr("axis", None)
    if axis is None:
        return a, b
    nd_a, nd_b = ndim_of(a), ndim_of(b)
    axis = norm_axis(axis, nd_a, node)
    trailing = nd_a - axis - nd_b
    if trailing > 0:
        b = op.expand_dims(b, list(range(nd_b, nd_b + trailing)))
    return a, b


def _binary(name, relax_fn, numpy_fn, legacy: bool):
    def convert(node):
        if legacy:
            node.attr("consumed_inputs", None)
            a, b = _legacy_operands(node)
        else:
            folded = fold(
                node,
                lambda x, y: (
                    _compare_sizes(node, name, x, y)
                    if name in _NUMERIC_ONLY and object in (x.dtype, y.dtype)
                    else numpy_fn(x, y)
                ),
            )
            if folded is not None:
                return folded
            a, b = node.input(0), node.input(1)
        return relax_fn(a, b)

    return convert


for _name, (_fn, _np) in _BINARY.items():
    converter(_name, since=7)(_binary(_name, _fn, _np, legacy=False))
for _name in ("Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "And", "Or", "Xor"):
    converter(_name, since=1)(_binary(_name, *_BINARY[_name], legacy=True))


@converter("Pow", since=1)
def power(node):
    if node.version < 7:
        x, y = _legacy_operands(node)
    else:
        x, y = node.input(0), node.input(1)
    dx, dy = dtype_of(x), dtype_of(y)
    if is_float(dx):
        return op.power(x, cast(y, dx))
    if is_float(dy):
        return cast(op.power(cast(x, dy), y), dx)
    return op.power(x, cast(y, dx))


@converter("Mod", since=10)
def mod(node):
    a, b = node.input(0), node.input(1)
    fmod = node.attr("fmod")
    if fmod:
        return op.mod(a, b)
    if is_float(dtype_of(a)):
        return _float_floor_mod(a, b)
    return op.floor_mod(a, b)


def _float_floor_mod(a, b):
    """`a - floor(a / b) * b` for floats with IEEE edge cases (the sign of `b`; an infinite
    `b` keeps a finite `a` of its sign and is the answer otherwise): the truncated remainder,
    moved by `b` where its sign differs from b's, a zero taking b's sign."""
    r = op.mod(a, b)
    zero = const_like(0, a)
    b_neg = op.less(b, zero)
    moved = op.logical_and(op.not_equal(r, zero), op.not_equal(op.less(r, zero), b_neg))
    r = op.where(moved, op.add(r, b), r)
    signed_zero = op.where(b_neg, const_like(-0.0, a), zero)
    return op.where(op.equal(r, zero), signed_zero, r)


@converter("BitShift", since=11)
def bit_shift(node):
    """A shift by a negative amount or by the width or more leaves the sign fill alone
    (-1 for a right shift of a negative value, else 0), as opset 28 says; the shift itself
    only ever sees an amount inside the width."""
    direction = node.expect("direction", "LEFT", "RIGHT")
    fn = op.left_shift if direction == "LEFT" else op.right_shift
    x, y = node.input(0), node.input(1)
    dtype = dtype_of(x)
    width = numpy_dtype(dtype).itemsize * 8
    inside = op.less(y, const_like(width, y))
    if not dtype.startswith("uint"):
        inside = op.logical_and(inside, op.greater_equal(y, const_like(0, y)))
    shifted = fn(x, op.where(inside, y, op.zeros_like(y)))
    fill = op.zeros_like(x)
    if direction == "RIGHT" and not dtype.startswith("uint"):
        fill = op.where(op.less(x, const_like(0, x)), const_like(-1, x), fill)
    return op.where(inside, shifted, fill)


def _variadic(relax_fn, numpy_fn):
    def convert(node):
        node.attr("consumed_inputs", None)
        folded = fold(node, lambda *xs: _reduce_np(numpy_fn, xs))
        if folded is not None:
            return folded
        values = node.input_list()
        out = values[0]
        for v in values[1:]:
            out = relax_fn(out, v)
        return out

    return convert


def _reduce_np(fn, arrays):
    if any(a.dtype == object for a in arrays):
        return None
    out = arrays[0]
    for a in arrays[1:]:
        out = fn(out, a)
    return out.astype(arrays[0].dtype)


for _name, _fn, _np in (
    ("Sum", op.add, np.add),
    ("Max", op.maximum, np.maximum),
    ("Min", op.minimum, np.minimum),
):
    converter(_name, since=1)(_variadic(_fn, _np))


@converter("Mean", since=1)
def mean(node):
    node.attr("consumed_inputs", None)
    values = node.input_list()
    out = values[0]
    for v in values[1:]:
        out = op.add(out, v)
    return op.divide(out, const_like(len(values), values[0]))


# -- selection, clipping --------------------------------------------------------------------


@converter("Where", since=9)
def where(node):
    values = node.importer.known_dtype(node.inputs[1]) or node.importer.known_dtype(node.inputs[2])
    folded = fold(node, lambda c, x, y: np.where(c, x, y) if c.dtype != object else None, values)
    if folded is not None:
        return folded
    return op.where(node.input(0), node.input(1), node.input(2))


@converter("Clip", since=1)
def clip_attrs(node):
    node.attr("consumed_inputs", None)
    x = node.input(0)
    lo, hi = node.attr("min", None), node.attr("max", None)
    if lo is not None:
        x = op.maximum(x, const_like(lo, x))
    if hi is not None:
        x = op.minimum(x, const_like(hi, x))
    return x


@converter("Clip", since=11)
def clip(node):
    x = node.input(0)
    lo, hi = node.input(1), node.input(2)
    if lo is not None:
        x = op.maximum(x, lo)
    if hi is not None:
        x = op.minimum(x, hi)
    return x


# -- casts ----------------------------------------------------------------------------------


def _cast_known(node, dtype: str):
    array = node.known(0)
    if array is None or array.size > 4096:
        return None
    if array.dtype == object:
        if not dtype.startswith(("int", "uint")):
            return None
        return Known(array, dtype)
    if array.dtype.kind == "f" and dtype.startswith(("int", "uint")):
        return None  # float -> int conversion of out-of-range values is left to the kernel
    return array.astype(numpy_dtype(dtype))


@converter("Cast", since=1)
def cast_op(node):
    to = node.attr("to")
    if isinstance(to, str):
        from onnx import TensorProto

        to = TensorProto.DataType.Value(to.upper())
    saturate = bool(node.attr("saturate", 1))
    round_mode = node.attr("round_mode", "up")
    return _cast_to(node, to, saturate, round_mode)


def _cast_to(node, elem_type: int, saturate: bool, round_mode: str):
    """Input 0 converted to the ONNX element type `elem_type` (narrow types included)."""
    dtype = graphc_dtype(elem_type, "the Cast target")
    target = narrow_format(elem_type)
    source = node.importer.narrow_of(node.inputs[0])
    if target is None and source is None:
        folded = _cast_known(node, dtype)
        if folded is not None:
            return folded
        return cast(node.input(0), dtype)
    x = node.input(0)
    if source is not None and source in FLOAT_FORMATS:
        x = op.decode_float(x, source, "float32")  # narrow float bits -> values
    if target is None:
        return cast(x, dtype)
    node.set_narrow(0, target)
    if target in FLOAT_FORMATS:
        if not is_float(dtype_of(x)):
            x = op.astype(x, "float32")
        return op.encode_float(x, target, saturate, round_mode)
    # int4 / uint4 / int2 / uint2: truncate toward zero, keep the low bits (two's complement)
    bits = NARROW_BITS[target]
    wide = op.astype(x, "int32") if dtype_of(x) != "int32" else x
    low = op.floor_mod(wide, relax.const(1 << bits, "int32"))
    if target.startswith("int"):
        half = relax.const(1 << (bits - 1), "int32")
        low = op.subtract(op.floor_mod(op.add(low, half), relax.const(1 << bits, "int32")), half)
    return op.astype(low, dtype)


@converter("CastLike", since=15)
def cast_like(node):
    saturate = bool(node.attr("saturate", 1))
    round_mode = node.attr("round_mode", "up")
    like = node.input(1)
    fmt = node.importer.narrow_of(node.inputs[1])
    elem = next((k for k, (name, _) in NARROW.items() if name == fmt), None) if fmt else None
    return _cast_to(node, elem if elem is not None else onnx_elem_type(dtype_of(like)), saturate, round_mode)


@converter("BitCast", since=26)
def bit_cast(node):
    """The input's bits read as the `to` type of the same width (little endian, as graphc's
    targets are); float8 types are held as their uint8 bits, so they reinterpret as bytes."""
    to = node.attr("to")
    x = node.input(0)
    fmt = narrow_format(to)
    if fmt is not None and fmt in NARROW_BITS or fmt == "float4_e2m1":
        raise node.unsupported("to", to, "sub-byte types have no graphc storage of their own width")
    dtype = graphc_dtype(to, "the BitCast target")
    if numpy_dtype(dtype).itemsize != numpy_dtype(dtype_of(x)).itemsize:
        raise node.unsupported("to", to, f"has a width other than the input's {dtype_of(x)}")
    if dtype == dtype_of(x):
        return x
    return op.reinterpret(x, dtype)
