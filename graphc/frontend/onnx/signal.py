"""Signal processing: DFT as matrix products with constant cosine and sine tables.

A transform along an axis of static length is two real matrix products per output part
(`re @ C - im @ S`, `re @ S + im @ C`) with tables computed at import: dense O(n^2), which
for the short transforms models carry is as fast as an FFT and needs no new operator. The
axis may be a run-time value when the result's shape does not depend on it (every candidate
axis transformed, the one asked for selected); a one-sided transform's shape does, and a
run-time `dft_length` always does: both stop the import naming the input.
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from ...tir.expr import logical_or as _or
from .common import Emitting, dtype_of, ndim_of, norm_axis, shape_expr, shape_of
from .registry import converter

op = Emitting(relax.op)
I64 = "int64"


def _static(node, dim, what: str) -> int:
    if not isinstance(dim, tir.IntImm):
        raise node.error(f"{what} must be known at import (graphc builds DFT tables), got {dim}")
    return int(dim.value)


def _tables(n_in: int, length: int, inverse: bool, onesided: bool) -> tuple[np.ndarray, np.ndarray]:
    """(C, S) with the transform `out = (re + i im) @ (C + i S)` from the first `n_in` input
    points (or bins) to the output points: the forward kernel e^{-2 pi i k t / L}, the inverse
    one e^{+...} / L; a one-sided inverse (numpy's irfft) counts every bin strictly between 0
    and L/2 twice, its conjugate mirror, and keeps the real part only."""
    if not inverse:
        count = length // 2 + 1 if onesided else length
        k = np.arange(n_in)[:, None] * np.arange(count)[None, :]
        theta = 2 * np.pi * (k % length) / length
        return np.cos(theta), -np.sin(theta)
    t = np.arange(length)[None, :]
    bins = np.arange(n_in)[:, None]
    theta = 2 * np.pi * ((bins * t) % length) / length
    if not onesided:
        return np.cos(theta) / length, np.sin(theta) / length
    weight = np.where((bins == 0) | (2 * bins == length), 1.0, 2.0)
    return weight * np.cos(theta) / length, weight * np.sin(theta) / length


def _along(node, x, axis: int, length: int | None, inverse: bool, onesided: bool):
    """The DFT of x (..., 1 or 2) along the static `axis`."""
    ndim = ndim_of(x)
    dtype = dtype_of(x)
    n = _static(node, shape_of(x)[axis], f"the length of axis {axis}")
    complex_in = _static(node, shape_of(x)[-1], "the last (real, imaginary) axis") == 2
    if length is None:
        length = 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise node.error(f"the DFT length must be at least 1, got {length}")
    # the points (bins) that count: a shorter input is zero padded, a longer one cropped
    used = min(n, length // 2 + 1 if inverse and onesided else length)
    order = [d for d in range(ndim - 1) if d != axis] + [axis]
    back = [order.index(d) for d in range(ndim - 1)]

    def part(index):
        v = op.strided_slice(x, [ndim - 1], [index], [index + 1])
        v = op.squeeze(v, [ndim - 1])
        v = op.strided_slice(v, [axis], [0], [used]) if used < n else v
        return op.permute_dims(v, order)

    cos, sin = _tables(used, length, inverse, onesided)
    c, s = relax.const(cos.astype(dtype)), relax.const(sin.astype(dtype))
    re = part(0)
    out_re = op.matmul(re, c)
    out_im = op.matmul(re, s)
    if complex_in:
        im = part(1)
        out_re = op.subtract(out_re, op.matmul(im, s))
        out_im = op.add(out_im, op.matmul(im, c))
    if inverse and onesided:  # a real signal
        return op.expand_dims(op.permute_dims(out_re, back), [ndim - 1])
    parts = [op.expand_dims(op.permute_dims(p, back), [ndim - 1]) for p in (out_re, out_im)]
    return op.concat(parts, axis=ndim - 1)


@converter("DFT", since=17)
def dft(node):
    x = node.input(0)
    ndim = ndim_of(x)
    inverse, onesided = bool(node.attr("inverse")), bool(node.attr("onesided"))
    length = None
    if node.has_input(1):
        known = node.const(1)
        if known is None:
            raise node.error("input dft_length computed at run time is not supported (the output's "
                             "length and graphc's DFT tables depend on it)")
        length = int(np.asarray(known).reshape(-1)[0])
    if node.version < 20:
        axis = norm_axis(node.attr("axis"), ndim, node)
        return _along(node, x, axis, length, inverse, onesided)
    if not node.has_input(2):
        return _along(node, x, ndim - 2, length, inverse, onesided)
    known = node.const(2)
    if known is not None:
        return _along(node, x, norm_axis(int(np.asarray(known).reshape(-1)[0]), ndim, node),
                      length, inverse, onesided)
    if onesided:
        raise node.error("a one-sided DFT over an axis computed at run time is not supported (the "
                         "output's shape depends on the axis)")
    # an axis known only at run time: every candidate, the one asked for selected
    axis = node.ints(2, "axis")[0]
    out = _along(node, x, ndim - 2, length, inverse, onesided)
    for k in range(ndim - 2):
        chosen = tir.select(_or(axis == k, axis == k - ndim), tir.const(1, I64), tir.const(0, I64))
        flag = op.reshape(op.shape_to_tensor(shape_expr([chosen])), relax.ShapeExpr([]))
        out = op.where(op.astype(flag, "bool"), _along(node, x, k, length, inverse, onesided), out)
    return out
