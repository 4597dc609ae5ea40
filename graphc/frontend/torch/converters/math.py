"""Elementwise math without a Relax operator of its own: inverse trigonometric and hyperbolic
functions, `log1p`/`expm1`-style precise variants, `atan2`/`hypot`/`copysign`, bit shifts,
NaN-aware `fmax`/`fmin`, `erfinv`, `round(decimals=)`, `signbit`, `angle`.

Most map one-to-one onto a TIR intrinsic through `te_map` (a `call_tir` of an elementwise TE
compute); the rest are short compositions of Relax operators.
"""

from __future__ import annotations

import math

from .... import relax, tir
from .common import cast, dtype_of, is_float, operand, result_dtype, te_map
from .registry import converter

op = relax.op

_INTRINSIC_UNARY = {
    "asin": tir.asin,
    "acos": tir.acos,
    "atan": tir.atan,
    "sinh": tir.sinh,
    "cosh": tir.cosh,
    "asinh": tir.asinh,
    "acosh": tir.acosh,
    "atanh": tir.atanh,
    "expm1": tir.expm1,
    "log1p": tir.log1p,
    "log2": tir.log2,
    "log10": tir.log10,
    "exp2": tir.exp2,
}
_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
            "arctanh": "atanh", "special_expm1": "expm1", "special_log1p": "log1p", "special_exp2": "exp2"}


def _intrinsic_unary(name, fn):
    def convert(importer, args):
        # integer and bool inputs compute in the default float type, as the traced result says
        return te_map(importer, fn, name, cast(args["self"], args.out_dtype))

    return convert


for _name, _fn in _INTRINSIC_UNARY.items():
    converter(f"aten.{_name}.default", f"aten.{_name}_.default")(_intrinsic_unary(_name, _fn))
for _alias, _name in _ALIASES.items():
    converter(f"aten.{_alias}.default")(_intrinsic_unary(_name, _INTRINSIC_UNARY[_name]))


@converter("aten.trunc.default", "aten.trunc_.default", "aten.fix.default")
def _trunc(importer, args):
    x = args["self"]
    if not is_float(dtype_of(x)):
        return x  # integers are already whole
    return te_map(importer, tir.trunc, "trunc", x)


@converter("aten.erfc.default", "aten.special_erfc.default")
def _erfc(importer, args):
    # 1 - erf(x): exact to float rounding for |x| < ~4, absolute error ~1e-7 beyond
    x = cast(args["self"], args.out_dtype)
    return op.subtract(relax.const(1, dtype_of(x)), op.erf(x))


def _erfinv_scalar(x):
    """Giles' single-precision approximation, refined by one Newton step on erf(y) = x."""
    dtype = x.dtype
    f = lambda v: tir.const(v, dtype)  # noqa: E731
    w = -tir.log((f(1.0) - x) * (f(1.0) + x))
    central, tail = w - f(2.5), tir.sqrt(w) - f(3.0)
    p_central = f(2.81022636e-08)
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p_central = f(c) + p_central * central
    p_tail = f(-0.000200214257)
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p_tail = f(c) + p_tail * tail
    y = tir.Select(w < f(5.0), p_central, p_tail, dtype) * x
    y = y - (tir.erf(y) - x) / (f(2.0 / math.sqrt(math.pi)) * tir.exp(-y * y))
    edge = tir.copysign(tir.infinity(dtype), x)
    return tir.Select(tir.EQ(tir.fabs(x), f(1.0)), edge, y, dtype)


@converter("aten.erfinv.default", "aten.erfinv_.default", "aten.special_erfinv.default")
def _erfinv(importer, args):
    return te_map(importer, _erfinv_scalar, "erfinv", cast(args["self"], args.out_dtype))


_INTRINSIC_BINARY = {"atan2": tir.atan2, "arctan2": tir.atan2, "hypot": tir.hypot}


def _intrinsic_binary(name, fn):
    def convert(importer, args):
        dtype = args.out_dtype
        a, b = operand(args["self"], dtype), operand(args["other"], dtype)
        return te_map(importer, fn, name, a, b)

    return convert


for _name, _fn in _INTRINSIC_BINARY.items():
    converter(f"aten.{_name}.default", f"aten.{_name}_.default")(_intrinsic_binary(_name, _fn))


@converter("aten.copysign.Tensor", "aten.copysign.Scalar", "aten.copysign_.Tensor")
def _copysign(importer, args):
    dtype = args.out_dtype
    a, b = operand(args["self"], dtype), operand(args["other"], dtype)
    return te_map(importer, tir.copysign, "copysign", a, b)


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
    "aten.__lshift__": tir.shift_left,
    "aten.bitwise_left_shift": tir.shift_left,
    "aten.__rshift__": tir.shift_right,
    "aten.bitwise_right_shift": tir.shift_right,
}


@converter(*_SHIFTS)
def _shift(importer, args):
    dtype = args.out_dtype
    if is_float(dtype):
        raise args.unsupported("self", "must be an integer tensor to shift")
    a, b = operand(args["self"], dtype), operand(args["other"], dtype)
    fn = _SHIFTS[args.op.rsplit(".", 1)[0]]
    name = "shift_left" if fn is tir.shift_left else "shift_right"
    return te_map(importer, fn, name, a, b)


@converter("aten.signbit.default")
def _signbit(importer, args):
    x = args["self"]
    dtype = dtype_of(x)
    if is_float(dtype):  # -0.0 and -nan have their sign bit set too
        return te_map(importer, lambda v: tir.copysign(tir.const(1.0, dtype), v) < tir.const(0.0, dtype),
                      "signbit", x)
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
