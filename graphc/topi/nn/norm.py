"""Normalizations as TE computes: layer_norm, rms_norm and batch_norm (inference).

>>> from graphc import te, topi
>>> x = te.placeholder((2, 8), "float32", name="x")
>>> g = te.placeholder((8,), "float32", name="g")
>>> topi.nn.rms_norm(x, g, axis=[-1]).op.name
'T_rms_norm'
"""

from __future__ import annotations

from ... import te
from ...tir import expr as _e
from ...tir import op as _op
from ..reduce import reduce_axes


def _stats(x: te.Tensor, axes: list[int], squares_only: bool):
    """Per-position mean and mean of squares over `axes`, kept as size-1 dims (one stage each)."""
    ndim = len(x.shape)
    count = _e.const(1, "int64")
    for a in axes:
        count = count * x.shape[a]
    count = _e.cast(count, x.dtype)
    keep_shape = tuple(_e.const(1, "int64") if k in axes else d for k, d in enumerate(x.shape))

    def reduce(fn, name):
        raxes = [te.reduce_axis((_e.const(0, x.shape[a].dtype), x.shape[a]), name=f"k{a}") for a in axes]

        def f(*index):
            r = iter(raxes)
            full = [next(r).var if k in axes else index[k] for k in range(ndim)]
            return te.sum(fn(x(*full)), axis=raxes)

        total = te.compute(keep_shape, f, name=f"{name}_red")
        return te.compute(keep_shape, lambda *i: total(*i) / count, name=name)

    sq = reduce(lambda v: v * v, "T_sq_mean")
    return (None if squares_only else reduce(lambda v: v, "T_mean")), sq


def _reduced_index(index, axes):
    return tuple(_e.const(0, i.dtype) if k in axes else i for k, i in enumerate(index))


def _param_index(index, axes):
    return tuple(index[a] for a in axes)


def layer_norm(x: te.Tensor, gamma: te.Tensor, beta: te.Tensor, axis, epsilon: float = 1e-5) -> te.Tensor:
    """`(x - mean) / sqrt(var + eps) * gamma + beta`, statistics over `axis` (gamma/beta shaped so)."""
    axes = reduce_axes(len(x.shape), axis)
    mean, sq = _stats(x, axes, False)

    def f(*i):
        r = _reduced_index(i, axes)
        m = mean(*r)
        var = sq(*r) - m * m
        norm = (x(*i) - m) * _op.rsqrt(var + _e.const(epsilon, x.dtype))
        p = _param_index(i, axes)
        return norm * gamma(*p) + beta(*p)

    return te.compute(x.shape, f, name="T_layer_norm")


def rms_norm(x: te.Tensor, weight: te.Tensor, axis, epsilon: float = 1e-5) -> te.Tensor:
    """`x / sqrt(mean(x^2) + eps) * weight`, the mean over `axis`."""
    axes = reduce_axes(len(x.shape), axis)
    _, sq = _stats(x, axes, True)

    def f(*i):
        scale = _op.rsqrt(sq(*_reduced_index(i, axes)) + _e.const(epsilon, x.dtype))
        return x(*i) * scale * weight(*_param_index(i, axes))

    return te.compute(x.shape, f, name="T_rms_norm")


def batch_norm(x, gamma, beta, moving_mean, moving_var, axis: int = 1, epsilon: float = 1e-5):
    """Inference batch norm along channel `axis`: returns (out, moving_mean, moving_var) copies."""
    axis %= len(x.shape)

    def f(*i):
        c = i[axis]
        norm = (x(*i) - moving_mean(c)) * _op.rsqrt(moving_var(c) + _e.const(epsilon, x.dtype))
        return norm * gamma(c) + beta(c)

    out = te.compute(x.shape, f, name="T_batch_norm")
    mean = te.compute(moving_mean.shape, lambda i: moving_mean(i), name="T_moving_mean")
    var = te.compute(moving_var.shape, lambda i: moving_var(i), name="T_moving_var")
    return [out, mean, var]

__all__ = ["batch_norm", "layer_norm", "rms_norm"]
