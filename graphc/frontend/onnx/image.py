"""Image resampling: Resize, Upsample, GridSample, AffineGrid; Col2Im and DeformConv.

Resize maps onto `relax.image.resize2d` for 4-d images whose batch and channel sizes stay
unchanged. Scales given as factors set the sampling step (`scale` attribute), as ONNX says;
sizes may be constants or run-time values.
"""

from __future__ import annotations

import math

import numpy as np

from ... import relax, tir
from .common import Emitting, dim_value, dtype_of, ndim_of, shape_expr, shape_of, sinfo
from .registry import converter

op = Emitting(relax.op)

_NEAREST = {
    "round_prefer_floor": "round_prefer_floor",
    "round_prefer_ceil": "round_prefer_ceil",
    "floor": "floor",
    "ceil": "ceil",
}
_MODES = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic"}


def _resize(
    node, x, scales, sizes, roi, *, mode, coord, nearest, cubic_a, exclude, extrapolation, params=None,
    antialias=0, window=None,
):
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
    if coord == "tf_crop_and_resize" and params is None:
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
        params=params,
        antialias=bool(antialias),
        window=window,
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
    attrs = {"mode": mode, "coord": "asymmetric", "nearest": "floor", "cubic_a": -0.75, "exclude": 0}
    return _resize(node, x, scales.tolist(), None, None, extrapolation=0.0, **attrs)


def _length(tensor) -> int | None:
    """The static length of a 1-d run-time tensor, else None."""
    dims = tensor.struct_info.shape_values
    if dims is None or len(dims) != 1 or not isinstance(dims[0], tir.IntImm):
        return None
    return int(dims[0].value)


def _run_time_resize(node, x, scales, sizes, roi, axes, policy, **attrs):
    """Resize whose scales, roi or (aspect-kept) sizes are known only at run time: the output
    sizes are computed by the VM (`tensor_to_shape` + `match_cast`, which also checks that the
    batch and channel sizes stay) and the kernel reads the scales and the roi from a tensor
    `(scale_h, scale_w, start_h, start_w, end_h, end_w)`. `scales`, `sizes` and `roi` are
    Relax tensors or None."""
    ndim = ndim_of(x)
    if ndim != 4:
        raise node.error(f"resizing a {ndim}-d tensor is not supported (4-d NCHW images are)")
    shape = shape_of(x)
    chosen = list(range(ndim)) if axes is None else [int(a) % ndim for a in axes]
    pos = {a: i for i, a in enumerate(chosen)}
    fdt = "float64" if dtype_of(x) == "float64" else "float32"
    in_f = op.astype(op.shape_to_tensor(shape_expr(shape)), "float64")

    def spread(values, fill):  # the len(chosen) values on their axes, `fill` elsewhere
        padded = op.concat([op.astype(values, "float64"), relax.const(np.array([fill], "float64"))])
        index = [pos.get(k, len(chosen)) for k in range(ndim)]
        return op.take(padded, relax.const(np.array(index, "int64")), axis=0)

    if scales is not None:
        full = spread(scales, 1.0)
        out = op.floor(op.multiply(full, in_f))
    else:
        in_chosen = op.take(in_f, relax.const(np.array(chosen, "int64")), axis=0)
        ratios = op.divide(op.astype(sizes, "float64"), in_chosen)
        if policy == "stretch":  # the output sizes themselves, their ratios the scales
            full = spread(ratios, 1.0)
        else:
            one = op.min(ratios) if policy == "not_larger" else op.max(ratios)
            mask = relax.const(np.array([k in pos for k in range(ndim)]))
            full = op.where(mask, one, relax.const(1.0, "float64"))
        out = op.floor(op.add(op.multiply(full, in_f), relax.const(0.5, "float64")))
    dims = [node.importer.fresh_var("size") if k in pos and k >= 2 else shape[k] for k in range(ndim)]
    value = op.tensor_to_shape(op.astype(out, "int64"))
    node.importer.bb.match_cast(value, relax.ShapeStructInfo(dims))
    node.importer.runtime_vars.update(d for d in dims[2:] if isinstance(d, tir.Var))
    scale_hw = op.astype(op.take(full, relax.const(np.array([2, 3], "int64")), axis=0), fdt)
    params = op.concat([scale_hw, _roi_hw(node, roi, chosen, fdt)])
    window = None
    if attrs.get("antialias"):  # taps per axis: 2 ceil(support / min(scale, 1))
        support = relax.const(1.0 if attrs["mode"] == "linear" else 2.0, "float64")
        hw = op.take(full, relax.const(np.array([2, 3], "int64")), axis=0)
        shrink = op.minimum(hw, relax.const(1.0, "float64"))
        taps = op.multiply(op.ceil(op.divide(support, shrink)), relax.const(2.0, "float64"))
        window = [node.importer.fresh_var("taps") for _ in range(2)]
        taps = op.tensor_to_shape(op.astype(taps, "int64"))
        node.importer.bb.match_cast(taps, relax.ShapeStructInfo(window))
        node.importer.runtime_vars.update(window)
    return _resize(node, x, None, dims, None, params=params, window=window, **attrs)


def _roi_hw(node, roi, chosen, fdt):
    """(start_h, start_w, end_h, end_w) of the run-time (or constant, or absent) roi."""
    if roi is None:
        return relax.const(np.array([0.0, 0.0, 1.0, 1.0], fdt))
    if isinstance(roi, np.ndarray | list):
        r = [float(v) for v in roi]
        return relax.const(np.array([r[2], r[3], r[6], r[7]], fdt))
    k = len(chosen)
    length = _length(roi)
    if length is not None and length != 2 * k:
        raise node.error(f"roi has {length} values; it needs 2 * {k} (starts and ends of the resized axes)")
    pos = {a: i for i, a in enumerate(chosen)}
    padded = op.concat([op.astype(roi, fdt), relax.const(np.array([0.0, 1.0], fdt))])
    index = [pos.get(2, 2 * k), pos.get(3, 2 * k), k + pos[2] if 2 in pos else 2 * k + 1]
    index.append(k + pos[3] if 3 in pos else 2 * k + 1)
    return op.take(padded, relax.const(np.array(index, "int64")), axis=0)


def _optional(node, index):
    """Input `index` as a constant array, the Relax tensor computed at run time, or None when
    it is absent or empty."""
    if not node.has_input(index):
        return None
    value = node.const(index)
    if value is not None:
        return None if value.size == 0 else value
    if node.known(index) is not None:
        return node.known(index)
    tensor = node.input(index)
    return None if _length(tensor) == 0 else tensor


@converter("Resize", since=11)
def resize(node):
    x = node.input(0)
    ndim = ndim_of(x)
    mode = node.attr("mode")
    coord = node.attr("coordinate_transformation_mode")
    attrs = {
        "mode": mode,
        "coord": coord,
        "nearest": node.attr("nearest_mode"),
        "cubic_a": node.attr("cubic_coeff_a"),
        "exclude": node.attr("exclude_outside"),
        "extrapolation": node.attr("extrapolation_value"),
    }
    axes, policy = None, "stretch"
    if node.version >= 18:
        if node.attr("antialias"):
            if mode == "nearest":
                raise node.unsupported("antialias", 1, "is not defined for mode='nearest'")
            attrs["antialias"] = 1
        axes = node.attr("axes", None)
        policy = node.attr("keep_aspect_ratio_policy")
    roi = _optional(node, 1)
    if coord != "tf_crop_and_resize":
        roi = None  # read by tf_crop_and_resize only
    scales = _optional(node, 2)
    node.mark_read(3)
    sizes_given = node.has_input(3) and _optional(node, 3) is not None
    if scales is None and not sizes_given:
        raise node.error("one of scales and sizes must be given")
    run_time = isinstance(roi, relax.Expr) or isinstance(scales, relax.Expr)
    if sizes_given and policy != "stretch" and node.known(3) is None:
        run_time = True
    if attrs.get("antialias") and sizes_given and node.known(3) is None:
        run_time = True  # the kernel's window follows the run-time sizes
    if run_time:
        if isinstance(scales, np.ndarray):
            scales = relax.const(scales.astype("float32"))
        sizes = None
        if scales is None:
            if policy == "stretch" and not attrs.get("antialias"):  # run-time sizes are the output sizes
                sizes = _full_axes(node, _sizes(node, x, axes, policy), axes, ndim, None)
                sizes = [s if s is not None else d for s, d in zip(sizes, shape_of(x))]
                fdt = "float64" if dtype_of(x) == "float64" else "float32"
                chosen = list(range(ndim)) if axes is None else [int(a) % ndim for a in axes]
                params = op.concat([relax.const(np.zeros(2, fdt)), _roi_hw(node, roi, chosen, fdt)])
                return _resize(node, x, None, sizes, None, params=params, **attrs)
            sizes = node.input(3)
        return _run_time_resize(node, x, scales, sizes, roi, axes, policy, **attrs)
    if roi is not None and axes is not None:
        k = len(axes)
        roi = np.array(
            _full_axes(node, roi[:k], axes, ndim, 0.0) + _full_axes(node, roi[k:], axes, ndim, 1.0)
        )
    sizes = None
    if sizes_given:
        sizes = _sizes(node, x, axes, policy)
        sizes = _full_axes(node, sizes, axes, ndim, None)
        sizes = [s if s is not None else d for s, d in zip(sizes, shape_of(x))]
        sizes = _keep_aspect(node, shape_of(x), sizes, axes, policy)
    if scales is not None:
        scales = _full_axes(node, scales.tolist(), axes, ndim, 1.0)
    return _resize(node, x, scales, sizes, None if roi is None else roi.tolist(), **attrs)


@converter("Upsample", since=7)
def upsample(node):
    x = node.input(0)
    mode = node.attr("mode")
    attrs = {"mode": mode, "coord": "asymmetric", "nearest": "floor", "cubic_a": -0.75, "exclude": 0}
    attrs["extrapolation"] = 0.0
    if node.version >= 9 and node.const(1) is None:
        return _run_time_resize(node, x, node.input(1), None, None, None, "stretch", **attrs)
    scales = node.attr("scales") if node.version < 9 else node.const(1, "scales").tolist()
    return _resize(node, x, scales, None, None, **attrs)


@converter("GridSample", since=16)
def grid_sample(node):
    x, grid = node.input(0), node.input(1)
    if ndim_of(x) not in (4, 5):
        raise node.error(f"grid sampling a {ndim_of(x)}-d tensor is not supported (4-d and 5-d are)")
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
    if ndim_of(x) == 5:
        if mode == "bicubic":
            raise node.unsupported("mode", node.attr("mode"), "is not supported for 5-d (volumetric) input")
        return op.image.grid_sample3d(x, grid, method=mode, padding_mode=padding, align_corners=align)
    return op.image.grid_sample(
        x, op.permute_dims(grid, [0, 3, 1, 2]), method=mode, padding_mode=padding, align_corners=align
    )


def _grid_coords(length, align: bool, dtype: str):
    """The normalized coordinates of `length` (an int64 PrimExpr) pixels in [-1, 1]: pixel
    centres (align_corners=0) or -1 ... 1 through the corner pixels (align_corners=1)."""
    index = op.astype(op.arange(0, length, 1, dtype="int64"), dtype)
    one = relax.const(1.0, dtype)
    two = relax.const(2.0, dtype)
    if align:  # a single pixel sits at -1 (ONNX's reference)
        span = op.astype(op.shape_to_tensor(shape_expr([tir.max(length - 1, tir.const(1, "int64"))])), dtype)
        return op.subtract(op.divide(op.multiply(index, two), span), one)
    size = op.astype(op.shape_to_tensor(shape_expr([length])), dtype)
    return op.subtract(op.divide(op.add(op.multiply(index, two), one), size), one)


@converter("AffineGrid", since=20)
def affine_grid(node):
    """The sampling grid of affine transforms `theta` (N, 2, 3) or (N, 3, 4) for an image of
    `size` (N, C, H, W) or (N, C, D, H, W), constant or given at run time: the homogeneous
    pixel coordinates (x, y[, z], 1) times theta transposed."""
    theta = node.input(0)
    dtype = dtype_of(theta)
    size = node.ints(1, "size")
    align = bool(node.attr("align_corners"))
    if len(size) not in (4, 5):
        raise node.error(f"size has {len(size)} values; it needs 4 (N, C, H, W) or 5 (N, C, D, H, W)")
    spatial = size[2:]
    k = len(spatial)
    dims = shape_of(theta)
    wrong = any(isinstance(d, tir.IntImm) and int(d.value) != v for d, v in zip(dims[1:], (k, k + 1)))
    if len(dims) != 3 or wrong:
        raise node.error(
            f"theta {sinfo(theta)} must be shaped (N, {k}, {k + 1}) for a size of {len(size)} values"
        )
    axes = []
    for a, length in enumerate(spatial):  # coordinate a varies along spatial axis a
        line = [1] * k
        line[a] = length
        coords = op.reshape(_grid_coords(length, align, dtype), shape_expr(line))
        axes.append(op.broadcast_to(coords, shape_expr(spatial)))
    coords = list(reversed(axes)) + [op.ones(shape_expr(spatial), dtype)]  # x first
    count = spatial[0]
    for d in spatial[1:]:
        count = count * d
    base = op.reshape(op.stack(coords, axis=k), shape_expr([count, k + 1]))
    grid = op.matmul(base, op.permute_dims(theta, [0, 2, 1]))
    return op.reshape(grid, shape_expr([dims[0], *spatial, k]))


@converter("Col2Im", since=18)
def col2im(node):
    """Blocks summed back into an image (`relax.image.col2im`); image_shape and block_shape
    may be constants or run-time values (symbolic sizes of the result)."""
    x = node.input(0)
    if ndim_of(x) != 3:
        raise node.error(f"input must be 3-d (N, C * prod(block_shape), L), got {sinfo(x)}")
    image = node.ints(1, "image_shape")
    block = node.ints(2, "block_shape")
    nd = len(image)
    if len(block) != nd:
        raise node.error(f"block_shape has {len(block)} values and image_shape {nd}; they must agree")
    strides = node.attr("strides", None) or [1] * nd
    dilations = node.attr("dilations", None) or [1] * nd
    pads = node.attr("pads", None) or [0] * (2 * nd)
    expected = (("strides", strides, nd), ("dilations", dilations, nd), ("pads", pads, 2 * nd))
    for name, values, count in expected:
        if len(values) != count:
            raise node.unsupported(name, list(values), f"must have {count} values for {nd} image axes")
    return op.image_regions.col2im(x, image, block, strides=strides, dilations=dilations, pads=pads)


@converter("DeformConv", since=19)
def deform_conv(node):
    """Deformable 2-d convolution (`relax.image.deform_conv2d`); a missing mask is ones, the
    bias is added after."""
    x, w, offset = node.input(0), node.input(1), node.input(2)
    if ndim_of(x) != 4:
        raise node.error(f"only 2-d deformable convolution (4-d input) is supported, got {sinfo(x)}")
    kernel = [dim_value(d) for d in shape_of(w)[2:]]
    if not all(isinstance(k, int) for k in kernel):
        raise node.error(f"the weight's kernel sizes must be known at import, got {sinfo(w)}")
    given = node.attr("kernel_shape", None)
    if given is not None and list(given) != kernel:
        raise node.unsupported("kernel_shape", list(given), f"differs from the weight's {kernel}")
    offset_groups = node.attr("offset_group")
    if node.has_input(4):
        mask = node.input(4)
    else:
        dims = shape_of(offset)
        taps = offset_groups * kernel[0] * kernel[1]
        mask = op.ones(shape_expr([dims[0], taps, dims[2], dims[3]]), dtype_of(x))
    y = op.image_regions.deform_conv2d(
        x,
        w,
        offset,
        mask,
        strides=node.attr("strides", None) or [1, 1],
        pads=node.attr("pads", None) or [0, 0, 0, 0],
        dilations=node.attr("dilations", None) or [1, 1],
        groups=node.attr("group"),
        offset_groups=offset_groups,
    )
    if node.has_input(3):
        y = op.add(y, op.reshape(node.input(3), shape_expr([1, shape_of(w)[0], 1, 1])))
    return y


@converter("RoiAlign", since=10)
def roi_align(node):
    """RoiAlign (`relax.image.roi_align`), a fixed or adaptive (0) number of samples per bin; opset 10
    regions are not shifted by half a pixel (its only mode), later ones by the attribute."""
    x, rois, index = node.input(0), node.input(1), node.input(2)
    half_pixel = False
    if node.version >= 16:
        mode = node.expect("coordinate_transformation_mode", "half_pixel", "output_half_pixel")
        half_pixel = mode == "half_pixel"
    ratio = node.attr("sampling_ratio")
    if ratio < 0:
        raise node.unsupported("sampling_ratio", ratio, "must be >= 0 (0: adaptive)")
    return op.image_regions.roi_align(
        x,
        rois,
        index,
        (node.attr("output_height"), node.attr("output_width")),
        spatial_scale=node.attr("spatial_scale"),
        sampling_ratio=ratio,
        mode=node.expect("mode", "avg", "max"),
        half_pixel=half_pixel,
    )
