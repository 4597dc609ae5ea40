"""Spatial rearrangements as TE computes: `pad` (constant, reflect, edge, circular) and `pixel_shuffle`.

>>> from graphc import te
>>> from graphc.topi.nn.pad import pad, pixel_shuffle  # topi.nn.pad, topi.nn.pixel_shuffle
>>> x = te.placeholder((1, 8, 3, 5), "float32", name="x")
>>> [int(d) for d in pad(x, [0, 0, 1, 2], [0, 0, 1, 2], pad_mode="reflect").shape]
[1, 8, 5, 9]
>>> [int(d) for d in pixel_shuffle(x, 2).shape]
[1, 2, 6, 10]
"""

from __future__ import annotations

from ... import te
from ...tir import expr as _e
from ...tir import op as _op

__all__ = ["dynamic_pad", "pad", "pixel_shuffle"]

# "replicate" is PyTorch's name for "edge".
PAD_MODES = ("constant", "reflect", "edge", "replicate", "circular")


def _source(i, before: int, dim, mode: str):
    """The index of `data` that output index `i` reads along one axis (non-constant modes)."""
    src = i - _e.const(before, i.dtype)
    last = dim - _e.const(1, dim.dtype)
    if mode == "reflect":  # mirror without repeating the edge: needs before, after < dim
        return last - _op.abs(last - _op.abs(src))
    if mode in ("edge", "replicate"):
        return _op.min(_op.max(src, _e.const(0, i.dtype)), last)
    return _e.floormod(src, dim)  # circular


def pad(data: te.Tensor, pad_before, pad_after=None, pad_value: float = 0.0,
        pad_mode: str = "constant") -> te.Tensor:
    """`data` with `pad_before[k]` / `pad_after[k]` elements added before / after axis `k`.

    "constant" fills `pad_value`; "reflect" mirrors without the edge element (numpy's
    "reflect"); "edge" (or "replicate") repeats the edge element; "circular" wraps around.
    """
    if pad_mode not in PAD_MODES:
        raise ValueError(f"topi.nn.pad: pad_mode must be one of {PAD_MODES}, got {pad_mode!r}")
    ndim = len(data.shape)
    before = [int(p) for p in pad_before]
    after = before if pad_after is None else [int(p) for p in pad_after]
    if len(before) != ndim or len(after) != ndim:
        raise ValueError(f"topi.nn.pad: need {ndim} widths before and after, got {before} and {after}")
    shape = tuple(d + _e.const(b + a, d.dtype) if b or a else d for d, b, a in zip(data.shape, before, after))

    is_float = data.dtype.startswith(("float", "bfloat"))
    fill = _e.const(float(pad_value) if is_float else int(pad_value), data.dtype)

    def f(*index):
        if pad_mode != "constant":
            return data(*(
                _source(i, b, d, pad_mode) if b or a else i
                for i, b, a, d in zip(index, before, after, data.shape)
            ))
        src, inside = [], []
        for i, b, a, d in zip(index, before, after, data.shape):
            s = i - _e.const(b, i.dtype) if b else i
            if b:
                inside.append(s >= _e.const(0, i.dtype))
            if a or b:
                inside.append(s < d)
            src.append(s)
        if not inside:
            return data(*src)
        return _op.if_then_else(_op.all(*inside), data(*src), fill)

    return te.compute(shape, f, name="T_pad")


def dynamic_pad(data: te.Tensor, pad_before, pad_after, pad_value: te.Tensor, pad_mode: str = "constant"):
    """`pad` with widths that are symbolic sizes (negative widths crop) and the fill value a 0-d
    tensor: what a model computes at run time (ONNX Pad's pads and constant_value inputs)."""
    if pad_mode not in PAD_MODES:
        raise ValueError(f"topi.nn.dynamic_pad: pad_mode must be one of {PAD_MODES}, got {pad_mode!r}")
    i64 = "int64"
    before = [_e.cast(b, i64) if isinstance(b, _e.PrimExpr) else _e.const(int(b), i64) for b in pad_before]
    after = [_e.cast(a, i64) if isinstance(a, _e.PrimExpr) else _e.const(int(a), i64) for a in pad_after]
    dims = [_e.cast(d, i64) for d in data.shape]
    shape = tuple(d + b + a for d, b, a in zip(dims, before, after))
    zero = _e.const(0, i64)

    def f(*index):
        src = [_e.cast(i, i64) - b for i, b in zip(index, before)]
        if pad_mode != "constant":
            last = [d - _e.const(1, i64) for d in dims]
            if pad_mode == "reflect":
                src = [lst - _op.abs(lst - _op.abs(s)) for s, lst in zip(src, last)]
            elif pad_mode in ("edge", "replicate"):
                src = [_op.min(_op.max(s, zero), lst) for s, lst in zip(src, last)]
            else:
                src = [_e.floormod(s, d) for s, d in zip(src, dims)]
            return data(*src)
        inside = _op.all(*[_e.logical_and(s >= zero, s < d) for s, d in zip(src, dims)])
        clamped = [_op.min(_op.max(s, zero), d - _e.const(1, i64)) for s, d in zip(src, dims)]
        return _op.if_then_else(inside, data(*clamped), pad_value())

    return te.compute(shape, f, name="T_dynamic_pad")


def pixel_shuffle(data: te.Tensor, upscale_factor: int) -> te.Tensor:
    """`(..., C * r * r, H, W)` to `(..., C, H * r, W * r)`: out[c, h, w] reads channel
    `c * r * r + (h % r) * r + w % r` at `(h // r, w // r)` (PyTorch's PixelShuffle)."""
    r = int(upscale_factor)
    *lead, channels, height, width = data.shape
    out_shape = (*lead, _e.floordiv(channels, _e.const(r * r, channels.dtype)),
                 height * _e.const(r, height.dtype), width * _e.const(r, width.dtype))

    def f(*index):
        *rest, c, h, w = index
        rr = _e.const(r, h.dtype)
        channel = c * _e.const(r * r, c.dtype) + _e.floormod(h, rr) * rr + _e.floormod(w, rr)
        return data(*rest, channel, _e.floordiv(h, rr), _e.floordiv(w, rr))

    return te.compute(out_shape, f, name="T_pixel_shuffle")
