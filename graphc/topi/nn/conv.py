"""Convolutions as TE computes: N-d grouped/dilated convolution and transposed convolution.

Layouts are strings of axis letters: data `"NCHW"`, kernel `"OIHW"` (`"IOHW"` for the
transposed convolution) and their permutations such as `"NHWC"` / `"HWIO"`; each compute reads
and writes its tensors in the layouts given. Padding is a separate `pad_temp` stage, as in TVM.

>>> from graphc import te, topi
>>> x = te.placeholder((1, 3, 8, 8), "float32", name="x")
>>> w = te.placeholder((6, 1, 3, 3), "float32", name="w")
>>> y = topi.nn.conv2d(x, w, strides=2, padding=1, groups=3)
>>> [int(d) for d in y.shape], y.op.name
([1, 6, 4, 4], 'conv2d')
"""

from __future__ import annotations

from ... import te
from ...errors import TIRError
from ...tir import expr as _e
from ...tir import op as _op
from ...tir.arith import Analyzer

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def layout_perm(layout: str, canonical: str) -> list[int]:
    """Position in `layout` of each axis of `canonical` (`layout` must be a permutation of it).

    >>> layout_perm("NHWC", "NCHW")
    [0, 3, 1, 2]
    """
    if sorted(layout) != sorted(canonical) or len(set(layout)) != len(layout):
        raise TIRError(f"layout {layout!r} is not a permutation of {canonical!r}")
    return [layout.index(c) for c in canonical]


def to_layout(values, layout: str, canonical: str) -> list:
    """`values`, given in `canonical` axis order, reordered into `layout`."""
    perm = layout_perm(layout, canonical)
    out = [None] * len(values)
    for k, pos in enumerate(perm):
        out[pos] = values[k]
    return out


def from_layout(values, layout: str, canonical: str) -> list:
    """`values`, given in `layout` axis order, reordered into `canonical`."""
    return [values[p] for p in layout_perm(layout, canonical)]


def expand(value, n: int, name: str) -> tuple[int, ...]:
    """An int or a sequence of 1 or `n` ints as `n` ints."""
    values = (value,) if isinstance(value, int) else tuple(value)
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        raise TIRError(f"{name} needs 1 or {n} values, got {list(values)}")
    return tuple(int(v) for v in values)


def expand_padding(padding, n: int) -> tuple[int, ...]:
    """TVM's padding forms as `n` befores then `n` afters: an int, 1, `n` or `2n` values."""
    values = (padding,) if isinstance(padding, int) else tuple(padding)
    if len(values) == 1:
        values = values * (2 * n)
    elif len(values) == n:
        values = values * 2
    if len(values) != 2 * n:
        raise TIRError(f"padding needs 1, {n} or {2 * n} values, got {list(values)}")
    return tuple(int(v) for v in values)


def conv_output_size(size, kernel, stride: int, pad_total: int, dilation: int):
    """`(size + pad_total - dilation * (kernel - 1) - 1) // stride + 1`, unsimplified."""
    return _e.floordiv(size + pad_total - dilation * (kernel - 1) - 1, stride) + 1


def conv_transpose_output_size(size, kernel, stride: int, pad_total: int, dilation: int,
                               output_padding: int):
    """`(size - 1) * stride - pad_total + dilation * (kernel - 1) + output_padding + 1`."""
    return (size - 1) * stride - pad_total + dilation * (kernel - 1) + output_padding + 1


def constant_pad(data: te.Tensor, before, after, value=0, name: str = "pad_temp") -> te.Tensor:
    """`data` padded with `value`: `before[k]`/`after[k]` elements around axis `k` (ints)."""
    if not any(before) and not any(after):
        return data
    shape = [d + b + a for d, b, a in zip(data.shape, before, after)]

    def f(*idx):
        conds, src = [], []
        for i, d, b, a in zip(idx, data.shape, before, after):
            j = i - b if b else i
            if b:
                conds.append(j >= 0)
            if a:
                conds.append(j < d)
            src.append(j)
        return _op.if_then_else(_op.all(*conds), data(*src), _e.const(value, data.dtype))

    return te.compute(shape, f, name=name)


def _simplify(exprs) -> list:
    analyzer = Analyzer()
    return [analyzer.simplify(e) for e in exprs]


def conv_nd(data: te.Tensor, weight: te.Tensor, strides=1, padding=0, dilation=1, groups: int = 1,
         data_layout: str | None = None, kernel_layout: str | None = None, out_layout: str | None = None,
         out_dtype: str | None = None, name: str = "conv") -> te.Tensor:
    """N-d convolution (`N = data.ndim - 2`), products accumulated in `out_dtype`.

    `weight` holds `(O, C / groups, *kernel)` in canonical order; output channel `o` reads the
    input channels of group `o // (O / groups)`.
    """
    nd = len(data.shape) - 2
    sp = SPATIAL[nd]
    dcan, kcan = "NC" + sp, "OI" + sp
    data_layout = data_layout or dcan
    kernel_layout = kernel_layout or kcan
    out_layout = out_layout or data_layout
    strides, dilation = expand(strides, nd, "strides"), expand(dilation, nd, "dilation")
    pads = expand_padding(padding, nd)
    out_dtype = out_dtype or data.dtype
    batch, _, *in_size = from_layout(data.shape, data_layout, dcan)
    out_ch, in_per_group, *ksize = from_layout(weight.shape, kernel_layout, kcan)
    out_size = [
        conv_output_size(in_size[k], ksize[k], strides[k], pads[k] + pads[nd + k], dilation[k])
        for k in range(nd)
    ]
    out_shape = to_layout(_simplify([batch, out_ch, *out_size]), out_layout, dcan)
    before = to_layout([0, 0, *pads[:nd]], data_layout, dcan)
    after = to_layout([0, 0, *pads[nd:]], data_layout, dcan)
    padded = constant_pad(data, before, after, 0)
    rc = te.reduce_axis((_e.const(0, in_per_group.dtype), in_per_group), name="rc")
    rk = [te.reduce_axis((_e.const(0, k.dtype), k), name=f"r{sp[i].lower()}") for i, k in enumerate(ksize)]
    out_per_group = _e.floordiv(out_ch, groups) if groups > 1 else None

    def f(*idx):
        n, o, *pos = from_layout(idx, out_layout, dcan)
        c = rc.var if groups == 1 else _e.floordiv(o, out_per_group) * in_per_group + rc.var
        src = [p * s + r.var * d for p, s, r, d in zip(pos, strides, rk, dilation)]
        x = padded(*to_layout([n, c, *src], data_layout, dcan))
        w = weight(*to_layout([o, rc.var, *(r.var for r in rk)], kernel_layout, kcan))
        return te.sum(_e.cast(x, out_dtype) * _e.cast(w, out_dtype), axis=[rc, *rk])

    return te.compute(out_shape, f, name=name)


def conv1d(data, weight, strides=1, padding=0, dilation=1, groups: int = 1, data_layout: str = "NCW",
           kernel_layout: str = "OIW", out_layout: str | None = None, out_dtype: str | None = None):
    """1-d convolution (`conv_nd` on 3-d tensors)."""
    return conv_nd(data, weight, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout,
                out_dtype, name="conv1d")


def conv2d(data, weight, strides=1, padding=0, dilation=1, groups: int = 1, data_layout: str = "NCHW",
           kernel_layout: str = "OIHW", out_layout: str | None = None, out_dtype: str | None = None):
    """2-d convolution (`conv_nd` on 4-d tensors)."""
    return conv_nd(data, weight, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout,
                out_dtype, name="conv2d")


def conv3d(data, weight, strides=1, padding=0, dilation=1, groups: int = 1, data_layout: str = "NCDHW",
           kernel_layout: str = "OIDHW", out_layout: str | None = None, out_dtype: str | None = None):
    """3-d convolution (`conv_nd` on 5-d tensors)."""
    return conv_nd(data, weight, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout,
                out_dtype, name="conv3d")


def conv_transpose_nd(data: te.Tensor, weight: te.Tensor, strides=1, padding=0, output_padding=0,
                   dilation=1, groups: int = 1, data_layout: str | None = None,
                   kernel_layout: str | None = None, out_layout: str | None = None,
                   out_dtype: str | None = None, name: str = "conv_transpose") -> te.Tensor:
    """N-d transposed convolution (the gradient of `conv_nd` with respect to its data).

    `weight` holds `(C, O / groups, *kernel)` in canonical order (`"IOHW"` for 2-d). Output
    position `y` gathers input position `x` through kernel tap `k` when
    `y + pad_before = x * stride + k * dilation`.
    """
    nd = len(data.shape) - 2
    sp = SPATIAL[nd]
    dcan, kcan = "NC" + sp, "IO" + sp
    data_layout = data_layout or dcan
    kernel_layout = kernel_layout or kcan
    out_layout = out_layout or data_layout
    strides, dilation = expand(strides, nd, "strides"), expand(dilation, nd, "dilation")
    out_pad = expand(output_padding, nd, "output_padding")
    pads = expand_padding(padding, nd)
    out_dtype = out_dtype or data.dtype
    batch, in_ch, *in_size = from_layout(data.shape, data_layout, dcan)
    _, out_per_group, *ksize = from_layout(weight.shape, kernel_layout, kcan)
    out_size = [
        conv_transpose_output_size(in_size[k], ksize[k], strides[k], pads[k] + pads[nd + k], dilation[k],
                                   out_pad[k])
        for k in range(nd)
    ]
    out_shape = to_layout(_simplify([batch, out_per_group * groups, *out_size]), out_layout, dcan)
    in_per_group = _e.floordiv(in_ch, groups) if groups > 1 else in_ch
    rc = te.reduce_axis((_e.const(0, in_per_group.dtype), in_per_group), name="rc")
    rk = [te.reduce_axis((_e.const(0, k.dtype), k), name=f"r{sp[i].lower()}") for i, k in enumerate(ksize)]

    def f(*idx):
        n, o, *pos = from_layout(idx, out_layout, dcan)
        if groups == 1:
            c, oc = rc.var, o
        else:
            c = _e.floordiv(o, out_per_group) * in_per_group + rc.var
            oc = _e.floormod(o, out_per_group)
        conds, src = [], []
        for p, s, r, d, size, b in zip(pos, strides, rk, dilation, in_size, pads):
            t = p + b - r.var * d  # = x * s for the input position x this tap reads
            conds.append(t >= 0)
            if s > 1:
                conds.append(_e.floormod(t, s) == 0)
                t = _e.floordiv(t, s)
            conds.append(t < size)
            src.append(t)
        x = data(*to_layout([n, c, *src], data_layout, dcan))
        w = weight(*to_layout([c, oc, *(r.var for r in rk)], kernel_layout, kcan))
        value = _op.if_then_else(_op.all(*conds), _e.cast(x, out_dtype) * _e.cast(w, out_dtype),
                                 _e.const(0, out_dtype))
        return te.sum(value, axis=[rc, *rk])

    return te.compute(out_shape, f, name=name)


def conv1d_transpose(data, weight, strides=1, padding=0, output_padding=0, dilation=1, groups: int = 1,
                     data_layout: str = "NCW", kernel_layout: str = "IOW", out_layout: str | None = None,
                     out_dtype: str | None = None):
    """1-d transposed convolution (`conv_transpose_nd` on 3-d tensors)."""
    return conv_transpose_nd(data, weight, strides, padding, output_padding, dilation, groups, data_layout,
                          kernel_layout, out_layout, out_dtype, name="conv1d_transpose")


def conv2d_transpose(data, weight, strides=1, padding=0, output_padding=0, dilation=1, groups: int = 1,
                     data_layout: str = "NCHW", kernel_layout: str = "IOHW", out_layout: str | None = None,
                     out_dtype: str | None = None):
    """2-d transposed convolution (`conv_transpose_nd` on 4-d tensors)."""
    return conv_transpose_nd(data, weight, strides, padding, output_padding, dilation, groups, data_layout,
                          kernel_layout, out_layout, out_dtype, name="conv2d_transpose")


def conv3d_transpose(data, weight, strides=1, padding=0, output_padding=0, dilation=1, groups: int = 1,
                     data_layout: str = "NCDHW", kernel_layout: str = "IODHW", out_layout: str | None = None,
                     out_dtype: str | None = None):
    """3-d transposed convolution (`conv_transpose_nd` on 5-d tensors)."""
    return conv_transpose_nd(data, weight, strides, padding, output_padding, dilation, groups, data_layout,
                          kernel_layout, out_layout, out_dtype, name="conv3d_transpose")


__all__ = ["conv1d", "conv1d_transpose", "conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose",
           "conv_nd", "conv_transpose_nd"]
