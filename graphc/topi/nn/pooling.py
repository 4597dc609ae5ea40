"""Pooling as TE computes: N-d max/average pools and adaptive average pools.

Window positions outside the data (padding, and the ragged last window of `ceil_mode`) are
skipped by a predicate rather than read from a padded copy; the average divides by the
number of taps inside the data, or inside the padded data when `count_include_pad`.

>>> from graphc import te, topi
>>> x = te.placeholder((1, 2, 7, 7), "float32", name="x")
>>> y = topi.nn.pool2d(x, "max", pool_size=3, strides=2, padding=1, ceil_mode=True)
>>> [int(d) for d in y.shape], y.op.name
([1, 2, 4, 4], 'max_pool2d')
>>> [int(d) for d in topi.nn.adaptive_pool2d(x, "avg", (3, None)).shape]
[1, 2, 3, 7]
"""

from __future__ import annotations

from ... import te
from ...errors import TIRError
from ...tir import expr as _e
from ...tir import op as _op
from ...tir.arith import Analyzer
from .conv import SPATIAL, expand, expand_padding, from_layout, to_layout


def pool_output_size(size, kernel: int, stride: int, pad_before: int, pad_after: int, dilation: int,
                     ceil_mode: bool):
    """Pooled length (unsimplified). With `ceil_mode` the count rounds up, but every window must
    start inside the data or its leading padding (PyTorch's and TVM's rule), written with `min`
    so that a symbolic size stays expressible in a kernel's signature."""
    numerator = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    if not ceil_mode:
        return _e.floordiv(numerator, stride) + 1
    rounded_up = _e.floordiv(numerator + (stride - 1), stride) + 1
    return _op.min(rounded_up, _e.floordiv(size + pad_before - 1, stride) + 1)


def _taps_within(start, kernel: int, dilation: int, lo, hi):
    """How many of `start + k * dilation` (`0 <= k < kernel`) lie in `[lo, hi)`."""
    first = _op.max(_e.floordiv(lo - start + (dilation - 1), dilation), 0)
    last = _op.min(_e.floordiv(hi - 1 - start, dilation), kernel - 1)
    return _op.max(last - first + 1, 0)


def pool(data: te.Tensor, pool_type: str, pool_size, strides=1, padding=0, dilation=1,
         ceil_mode: bool = False, count_include_pad: bool = False, layout: str | None = None,
         out_layout: str | None = None, name: str | None = None) -> te.Tensor:
    """N-d max (`pool_type="max"`) or average (`"avg"`) pool over the spatial axes of `layout`."""
    if pool_type not in ("max", "avg"):
        raise TIRError(f"pool_type must be 'max' or 'avg', got {pool_type!r}")
    nd = len(data.shape) - 2
    can = "NC" + SPATIAL[nd]
    layout = layout or can
    out_layout = out_layout or layout
    ksize = expand(pool_size, nd, "pool_size")
    strides, dilation = expand(strides, nd, "strides"), expand(dilation, nd, "dilation")
    pads = expand_padding(padding, nd)
    batch, channels, *in_size = from_layout(data.shape, layout, can)
    analyzer = Analyzer()
    out_size = [
        analyzer.simplify(pool_output_size(in_size[k], ksize[k], strides[k], pads[k], pads[nd + k],
                                           dilation[k], ceil_mode))
        for k in range(nd)
    ]
    out_shape = to_layout([batch, channels, *out_size], out_layout, can)
    index_dtype = in_size[0].dtype
    rk = [te.reduce_axis((_e.const(0, index_dtype), _e.const(k, index_dtype)), name=f"rv{i}")
          for i, k in enumerate(ksize)]
    dtype = data.dtype
    name = name or f"{pool_type}_pool{nd}d"

    def window(idx):
        n, c, *pos = from_layout(idx, out_layout, can)
        starts = [p * s - b for p, s, b in zip(pos, strides, pads)]
        src = [st + r.var * d for st, r, d in zip(starts, rk, dilation)]
        inside = _op.all(*(cond for j, size in zip(src, in_size) for cond in (j >= 0, j < size)))
        return starts, inside, data(*to_layout([n, c, *src], layout, can))

    if pool_type == "max":

        def fmax(*idx):
            _, inside, x = window(idx)
            return te.max(_op.if_then_else(inside, x, _op.min_value(dtype)), axis=rk)

        return te.compute(out_shape, fmax, name=name)

    def fsum(*idx):
        _, inside, x = window(idx)
        return te.sum(_op.if_then_else(inside, x, _e.const(0, dtype)), axis=rk)

    total = te.compute(out_shape, fsum, name=f"{name}_sum")

    def fdiv(*idx):
        _, _, *pos = from_layout(idx, out_layout, can)
        count = _e.const(1, index_dtype)
        for k in range(nd):
            start = pos[k] * strides[k] - pads[k]
            lo = -pads[k] if count_include_pad else 0
            hi = in_size[k] + pads[nd + k] if count_include_pad else in_size[k]
            count = count * _taps_within(start, ksize[k], dilation[k], lo, hi)
        return total(*idx) / _e.cast(_op.max(count, 1), dtype)

    return te.compute(out_shape, fdiv, name=name)


_TVM_ORDER = ("kernel", "stride", "dilation", "padding", "pool_type", "ceil_mode", "layout",
              "count_include_pad")


def _pool_nd(nd: int, layout: str):
    """`poolNd` in both spellings: graphc's `(data, pool_type, pool_size, strides, padding, dilation,
    ceil_mode, count_include_pad, layout, out_layout)` and TVM's topi `(data, kernel, stride,
    dilation, padding, pool_type, ceil_mode=False, layout=..., count_include_pad=True)` (told
    apart by the second argument: a pool type string, or a kernel size)."""

    def compute(data, *args, **kwargs):
        tvm_form = "kernel" in kwargs or (args and not isinstance(args[0], str))
        if not tvm_form:
            return _graphc_pool(data, *args, **{"layout": layout, **kwargs})
        given = dict(zip(_TVM_ORDER, args))
        overlap = set(given) & set(kwargs)
        if overlap:
            raise TypeError(f"pool{nd}d got multiple values for {sorted(overlap)}")
        given.update(kwargs)
        return pool(data, given["pool_type"], given["kernel"], given.get("stride", 1),
                    given.get("padding", 0), given.get("dilation", 1), given.get("ceil_mode", False),
                    given.get("count_include_pad", True), given.get("layout", layout))

    compute.__name__ = compute.__qualname__ = f"pool{nd}d"
    compute.__doc__ = f"{nd}-d pool (`pool` on {nd + 2}-d tensors), in graphc's or TVM's spelling."
    return compute


def _graphc_pool(data, pool_type: str, pool_size, strides=1, padding=0, dilation=1,
                 ceil_mode: bool = False, count_include_pad: bool = False, layout: str | None = None,
                 out_layout: str | None = None):
    return pool(data, pool_type, pool_size, strides, padding, dilation, ceil_mode, count_include_pad,
                layout, out_layout)


pool1d, pool2d, pool3d = _pool_nd(1, "NCW"), _pool_nd(2, "NCHW"), _pool_nd(3, "NCDHW")


def _max_window(size, out):
    """An upper bound on `ceil((i + 1) * size / out) - floor(i * size / out)` over `i`."""
    if isinstance(size, _e.IntImm) and isinstance(out, _e.IntImm):
        n, m = size.value, out.value
        return _e.const(max(-((-(i + 1) * n) // m) - (i * n) // m for i in range(m)), size.dtype)
    return _e.floordiv(size + out - 1, out) + 1


def adaptive_pool(data: te.Tensor, pool_type: str, output_size=None, layout: str | None = None,
                  out_layout: str | None = None, name: str | None = None) -> te.Tensor:
    """Adaptive pool: output position `i` of `out` pools `[floor(i*n/out), ceil((i+1)*n/out))`.

    `output_size` is an int, a sequence with one entry per spatial axis, or None; a None entry
    keeps that axis's input size.
    """
    if pool_type not in ("max", "avg"):
        raise TIRError(f"pool_type must be 'max' or 'avg', got {pool_type!r}")
    nd = len(data.shape) - 2
    can = "NC" + SPATIAL[nd]
    layout = layout or can
    out_layout = out_layout or layout
    batch, channels, *in_size = from_layout(data.shape, layout, can)
    if output_size is None:
        output_size = (None,) * nd
    sizes = (output_size,) if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) == 1:
        sizes = sizes * nd
    if len(sizes) != nd:
        raise TIRError(f"output_size needs 1 or {nd} values, got {list(sizes)}")
    out_size = [n if s is None else _e.const(int(s), n.dtype) for s, n in zip(sizes, in_size)]
    out_shape = to_layout([batch, channels, *out_size], out_layout, can)
    rk = [te.reduce_axis((_e.const(0, n.dtype), _max_window(n, m)), name=f"rv{i}")
          for i, (n, m) in enumerate(zip(in_size, out_size))]
    dtype = data.dtype
    name = name or f"adaptive_{pool_type}_pool{nd}d"

    def bounds(idx):
        _, _, *pos = from_layout(idx, out_layout, can)
        starts = [_e.floordiv(p * size, m) for p, size, m in zip(pos, in_size, out_size)]
        ends = [_e.floordiv((p + 1) * size + m - 1, m) for p, size, m in zip(pos, in_size, out_size)]
        return starts, ends

    def freduce(*idx):
        n, c, *_ = from_layout(idx, out_layout, can)
        starts, ends = bounds(idx)
        src = [st + r.var for st, r in zip(starts, rk)]
        inside = _op.all(*(j < e for j, e in zip(src, ends)))
        x = data(*to_layout([n, c, *src], layout, can))
        return (te.max if pool_type == "max" else te.sum)(x, axis=rk, where=inside)

    if pool_type == "max":
        return te.compute(out_shape, freduce, name=name)
    total = te.compute(out_shape, freduce, name=f"{name}_sum")

    def fdiv(*idx):
        count = _e.const(1, in_size[0].dtype)
        for st, e in zip(*bounds(idx)):
            count = count * (e - st)
        return total(*idx) / _e.cast(count, dtype)

    return te.compute(out_shape, fdiv, name=name)


def adaptive_pool1d(data, pool_type: str, output_size=None, layout: str = "NCW", out_layout=None):
    """1-d adaptive pool."""
    return adaptive_pool(data, pool_type, output_size, layout, out_layout)


def adaptive_pool2d(data, pool_type: str, output_size=None, layout: str = "NCHW", out_layout=None):
    """2-d adaptive pool."""
    return adaptive_pool(data, pool_type, output_size, layout, out_layout)


def adaptive_pool3d(data, pool_type: str, output_size=None, layout: str = "NCDHW", out_layout=None):
    """3-d adaptive pool."""
    return adaptive_pool(data, pool_type, output_size, layout, out_layout)


__all__ = ["adaptive_pool", "adaptive_pool1d", "adaptive_pool2d", "adaptive_pool3d", "pool", "pool1d",
           "pool2d", "pool3d"]
