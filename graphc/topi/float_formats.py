"""Narrow floating-point formats held as their bit patterns in uint8 tensors: decode to and
encode from regular floats (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ, float4 E2M1, float8 E8M0).

graphc has no 8-bit float types of its own; a tensor of one of these formats is a uint8
tensor of bit patterns, and these computes convert at the edges (ONNX's Cast, QuantizeLinear,
DequantizeLinear). Encoding rounds to nearest even; `saturate` clamps finite values beyond
the largest one to it (else they become infinity or NaN, as the format has them).

>>> from graphc import te, topi
>>> bits = te.placeholder((4,), "uint8", name="bits")
>>> topi.decode_float(bits, "float8_e4m3fn", "float32").dtype
'float32'
>>> x = te.placeholder((4,), "float32", name="x")
>>> topi.encode_float(x, "float8_e5m2").dtype
'uint8'
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from ..tir import op as _op

__all__ = ["FLOAT_FORMATS", "decode_float", "encode_float"]

# name: (exponent bits, mantissa bits, exponent bias, special values)
#   fn: no infinity, NaN is all ones; fnuz: no infinity and no -0, NaN is 0x80;
#   ieee: infinity and NaN as in IEEE 754; finite: neither; e8m0: unsigned powers of two
FLOAT_FORMATS = {
    "float8_e4m3fn": (4, 3, 7, "fn"),
    "float8_e4m3fnuz": (4, 3, 8, "fnuz"),
    "float8_e5m2": (5, 2, 15, "ieee"),
    "float8_e5m2fnuz": (5, 2, 16, "fnuz"),
    "float4_e2m1": (2, 1, 1, "finite"),
    "float8_e8m0": (8, 0, 127, "e8m0"),
}

_I64 = "int64"


def _c(value: int):
    return _e.const(value, _I64)


def _shr(a, n):
    return _op.shift_right(a, n if not isinstance(n, int) else _c(n))


def _shl(a, n):
    return _op.shift_left(a, n if not isinstance(n, int) else _c(n))


def _and(a, b):
    return _op.bitwise_and(a, b if not isinstance(b, int) else _c(b))


def _or(a, b):
    return _op.bitwise_or(a, b if not isinstance(b, int) else _c(b))


def _nan():
    # NaN from its bits: a NaN constant is unequal to itself, which structural equality (and the
    # print/parse round trip) would see as a change
    return _op.reinterpret("float32", _e.const(0x7FC00000, "uint32"))


def _check(fmt: str):
    if fmt not in FLOAT_FORMATS:
        raise ValueError(f"unknown float format {fmt!r}; expected one of {list(FLOAT_FORMATS)}")
    return FLOAT_FORMATS[fmt]


def _decode_scalar(b, fmt: str, fdt: str):
    e_bits, m_bits, bias, kind = FLOAT_FORMATS[fmt]
    b = _e.cast(b, _I64)
    if kind == "e8m0":
        exponent = b
        value = _op.reinterpret("float32", _e.cast(_shl(exponent, 23), "uint32"))
        value = _e.select(exponent == _c(0), _e.const(2.0**-127, "float32"), value)
        return _e.select(exponent == _c(0xFF), _nan(), value)
    sign = _and(_shr(b, e_bits + m_bits), 1)
    exponent = _and(_shr(b, m_bits), (1 << e_bits) - 1)
    mantissa = _and(b, (1 << m_bits) - 1)
    normal_bits = _or(
        _or(_shl(sign, 31), _shl(exponent - _c(bias) + _c(127), 23)), _shl(mantissa, 23 - m_bits)
    )
    normal = _op.reinterpret("float32", _e.cast(normal_bits, "uint32"))
    magnitude = _e.cast(mantissa, "float32") * _e.const(2.0 ** (1 - bias - m_bits), "float32")
    subnormal = _e.select(sign == _c(1), -magnitude, magnitude)
    value = _e.select(exponent == _c(0), subnormal, normal)
    nan = _nan()
    if kind == "fn":
        value = _e.select(_and(b, 0x7F) == _c(0x7F), nan, value)
    elif kind == "fnuz":
        value = _e.select(b == _c(0x80), nan, value)
    elif kind == "ieee":
        top = _c((1 << e_bits) - 1)
        inf = _e.select(sign == _c(1), _e.const(float("-inf"), "float32"), _e.const(float("inf"), "float32"))
        value = _e.select(exponent == top, _e.select(mantissa == _c(0), inf, nan), value)
    return value if fdt == "float32" else _e.cast(value, fdt)


def decode_float(bits: te.Tensor, fmt: str, dtype: str = "float32") -> te.Tensor:
    """The values whose `fmt` bit patterns `bits` (uint8) holds, as `dtype`."""
    _check(fmt)
    return te.compute(bits.shape, lambda *i: _decode_scalar(bits(*i), fmt, dtype), name=f"T_decode_{fmt}")


def _round_half_even_shift(t, shift: int):
    """`t >> shift` rounded to nearest, ties to even (t non-negative int64)."""
    if shift <= 0:
        return _shl(t, -shift)
    half = _c((1 << (shift - 1)) - 1)
    return _shr(t + half + _and(_shr(t, shift), 1), shift)


def _encode_scalar(x, fmt: str, saturate: bool, round_mode: str):
    e_bits, m_bits, bias, kind = FLOAT_FORMATS[fmt]
    xf = _e.cast(x, "float32")
    f = _e.cast(_op.reinterpret("uint32", xf), _I64)
    sign = _and(_shr(f, 31), 1)
    magnitude = _and(f, 0x7FFFFFFF)
    is_nan = magnitude > _c(0x7F800000)
    is_inf = magnitude == _c(0x7F800000)
    if kind == "e8m0":
        exponent = _and(_shr(f, 23), 0xFF)
        fraction = _and(f, 0x7FFFFF)
        if round_mode == "up":
            up = fraction > _c(0)
        elif round_mode == "down":
            up = _e.const(False, "bool")
        else:  # nearest: guard bit set and (round, sticky or lsb)
            guard = _and(f, 0x400000) > _c(0)
            rest = _and(f, 0x3FFFFF) > _c(0)
            up = _e.logical_and(guard, _e.logical_or(rest, exponent > _c(0)))
        if saturate:
            up = _e.logical_and(up, exponent != _c(0xFE))
        code = exponent + _e.cast(up, _I64)
        code = _e.select(exponent == _c(0xFF), _c(0xFF), code)
        return _e.cast(code, "uint8")
    max_code = (
        ((1 << e_bits) - 2) << m_bits | ((1 << m_bits) - 1)
        if kind == "ieee"
        else ((1 << (e_bits + m_bits)) - 2 if kind == "fn" else (1 << (e_bits + m_bits)) - 1)
    )
    # normal results: re-bias the float32 exponent, keep m_bits of mantissa, round half to even
    rebias = magnitude - _c((127 - bias) << 23)
    normal = _round_half_even_shift(_op.max(rebias, _c(0)), 23 - m_bits)
    # results below the smallest normal: an integer multiple of the smallest subnormal
    scaled = _op.abs(xf) * _e.const(2.0 ** (bias - 1 + m_bits), "float32")
    sub = _e.cast(_op.round(scaled), _I64)  # half to even
    min_normal = _e.const(2.0 ** (1 - bias), "float32")
    code = _e.select(_op.abs(xf) < min_normal, sub, normal)
    overflow = _e.logical_or(code > _c(max_code), is_inf)
    if kind == "ieee":
        big = _c(max_code) if saturate else _c(((1 << e_bits) - 1) << m_bits)  # infinity
    elif kind == "finite":
        big = _c(max_code)  # no infinity and no NaN: always saturates
    else:
        big = _c(max_code) if saturate else None  # becomes NaN
    nan_code = {
        "fn": (1 << (e_bits + m_bits)) - 1,
        "fnuz": None,
        "ieee": ((1 << (e_bits + 1)) - 1) << (m_bits - 1),
        "finite": max_code,
    }[kind]
    if big is not None:
        code = _e.select(overflow, big, code)
    shift = _c(e_bits + m_bits)
    if kind == "fnuz":
        out = _e.select(code == _c(0), _c(0), _or(_shl(sign, shift), code))  # no negative zero
        nan_bits = _c(0x80)
        if big is None:
            out = _e.select(overflow, nan_bits, out)
        out = _e.select(is_nan, nan_bits, out)
    else:
        out = _or(_shl(sign, shift), code)
        if big is None:
            out = _e.select(overflow, _or(_shl(sign, shift), nan_code), out)
        # a format without NaN takes NaN to -0 (as ml_dtypes, ONNX's reference, does)
        nan_bits = _shl(_c(1), shift) if kind == "finite" else _or(_shl(sign, shift), nan_code)
        out = _e.select(is_nan, nan_bits, out)
    return _e.cast(out, "uint8")


def encode_float(x: te.Tensor, fmt: str, saturate: bool = True, round_mode: str = "nearest") -> te.Tensor:
    """The `fmt` bit patterns (uint8) of `x` rounded to nearest even (E8M0: `round_mode`
    "up", "down" or "nearest"); `saturate` clamps overflowing finite values to the largest."""
    _check(fmt)
    return te.compute(
        x.shape, lambda *i: _encode_scalar(x(*i), fmt, saturate, round_mode), name=f"T_encode_{fmt}"
    )
