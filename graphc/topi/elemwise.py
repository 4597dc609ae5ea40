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
