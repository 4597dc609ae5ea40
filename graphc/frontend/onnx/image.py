"""Image resampling: Resize, Upsample, GridSample, AffineGrid.

Resize maps onto `relax.image.resize2d` for 4-d images whose batch and channel sizes stay
unchanged. Scales given as factors set the sampling step (`scale` attribute), as ONNX says;
sizes may be constants or run-time values.
"""

from __future__ import annotations

import math

import numpy as np

from ... import relax, tir
from .common import Emitting, ndim_of, shape_expr, shape_of
from .registry import converter

op = Emitting(relax.op)

_NEAREST = {
    "round_prefer_floor": "round_prefer_floor",
    "round_prefer_ceil": "round_prefer_ceil",
    "floor": "floor",
    "ceil": "ceil",
}
_MODES = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic"}


def _resize(node, x, scales, sizes, roi, mode, coord, nearest, cubic_a, exclude, extrapolation):
    ndim = ndim_of(x)
    if ndim != 4:
        raise node.error(f"resizing a {ndim}-d tensor is not supported (4-d NCHW images are)")
    if mode not in _MODES:
        raise node.unsupported("mode", mode)
    shape = shape_of(x)
    scale = None
    if sizes is not None:
        out = list(sizes)
    else:
        if any(float(s) != 1.0 for s in scales[:2]):
            raise node.error(f"scales {list(scales)} resize the batch or channel axis")
        out = []
        for d, s in zip(shape, scales):
            if isinstance(d, tir.IntImm):
                out.append(int(math.floor(int(d.value) * float(s) + 1e-9)))
            elif float(s) == int(s):
                out.append(d * int(s))
            else:
                raise node.error(f"scale {s} of the symbolic size {d} is not supported")
        scale = (float(scales[2]), float(scales[3]))
    for k in (0, 1):
        same = out[k] is shape[k] or (
            isinstance(out[k], int | tir.IntImm)
            and isinstance(shape[k], tir.IntImm)
            and int(out[k] if isinstance(out[k], int) else out[k].value) == int(shape[k].value)
        )
        if not same:
            raise node.error(f"output sizes {out} resize the batch or channel axis of {shape}")
    roi_hw = (0.0,) * 4
    if coord == "tf_crop_and_resize":
        if roi is None:
            raise node.error("tf_crop_and_resize needs a constant roi")
        roi = [float(r) for r in roi]
        roi_hw = (roi[2], roi[3], roi[6], roi[7])
    rounding = _NEAREST.get(nearest, "round_prefer_floor") if mode == "nearest" else ""
    return op.image.resize2d(
        x,
        shape_expr(out[2:]),
        roi=roi_hw,
        method=_MODES[mode],
        coordinate_transformation_mode=coord,
        rounding_method=rounding,
        cubic_alpha=cubic_a,
        cubic_exclude=exclude,
        extrapolation_value=extrapolation,
        scale=scale,
    )


def _full_axes(node, values, axes, ndim, fill):
    if axes is None:
        return list(values)
    out = [fill] * ndim
    for a, v in zip(axes, values):
        out[a % ndim] = v
    return out


def _keep_aspect(node, shape, sizes, axes, policy):
    if policy == "stretch":
        return sizes
    static = [int(d.value) if isinstance(d, tir.IntImm) else None for d in shape]
    chosen = axes if axes is not None else list(range(len(shape)))
    if any(static[a] is None for a in chosen) or any(not isinstance(sizes[a], tir.IntImm) for a in chosen):
        raise node.error(f"keep_aspect_ratio_policy={policy} needs static sizes")
    ratios = [int(sizes[a].value) / static[a] for a in chosen]
    s = min(ratios) if policy == "not_larger" else max(ratios)
    out = list(sizes)
    for a in chosen:
        out[a] = tir.const(int(math.floor(static[a] * s + 0.5)), "int64")
    return out


def _sizes(node, x, axes, policy):
    """The output sizes input; read at run time it is matched against the input's sizes on
    the axes Resize may not change (batch and channels), which the VM then checks."""
    if node.known(3) is not None or policy != "stretch":
        return node.ints(3, "sizes")
    shape = shape_of(x)
    chosen = list(range(len(shape))) if axes is None else [a % len(shape) for a in axes]
    tensor = node.input(3)
    dims = [shape[a] if a in (0, 1) else node.importer.fresh_var("size") for a in chosen]
    value = op.tensor_to_shape(op.astype(tensor, "int64") if tensor.struct_info.dtype != "int64" else tensor)
    node.importer.bb.match_cast(value, relax.ShapeStructInfo(dims))
    return dims


@converter("Resize", since=10)
def resize_v10(node):
    x = node.input(0)
    scales = node.const(1, "scales")
    mode = node.attr("mode")
    return _resize(node, x, scales.tolist(), None, None, mode, "asymmetric", "floor", -0.75, 0, 0.0)


@converter("Resize", since=11)
def resize(node):
    x = node.input(0)
    ndim = ndim_of(x)
    mode = node.attr("mode")
    coord = node.attr("coordinate_transformation_mode")
    nearest = node.attr("nearest_mode")
    cubic_a = node.attr("cubic_coeff_a")
    exclude = node.attr("exclude_outside")
    extrapolation = node.attr("extrapolation_value")
    axes, policy = None, "stretch"
    if node.version >= 18:
        node.expect("antialias", 0, why="(antialiased downsampling) is not supported")
        axes = node.attr("axes", None)
        policy = node.attr("keep_aspect_ratio_policy")
    roi = node.const(1) if node.has_input(1) else None
    if roi is not None and roi.size == 0:
        roi = None
    if roi is not None and axes is not None:
        k = len(axes)
        roi = np.array(
            _full_axes(node, roi[:k], axes, ndim, 0.0) + _full_axes(node, roi[k:], axes, ndim, 1.0)
        )
    scales = node.const(2) if node.has_input(2) else None
    if scales is not None and scales.size == 0:
        scales = None
    if scales is None and node.has_input(2) and node.known(2) is None:
        raise node.error("scales computed at run time are not supported; give sizes")
    sizes = None
    if node.has_input(3):
        sizes = _sizes(node, x, axes, policy)
        sizes = _full_axes(node, sizes, axes, ndim, None)
        sizes = [s if s is not None else d for s, d in zip(sizes, shape_of(x))]
        sizes = _keep_aspect(node, shape_of(x), sizes, axes, policy)
    if scales is not None:
        scales = _full_axes(node, scales.tolist(), axes, ndim, 1.0)
    if scales is None and sizes is None:
        raise node.error("one of scales and sizes must be given")
    return _resize(
        node,
        x,
        scales,
        sizes,
        None if roi is None else roi.tolist(),
        mode,
        coord,
        nearest,
        cubic_a,
        exclude,
        extrapolation,
    )


@converter("Upsample", since=7)
def upsample(node):
    x = node.input(0)
    mode = node.attr("mode")
    scales = node.attr("scales") if node.version < 9 else node.const(1, "scales").tolist()
    return _resize(node, x, scales, None, None, mode, "asymmetric", "floor", -0.75, 0, 0.0)


@converter("GridSample", since=16)
def grid_sample(node):
    x, grid = node.input(0), node.input(1)
    if ndim_of(x) != 4:
        raise node.error("only 4-d (2-d spatial) grid sampling is supported")
    mode = node.attr("mode")
    mode = {
        "bilinear": "bilinear",
        "linear": "bilinear",
        "nearest": "nearest",
        "bicubic": "bicubic",
        "cubic": "bicubic",
    }.get(mode)
    if mode is None:
        raise node.unsupported("mode")
    padding = node.expect("padding_mode", "zeros", "border", "reflection")
    align = bool(node.attr("align_corners"))
    return op.image.grid_sample(
        x, op.permute_dims(grid, [0, 3, 1, 2]), method=mode, padding_mode=padding, align_corners=align
    )
