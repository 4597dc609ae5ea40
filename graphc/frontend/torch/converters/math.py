"""Elementwise math: inverse trigonometric and hyperbolic functions, `log1p`/`expm1`-style
precise variants, `atan2`/`hypot`/`copysign`, bit shifts, NaN-aware `fmax`/`fmin`, `erfinv`,
`round(decimals=)`, `signbit`, `angle`.

Most map one-to-one onto a Relax operator of the registry; the rest are short compositions
of Relax operators.
"""

from __future__ import annotations

import math

from .... import relax
from .common import cast, dtype_of, is_float, operand, result_dtype
from .registry import converter

op = relax.op

_UNARY = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "log1p", "log2",
          "log10", "exp2")
_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
            "arctanh": "atanh", "special_expm1": "expm1", "special_log1p": "log1p", "special_exp2": "exp2"}


def _float_unary(name):
    def convert(importer, args):
        # integer and bool inputs compute in the default float type, as the traced result says
        return getattr(op, name)(cast(args["self"], args.out_dtype))

    return convert


for _name in _UNARY:
    converter(f"aten.{_name}.default", f"aten.{_name}_.default")(_float_unary(_name))
for _alias, _name in _ALIASES.items():
    converter(f"aten.{_alias}.default")(_float_unary(_name))


@converter("aten.trunc.default", "aten.trunc_.default", "aten.fix.default")
def _trunc(importer, args):
    x = args["self"]
    if not is_float(dtype_of(x)):
        return x  # integers are already whole
    return op.trunc(x)


@converter("aten.erfc.default", "aten.special_erfc.default")
def _erfc(importer, args):
    # 1 - erf(x): exact to float rounding for |x| < ~4, absolute error ~1e-7 beyond
    x = cast(args["self"], args.out_dtype)
    return op.subtract(relax.const(1, dtype_of(x)), op.erf(x))


@converter("aten.erfinv.default", "aten.erfinv_.default", "aten.special_erfinv.default")
def _erfinv(importer, args):
    return op.erfinv(cast(args["self"], args.out_dtype))


_FLOAT_BINARY = {"atan2": "atan2", "arctan2": "atan2", "hypot": "hypot"}


def _float_binary(name):
    def convert(importer, args):
        dtype = args.out_dtype
        a, b = operand(args["self"], dtype), operand(args["other"], dtype)
        return getattr(op, name)(a, b)

    return convert


for _name, _op_name in _FLOAT_BINARY.items():
    converter(f"aten.{_name}.default", f"aten.{_name}_.default")(_float_binary(_op_name))


@converter("aten.copysign.Tensor", "aten.copysign.Scalar", "aten.copysign_.Tensor")
def _copysign(importer, args):
    dtype = args.out_dtype
    a, b = operand(args["self"], dtype), operand(args["other"], dtype)
    return op.copysign(a, b)


@converter("aten.fmax.default", "aten.fmin.default")
def _fmax(importer, args):
    """Like maximum/minimum, but a NaN loses to a number (C's fmax)."""
    dtype = result_dtype(args.fake("self"), args.fake("other"))
    a, b = operand(args["self"], dtype), operand(args["other"], dtype)
    best = op.maximum(a, b) if "fmax" in args.op else op.minimum(a, b)
    if not is_float(dtype):
        return best
    best = importer.emit(best)
    return op.where(op.isnan(a), b, importer.emit(op.where(op.isnan(b), a, best)))


_SHIFTS = {
    "aten.__lshift__": "left_shift",
    "aten.bitwise_left_shift": "left_shift",
    "aten.__rshift__": "right_shift",
    "aten.bitwise_right_shift": "right_shift",
}


@converter(*_SHIFTS)
def _shift(importer, args):
    dtype = args.out_dtype
    if is_float(dtype):
        raise args.unsupported("self", "must be an integer tensor to shift")
    a, b = operand(args["self"], dtype), operand(args["other"], dtype)
    return getattr(op, _SHIFTS[args.op.rsplit(".", 1)[0]])(a, b)


@converter("aten.signbit.default")
def _signbit(importer, args):
    x = args["self"]
    dtype = dtype_of(x)
    if is_float(dtype):  # -0.0 and -nan have their sign bit set too: copysign(1, x) < 0
        sign = importer.emit(op.copysign(relax.const(1.0, dtype), x))
        return op.less(sign, relax.const(0.0, dtype))
    if dtype == "bool" or dtype.startswith("uint"):
        return op.zeros(relax.ShapeExpr(list(x.struct_info.shape_values)), "bool")
    return op.less(x, relax.const(0, dtype))


@converter("aten.round.decimals", "aten.round_.decimals")
def _round_decimals(importer, args):
    x = args["self"]
    dtype = dtype_of(x)
    decimals = int(args["decimals"])
    if not is_float(dtype):
        raise args.unsupported("self", "must be a float tensor to round to decimals")
    # the same steps as PyTorch: scale, round half to even, unscale
    ten = relax.const(10.0 ** abs(decimals), dtype)
    if decimals >= 0:
        return op.divide(importer.emit(op.round(importer.emit(op.multiply(x, ten)))), ten)
    return op.multiply(importer.emit(op.round(importer.emit(op.divide(x, ten)))), ten)


@converter("aten.angle.default")
def _angle(importer, args):
    """The argument of a real number: pi for negatives, 0 otherwise, NaN for NaN."""
    dtype = args.out_dtype
    x = cast(args["self"], dtype)
    zero = relax.const(0.0, dtype)
    arg = importer.emit(op.where(op.less(x, zero), relax.const(math.pi, dtype), zero))
    return op.where(op.isnan(x), x, arg)
