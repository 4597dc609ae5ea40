"""Activation functions and (log-)softmax as TE computes.

>>> from graphc import te, topi
>>> x = te.placeholder((4,), "float32", name="x")
>>> topi.nn.leaky_relu(x, 0.1).op.name, topi.nn.gelu(x).dtype
('compute', 'float32')
"""

from __future__ import annotations

import math

from ... import te
from ...tir import expr as _e
from ...tir import op as _op
from ..elemwise import elemwise


def _c(value, like) -> _e.PrimExpr:
    return _e.const(value, like.dtype)


def relu(x: te.Tensor) -> te.Tensor:
    """`max(x, 0)`."""
    return elemwise(x, lambda v: _op.max(v, _c(0, v)), "compute")


def leaky_relu(x: te.Tensor, alpha: float = 0.01) -> te.Tensor:
    """`x` where positive, else `alpha * x`."""
    return elemwise(x, lambda v: _e.select(v > _c(0, v), v, v * _c(alpha, v)), "compute")


def relu6(x: te.Tensor) -> te.Tensor:
    """`min(max(x, 0), 6)`."""
    return elemwise(x, lambda v: _op.min(_op.max(v, _c(0, v)), _c(6, v)), "T_relu6")


def prelu(x: te.Tensor, slope: te.Tensor, axis: int = 1) -> te.Tensor:
    """`x` where positive, else `slope[c] * x`, `c` the index along `axis` (one slope per channel)."""
    axis %= len(x.shape)

    def f(*i):
        v = x(*i)
        return _e.select(v > _c(0, v), v, v * slope(i[axis]))

    return te.compute(x.shape, f, name="compute")


def gelu(x: te.Tensor) -> te.Tensor:
    """`x * Phi(x)` with the exact normal CDF `0.5 * (1 + erf(x / sqrt(2)))`."""
    return elemwise(
        x, lambda v: v * (_c(0.5, v) + _op.erf(v * _c(1 / math.sqrt(2), v)) * _c(0.5, v)), "T_gelu"
    )


def gelu_tanh(x: te.Tensor) -> te.Tensor:
    """GELU with the tanh approximation `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`."""

    def f(v):
        inner = _c(math.sqrt(2 / math.pi), v) * (v + _c(0.044715, v) * v * v * v)
        return _c(0.5, v) * v * (_c(1.0, v) + _op.tanh(inner))

    return elemwise(x, f, "T_gelu_tanh")


def silu(x: te.Tensor) -> te.Tensor:
    """`x * sigmoid(x)`."""
    return elemwise(x, lambda v: v * _op.sigmoid(v), "T_silu")


def softplus(x: te.Tensor, beta: float = 1.0, threshold: float = 20.0) -> te.Tensor:
    """`log(1 + exp(beta x)) / beta`, or `x` where `beta x > threshold` (PyTorch's softplus)."""

    def f(v):
        bx = v * _c(beta, v)
        soft = _op.log(_c(1.0, v) + _op.exp(bx)) / _c(beta, v)
        return _e.select(bx > _c(threshold, v), v, soft)

    return elemwise(x, f, "T_softplus")


def elu(x: te.Tensor, alpha: float = 1.0) -> te.Tensor:
    """`x` where positive, else `alpha * (exp(x) - 1)`."""
    return elemwise(x, lambda v: _e.select(v > _c(0, v), v, _c(alpha, v) * (_op.exp(v) - _c(1, v))), "T_elu")


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def selu(x: te.Tensor) -> te.Tensor:
    """`scale * elu(x, alpha)` with SELU's fixed constants."""

    def f(v):
        neg = _c(_SELU_ALPHA, v) * (_op.exp(v) - _c(1, v))
        return _c(_SELU_SCALE, v) * _e.select(v > _c(0, v), v, neg)

    return elemwise(x, f, "T_selu")


def hardsigmoid(x: te.Tensor) -> te.Tensor:
    """`relu6(x + 3) / 6`."""
    return elemwise(
        x, lambda v: _op.min(_op.max(v + _c(3, v), _c(0, v)), _c(6, v)) / _c(6, v), "T_hardsigmoid"
    )


def hardswish(x: te.Tensor) -> te.Tensor:
    """`x * relu6(x + 3) / 6`."""
    return elemwise(
        x, lambda v: v * _op.min(_op.max(v + _c(3, v), _c(0, v)), _c(6, v)) / _c(6, v), "T_hardswish"
    )


def _softmax_stages(x: te.Tensor, axis: int):
    ndim = len(x.shape)
    axis %= ndim
    k1 = te.reduce_axis((_e.const(0, x.shape[axis].dtype), x.shape[axis]), name="k")
    k2 = te.reduce_axis((_e.const(0, x.shape[axis].dtype), x.shape[axis]), name="k")

    def at(index, k):
        return tuple(index[:axis]) + (k,) + tuple(index[axis:])

    red_shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    maxelem = te.compute(red_shape, lambda *i: te.max(x(*at(i, k1.var)), axis=k1), name="T_softmax_maxelem")
    shifted = te.compute(
        x.shape, lambda *i: x(*i) - maxelem(*(i[:axis] + i[axis + 1 :])), name="T_softmax_delta"
    )
    expsum = te.compute(
        red_shape, lambda *i: te.sum(_op.exp(shifted(*at(i, k2.var))), axis=k2), name="T_softmax_expsum"
    )
    return axis, shifted, expsum


def softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """`exp(x - max) / sum(exp(x - max))` along `axis`."""
    axis, shifted, expsum = _softmax_stages(x, axis)
    return te.compute(
        x.shape, lambda *i: _op.exp(shifted(*i)) / expsum(*(i[:axis] + i[axis + 1 :])), name="T_softmax_norm"
    )


def log_softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """`x - max - log(sum(exp(x - max)))` along `axis`."""
    axis, shifted, expsum = _softmax_stages(x, axis)
    return te.compute(
        x.shape,
        lambda *i: shifted(*i) - _op.log(expsum(*(i[:axis] + i[axis + 1 :]))),
        name="T_log_softmax_norm",
    )
