"""Elementwise unary TE computes: math functions, rounding, predicates and clipping.

Each takes a `te.Tensor` and returns a tensor of the same shape, one element per element
(TVM's `topi.exp`, `topi.clip`, ...). Names of the computes follow TVM's topi (`T_exp`...).

>>> from graphc import te, topi
>>> x = te.placeholder((2, 3), "float32", name="x")
>>> y = topi.exp(x)
>>> y.shape == x.shape, y.dtype, y.op.name
(True, 'float32', 'T_exp')
>>> topi.isnan(x).dtype
'bool'
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from ..tir import op as _op


def elemwise(x: te.Tensor, f, name: str) -> te.Tensor:
    """`f(x[i...])` at every index of `x`."""
    return te.compute(x.shape, lambda *i: f(x(*i)), name=name)


def _unary(fn, tvm_name: str):
    def compute(x: te.Tensor) -> te.Tensor:
        return elemwise(x, fn, f"T_{tvm_name}")

    compute.__name__ = compute.__qualname__ = tvm_name
    compute.__doc__ = f"Elementwise {tvm_name} of `x` (same shape and dtype)."
    return compute


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _zero(v):
    return _e.const(0, v.dtype)


exp = _unary(_op.exp, "exp")
log = _unary(_op.log, "log")
sqrt = _unary(_op.sqrt, "sqrt")
rsqrt = _unary(_op.rsqrt, "rsqrt")
sin = _unary(_op.sin, "sin")
cos = _unary(_op.cos, "cos")
tan = _unary(_op.tan, "tan")
tanh = _unary(_op.tanh, "tanh")
sigmoid = _unary(_op.sigmoid, "sigmoid")
erf = _unary(_op.erf, "erf")
asin = _unary(_op.asin, "asin")
acos = _unary(_op.acos, "acos")
atan = _unary(_op.atan, "atan")
sinh = _unary(_op.sinh, "sinh")
cosh = _unary(_op.cosh, "cosh")
asinh = _unary(_op.asinh, "asinh")
acosh = _unary(_op.acosh, "acosh")
atanh = _unary(_op.atanh, "atanh")
trunc = _unary(_op.trunc, "trunc")
# graphc's, beyond TVM's topi: the precise variants PyTorch and numpy offer
log1p = _unary(_op.log1p, "log1p")
expm1 = _unary(_op.expm1, "expm1")
log2 = _unary(_op.log2, "log2")
log10 = _unary(_op.log10, "log10")
exp2 = _unary(_op.exp2, "exp2")


def _erfinv_scalar(x):
    """Giles' single-precision approximation of erf's inverse, refined by one Newton step on
    erf(y) = x; +-inf at +-1."""
    dtype = x.dtype
    f = lambda v: _e.const(v, dtype)  # noqa: E731
    w = -_op.log((f(1.0) - x) * (f(1.0) + x))
    central, tail = w - f(2.5), _op.sqrt(w) - f(3.0)
    p_central = f(2.81022636e-08)
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p_central = f(c) + p_central * central
    p_tail = f(-0.000200214257)
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p_tail = f(c) + p_tail * tail
    y = _e.select(w < f(5.0), p_central, p_tail) * x
    y = y - (_op.erf(y) - x) / (f(1.1283791670955126) * _op.exp(-y * y))  # 2 / sqrt(pi)
    edge = _op.copysign(_op.infinity(dtype), x)
    return _e.select(_e.EQ(_op.fabs(x), f(1.0)), edge, y)


erfinv = _unary(_erfinv_scalar, "erfinv")
floor = _unary(_op.floor, "floor")
ceil = _unary(_op.ceil, "ceil")
round = _unary(_op.round, "round")  # noqa: A001 - TVM's name
abs = _unary(_op.abs, "abs")  # noqa: A001 - TVM's name
negative = _unary(lambda v: -v, "negative")
square = _unary(lambda v: v * v, "square")
isnan = _unary(_op.isnan, "isnan")
isinf = _unary(_op.isinf, "isinf")
isfinite = _unary(_op.isfinite, "isfinite")
logical_not = _unary(
    lambda v: _e.logical_not(v) if v.dtype == "bool" else _e._compare(_e.EQ, v, _zero(v)), "logical_not"
)
bitwise_not = _unary(_op.bitwise_not, "bitwise_not")

# erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (Eigen's float32 rational approximation); max error
# 6 ulp (3.6e-7), against libm's correctly rounded erff, which LLVM cannot vectorize
_FAST_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
               -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)  # fmt: skip
_FAST_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
               -1.42647390514189e-02)  # fmt: skip


def fast_erf_value(v: _e.PrimExpr) -> _e.PrimExpr:
    """erf of a float32 expression as plain arithmetic (vectorizes); other dtypes call `erf`.

    >>> fast_erf_value(_e.Var("x", "float32")).dtype, type(fast_erf_value(_e.Var("y", "float64"))).__name__
    ('float32', 'Call')
    """
    if v.dtype != "float32":
        return _op.erf(v)

    def horner(x, coeffs):
        acc = _e.const(coeffs[0], "float32")
        for c in coeffs[1:]:
            acc = acc * x + _e.const(c, "float32")
        return acc

    xc = _op.min(_op.max(v, _e.const(-4.0, "float32")), _e.const(4.0, "float32"))
    x2 = xc * xc
    out = xc * horner(x2, _FAST_ERF_P) / horner(x2, _FAST_ERF_Q)
    return _e.select(v != v, v, out)  # NaN in, NaN out


fast_erf = _unary(fast_erf_value, "fast_erf")


def sign(x: te.Tensor) -> te.Tensor:
    """-1, 0 or 1 per element, by the sign of `x` (unsigned: 0 or 1)."""

    def f(v):
        one, zero = _e.const(1, v.dtype), _zero(v)
        if v.dtype.startswith(("uint", "bool")):
            return _e.select(v > zero, one, zero)
        return _e.select(v > zero, one, _e.select(v < zero, _e.const(-1, v.dtype), zero))

    return elemwise(x, f, "T_sign")


def clip(x: te.Tensor, a_min, a_max) -> te.Tensor:
    """`min(max(x, a_min), a_max)` elementwise; the bounds are scalars cast to `x`'s dtype.

    >>> from graphc import te, topi
    >>> topi.clip(te.placeholder((4,), "float32"), 0.0, 6.0).op.name
    'T_clip'
    """

    def f(v):
        return _op.min(_op.max(v, _e.cast(a_min, v.dtype)), _e.cast(a_max, v.dtype))

    return elemwise(x, f, "T_clip")


def cast(x: te.Tensor, dtype: str) -> te.Tensor:
    """`x` converted to `dtype` elementwise (TVM's `topi.cast`)."""
    return elemwise(x, lambda v: _e.cast(v, dtype), "T_cast")


def reinterpret(x: te.Tensor, dtype: str) -> te.Tensor:
    """`x`'s bits read as `dtype` of the same width (TVM's `topi.reinterpret`); bool, whose
    storage is a byte of 0 or 1, converts by value to and from an 8-bit integer."""
    if "bool" in (x.dtype, dtype):
        return elemwise(x, lambda v: _e.cast(v, dtype), "T_reinterpret")
    return elemwise(x, lambda v: _op.reinterpret(dtype, v), "T_reinterpret")


def identity(x: te.Tensor) -> te.Tensor:
    """A copy of `x`."""
    return elemwise(x, lambda v: v, "T_identity")


def full(shape, dtype: str, fill_value) -> te.Tensor:
    """A tensor of `shape` whose every element is `fill_value` (a scalar, PrimExpr or 0-d tensor)."""
    value = _e.cast(fill_value() if isinstance(fill_value, te.Tensor) else fill_value, dtype)
    return te.compute(tuple(shape), lambda *i: value, name="T_full")


def full_like(x: te.Tensor, fill_value, dtype: str | None = None) -> te.Tensor:
    """A tensor shaped like `x` filled with `fill_value` (in `dtype`, default `x`'s)."""
    return full(x.shape, dtype or x.dtype, fill_value)
