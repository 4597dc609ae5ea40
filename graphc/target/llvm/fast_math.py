"""float32 `exp` and `tanh` (and whole powers) on the CPU as formulas of plain arithmetic, so they vectorize.

LLVM has no vector `exp`: `llvm.exp.v16f32` becomes sixteen calls to libm's `expf`, and `tanh`
is a libm call to begin with (13 ns a `tanhf` on Zen 5, ~150x the cost of the matmul FLOPs it
follows in GPT-2's GELU). These rules (registered for the "llvm" kind, above the
libm ones) replace a float32 call, scalar or vector, by a formula the vectorizer keeps in
registers:

- `exp`: Cody-Waite reduction `x = n ln2 + r` with |r| <= ln2 / 2, Cephes' degree-6
  polynomial for `e^r`, and `2^n` made from exponent bits in two halves (so 2^-150 .. 2^128
  stay exact and results go gradually to zero). Max error 1 ulp; `exp(-inf) = 0`,
  `exp(inf) = inf`, NaN stays NaN.
- `tanh`: a rational approximation of degree 13 / 6 on [-7.9, 7.9] (Eigen's), `x` itself
  near 0, +-1 past it; max error 6 ulp (3.3e-7 relative); NaN stays NaN.
- `pow(x, c)` for a constant whole `c` in 1..4 (GPT-2's `x ** 3`, variance's `x ** 2`): `c - 1`
  multiplications instead of a libm `powf` per lane (7.3 ns an element against 0.28 for
  GPT-2's whole tanh GELU); at most 2 ulp from the correctly rounded power, same infinities
  and NaNs; float32 and float64.

float64 and other types keep the libm / LLVM lowering (but `pow`'s whole exponents). `erf`
stays libm's, correctly rounded (`erfinv` refines through it where one ulp matters); GELU uses
`topi.fast_erf`'s formula.

>>> from graphc import tir
>>> from graphc.target.intrin import lower_intrin
>>> x, y = tir.Var("x", "float32x16"), tir.Var("y", "float64")
>>> lower_intrin(tir.exp(x), "llvm").dtype, type(lower_intrin(tir.exp(y), "llvm")).__name__
('float32x16', 'Call')
>>> lower_intrin(tir.pow(y, tir.const(3.0, "float64")), "llvm")
y * y * y
"""

from __future__ import annotations

from ...ir.dtype import DataType
from ...tir import op as tir_op
from ...tir.expr import Broadcast, Cast, FloatImm, IntImm, const
from ...tir.generic import select
from ..intrin import register_intrin_lowering

_EXP_HI, _EXP_LO = 88.72283935546875, -104.0  # e^hi is the largest float; e^lo rounds to 0
_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
             5.0000001201e-1)  # fmt: skip
_TANH_CLAMP = 7.90531110763549805
_TANH_P = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
           1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)  # fmt: skip
_TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)


def _is_f32(op) -> bool:
    dt = DataType(op.dtype)
    return dt.code == "float" and dt.bits == 32


def _horner(x, coeffs, dtype):
    acc = const(coeffs[0], dtype)
    for c in coeffs[1:]:
        acc = acc * x + const(c, dtype)
    return acc


def _clamp(x, lo: float, hi: float, dtype):
    return tir_op.min(tir_op.max(x, const(lo, dtype)), const(hi, dtype))


def _pow2(n, dtype: str, int_dtype: str):
    """2^n for an int32 `n` in [-126, 127], from its exponent bits."""
    bits = tir_op.shift_left(n + const(127, int_dtype), const(23, int_dtype))
    return tir_op.reinterpret(dtype, bits)


def fast_exp(op):
    if not _is_f32(op):
        return None
    x = op.args[0]
    dtype = op.dtype
    lanes = DataType(dtype).lanes
    int_dtype = "int32" if lanes == 1 else f"int32x{lanes}"
    xc = _clamp(x, _EXP_LO, _EXP_HI, dtype)
    fx = tir_op.floor(xc * const(1.44269504088896341, dtype) + const(0.5, dtype))
    r = xc - fx * const(0.693359375, dtype) - fx * const(-2.12194440e-4, dtype)
    y = _horner(r, _EXP_POLY, dtype) * (r * r) + r + const(1.0, dtype)
    n = Cast(int_dtype, fx)
    half = tir_op.shift_right(n, const(1, int_dtype))  # floor(n / 2): both factors stay normal
    scaled = y * _pow2(half, dtype, int_dtype) * _pow2(n - half, dtype, int_dtype)
    out = select(x > const(_EXP_HI, dtype), const(float("inf"), dtype), scaled)
    out = select(x < const(_EXP_LO, dtype), const(0.0, dtype), out)
    return select(x != x, x, out)  # NaN in, NaN out


def fast_tanh(op):
    if not _is_f32(op):
        return None
    x = op.args[0]
    dtype = op.dtype
    xc = _clamp(x, -_TANH_CLAMP, _TANH_CLAMP, dtype)
    x2 = xc * xc
    ratio = xc * _horner(x2, _TANH_P, dtype) / _horner(x2, _TANH_Q, dtype)
    small = tir_op.max(x, -x) < const(0.0004, dtype)
    out = select(small, x, ratio)
    out = select(x > const(_TANH_CLAMP, dtype), const(1.0, dtype), out)  # saturated: +-1 exactly
    out = select(x < const(-_TANH_CLAMP, dtype), const(-1.0, dtype), out)
    return select(x != x, x, out)


def _whole_exponent(e) -> int | None:
    if isinstance(e, Broadcast):
        e = e.value
    if isinstance(e, Cast):
        e = e.value
    if isinstance(e, (FloatImm, IntImm)) and float(e.value).is_integer() and 1 <= e.value <= 4:
        return int(e.value)
    return None


def fast_pow(op):
    dt = DataType(op.dtype)
    if dt.code != "float" or dt.bits not in (32, 64):
        return None
    n = _whole_exponent(op.args[1])
    if n is None:
        return None
    x = op.args[0]
    if n == 4:
        return (x * x) * (x * x)
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


register_intrin_lowering("tir.exp", "llvm", fast_exp, level=2)
register_intrin_lowering("tir.pow", "llvm", fast_pow, level=2)
register_intrin_lowering("tir.tanh", "llvm", fast_tanh, level=2)

__all__ = ["fast_exp", "fast_pow", "fast_tanh"]
