"""Normalizations as TE computes: layer_norm, rms_norm, batch_norm (inference), group_norm
and instance_norm.

>>> from graphc import te, topi
>>> x = te.placeholder((2, 8), "float32", name="x")
>>> g = te.placeholder((8,), "float32", name="g")
>>> topi.nn.rms_norm(x, g, axis=[-1]).op.name
'T_rms_norm'
>>> x4 = te.placeholder((2, 8, 3, 3), "float32", name="x4")
>>> topi.nn.group_norm(x4, g, g, num_groups=4, channel_axis=1, axes=[2, 3]).op.name
'T_group_norm'
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


def layer_norm(x: te.Tensor, gamma: te.Tensor, beta: te.Tensor, axis, epsilon: float = 1e-5,
               center: bool = True, scale: bool = True) -> te.Tensor:
    """`(x - mean) / sqrt(var + eps) * gamma + beta`, statistics over `axis` (gamma/beta shaped so);
    `scale=False` / `center=False` leave out gamma / beta (TVM's flags)."""
    axes = reduce_axes(len(x.shape), axis)
    mean, sq = _stats(x, axes, False)

    def f(*i):
        r = _reduced_index(i, axes)
        m = mean(*r)
        var = sq(*r) - m * m
        norm = (x(*i) - m) * _op.rsqrt(var + _e.const(epsilon, x.dtype))
        p = _param_index(i, axes)
        if scale:
            norm = norm * gamma(*p)
        return norm + beta(*p) if center else norm

    return te.compute(x.shape, f, name="T_layer_norm")


def rms_norm(x: te.Tensor, weight: te.Tensor, axis, epsilon: float = 1e-5) -> te.Tensor:
    """`x / sqrt(mean(x^2) + eps) * weight`, the mean over `axis`."""
    axes = reduce_axes(len(x.shape), axis)
    _, sq = _stats(x, axes, True)

    def f(*i):
        scale = _op.rsqrt(sq(*_reduced_index(i, axes)) + _e.const(epsilon, x.dtype))
        return x(*i) * scale * weight(*_param_index(i, axes))

    return te.compute(x.shape, f, name="T_rms_norm")


def _batch_stats(x, axis: int):
    """Mean and biased variance of `x` over every axis but `axis` (two passes: sums, then
    centered squares), shaped like that axis."""
    others = [k for k in range(len(x.shape)) if k != axis]
    if not others:
        zero = _e.const(0.0, x.dtype)
        return x, te.compute(x.shape, lambda c: zero, name="T_batch_var")
    count = _e.const(1, "int64")
    for k in others:
        count = count * x.shape[k]
    count = _e.cast(count, x.dtype)

    def index(c, rvars):
        full = list(rvars)
        full.insert(axis, c)
        return tuple(full)

    rs = [te.reduce_axis((0, x.shape[k]), f"r{k}") for k in others]
    total = te.compute((x.shape[axis],), lambda c: te.sum(x(*index(c, rs)), axis=rs), name="T_batch_sum")
    mean = te.compute((x.shape[axis],), lambda c: total(c) / count, name="T_batch_mean")
    vs = [te.reduce_axis((0, x.shape[k]), f"v{k}") for k in others]
    squares = te.compute((x.shape[axis],), lambda c: te.sum(
        (x(*index(c, vs)) - mean(c)) * (x(*index(c, vs)) - mean(c)), axis=vs), name="T_batch_squares")
    var = te.compute((x.shape[axis],), lambda c: squares(c) / count, name="T_batch_var")
    return mean, var


def batch_norm(x, gamma, beta, moving_mean, moving_var, axis: int = 1, epsilon: float = 1e-5,
               center: bool = True, scale: bool = True, training: bool = False, momentum: float = 0.1):
    """Batch norm along channel `axis`: returns (out, mean, var) as TVM's topi does.

    Inference (`training=False`) normalizes with the moving statistics and returns them as
    they are. Training normalizes with the batch's mean and (biased) variance over every
    other axis and returns the moving statistics updated with `momentum`:
    `(1 - momentum) * moving + momentum * batch`.
    """
    axis %= len(x.shape)
    if training:
        mean, var = _batch_stats(x, axis)
    else:
        mean, var = moving_mean, moving_var

    def f(*i):
        c = i[axis]
        out = (x(*i) - mean(c)) * _op.rsqrt(var(c) + _e.const(epsilon, x.dtype))
        if scale:
            out = out * gamma(c)
        return out + beta(c) if center else out

    out = te.compute(x.shape, f, name="T_batch_norm")
    if training:
        keep, step = _e.const(1.0 - momentum, x.dtype), _e.const(momentum, x.dtype)
        new_mean = te.compute(moving_mean.shape, lambda i: moving_mean(i) * keep + mean(i) * step,
                              name="T_moving_mean")
        new_var = te.compute(moving_var.shape, lambda i: moving_var(i) * keep + var(i) * step,
                             name="T_moving_var")
        return [out, new_mean, new_var]
    mean = te.compute(moving_mean.shape, lambda i: moving_mean(i), name="T_moving_mean")
    var = te.compute(moving_var.shape, lambda i: moving_var(i), name="T_moving_var")
    return [out, mean, var]


def _channel_stats(x: te.Tensor, channel_axis: int, axes: list[int], num_groups):
    """Mean and (centered, two-pass) variance over `axes` and the channels of each group.

    Both have `x`'s shape with `axes` set to 1 and the channel axis set to `num_groups` (None:
    one group per channel). Returns `(mean, var, stat_index)` where `stat_index(index)` maps
    an index of `x` to the index of its statistics.
    """
    channels = x.shape[channel_axis]
    grouped = num_groups is not None
    per_group = _e.floordiv(channels, _e.const(int(num_groups), channels.dtype)) if grouped else None
    one = _e.const(1, "int64")
    group_dim = _e.const(int(num_groups), "int64") if grouped else channels
    stat_shape = tuple(
        group_dim if k == channel_axis else (one if k in axes else d) for k, d in enumerate(x.shape)
    )
    count = _e.const(1, "int64")
    for a in axes:
        count = count * x.shape[a]
    if grouped:
        count = count * per_group
    count = _e.cast(count, x.dtype)

    def reduce(body, name):
        def f(*index):
            raxes = [te.reduce_axis((_e.const(0, x.shape[a].dtype), x.shape[a]), name=f"k{a}") for a in axes]
            full = list(index)
            for a, r in zip(axes, raxes):
                full[a] = r.var
            if grouped:
                rc = te.reduce_axis((_e.const(0, channels.dtype), per_group), name="kc")
                full[channel_axis] = index[channel_axis] * per_group + rc.var
                raxes.append(rc)
            value = body(x(*full), index)
            return te.sum(value, axis=raxes) if raxes else value  # no axes: statistics of one element

        return te.compute(stat_shape, f, name=name)

    total = reduce(lambda v, index: v, "T_norm_sum")

    def mean(*index):
        return total(*index) / count

    sq = reduce(lambda v, index: (v - mean(*index)) * (v - mean(*index)), "T_norm_sq_sum")

    def stat_index(index):
        out = []
        for k, i in enumerate(index):
            if k == channel_axis:
                out.append(_e.floordiv(i, per_group) if grouped else i)
            else:
                out.append(_e.const(0, i.dtype) if k in axes else i)
        return tuple(out)

    return mean, (lambda *index: sq(*index) / count), stat_index


def _affine_norm(x, gamma, beta, channel_axis, axes, num_groups, epsilon, center, scale, name):
    ndim = len(x.shape)
    channel_axis %= ndim
    axes = sorted({int(a) % ndim for a in axes} - {channel_axis})
    mean, var, stat_index = _channel_stats(x, channel_axis, axes, num_groups)

    def f(*i):
        s = stat_index(i)
        out = (x(*i) - mean(*s)) * _op.rsqrt(var(*s) + _e.const(epsilon, x.dtype))
        if scale:
            out = out * gamma(i[channel_axis])
        if center:
            out = out + beta(i[channel_axis])
        return out

    return te.compute(x.shape, f, name=name)


def group_norm(data: te.Tensor, gamma: te.Tensor, beta: te.Tensor, num_groups: int, channel_axis: int,
               axes, epsilon: float = 1e-5, center: bool = True, scale: bool = True) -> te.Tensor:
    """Normalize over `axes` and the channels of each of `num_groups` groups; gamma/beta per channel."""
    return _affine_norm(data, gamma, beta, channel_axis, axes, num_groups, epsilon, center, scale,
                        "T_group_norm")


def instance_norm(data: te.Tensor, gamma: te.Tensor, beta: te.Tensor, channel_axis: int, axes,
                  epsilon: float = 1e-5, center: bool = True, scale: bool = True) -> te.Tensor:
    """Normalize each channel (of each sample) over `axes`; gamma/beta per channel."""
    return _affine_norm(data, gamma, beta, channel_axis, axes, None, epsilon, center, scale,
                        "T_instance_norm")


__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm", "rms_norm"]
