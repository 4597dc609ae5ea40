"""Image resampling as TE computes: `resize2d` (ONNX Resize's modes) and `grid_sample` (torch's);
also `grid_sample3d`. Gathers over windows and regions (`col2im`, `deform_conv2d`, `roi_align`,
`max_pool2d_indices`) are in `topi.image_regions`.

Both work on 4-d images in any ordering of the letters N, C, H and W (`"NCHW"`, `"NHWC"`, ...).
Coordinates are computed in float32 (float64 for float64 data); every read is clamped into the
image, so no grid value, however far outside or NaN, makes a kernel read outside it.

>>> from graphc import te, topi
>>> x = te.placeholder((1, 3, 4, 4), "float32", name="x")
>>> [int(d) for d in topi.image.resize2d(x, (0.0,) * 4, (8, 6), method="cubic").shape]
[1, 3, 8, 6]
>>> g = te.placeholder((1, 2, 5, 7), "float32", name="g")
>>> [int(d) for d in topi.image.grid_sample(x, g, padding_mode="reflection").shape]
[1, 3, 5, 7]
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from ..tir import op as _op
from ..tir.generic import floordiv as _floordiv

__all__ = ["grid_sample", "grid_sample3d", "resize2d"]

RESIZE_METHODS = ("nearest_neighbor", "linear", "cubic")
COORDINATE_MODES = (
    "half_pixel",
    "align_corners",
    "asymmetric",
    "pytorch_half_pixel",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
    "half_pixel_symmetric",
)
ROUNDING_METHODS = ("round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "")
GRID_METHODS = ("bilinear", "nearest", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")


def layout_axes(layout: str) -> dict:
    """Letter -> axis for a 4-d image layout, a permutation of "NCHW"; ValueError otherwise."""
    if not isinstance(layout, str) or sorted(layout) != sorted("NCHW"):
        raise ValueError(f"an image layout orders the letters N, C, H, W (NCHW, NHWC, ...), got {layout!r}")
    return {c: k for k, c in enumerate(layout)}


def _check(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"unknown {name} {value!r}; expected one of {list(allowed)}")


def _float_dtype(dtype: str) -> str:
    return "float64" if dtype == "float64" else "float32"


def _f(value, fdt: str):
    """`value` (a Python number or a PrimExpr) as a `fdt` expression."""
    return _e.const(float(value), fdt) if isinstance(value, int | float) else _e.cast(value, fdt)


def _i64(value):
    return _e.const(value, "int64") if isinstance(value, int) else _e.cast(value, "int64")


def _clamp_index(i, size):
    """The int64 index `i` moved into [0, size)."""
    return _op.max(_op.min(i, size - 1), _e.const(0, "int64"))


def _clamp_float(x, hi):
    """`x` clamped to [0, hi]; a NaN becomes 0 (comparisons with NaN are false)."""
    zero = _e.const(0.0, x.dtype)
    return _e.select(x >= zero, _e.select(x <= hi, x, hi), zero)


def _cubic_weights(t, alpha: float) -> list:
    """Keys' cubic convolution weights of the four taps at offsets -1, 0, 1, 2 from floor(x)."""
    a = _e.const(alpha, t.dtype)
    one = _e.const(1.0, t.dtype)

    def near(d):  # |d| <= 1
        return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0

    def far(d):  # 1 < |d| < 2
        return ((a * d - a * 5.0) * d + a * 8.0) * d - a * 4.0

    return [far(t + one), near(t), near(one - t), far(_e.const(2.0, t.dtype) - t)]


def _lerp(a, b, t):
    return a * (1.0 - t) + b * t


def _weighted(values, weights):
    """sum(v * w) over the pairs, left to right."""
    total = values[0] * weights[0]
    for v, w in zip(values[1:], weights[1:]):
        total = total + v * w
    return total


# --------------------------------------------------------------------------------------------
# resize2d


def _source_coord(x, in_size, out_size, mode: str, start, end, fdt: str, scale=None):
    """Input coordinate of output index `x` along one axis (ONNX Resize's coordinate modes).

    `scale` (output over input size, when the model gave one) replaces the size ratio, as
    ONNX says: `floor(4 * 0.6) = 2` outputs still sample `1 / 0.6` input pixels apart, and
    the resized length of "align_corners" and "tf_crop_and_resize" is `4 * 0.6 = 2.4`.
    A run-time scale (a PrimExpr) that is not positive means "none given". `start` and
    `end` (the roi, read by "tf_crop_and_resize") are floats or run-time PrimExprs."""
    xf, inf, outf = _f(x, fdt), _f(in_size, fdt), _f(out_size, fdt)
    half = _e.const(0.5, fdt)
    one = _e.const(1.0, fdt)
    zero = _e.const(0.0, fdt)
    # one rounding only, so that exact .5 coordinates stay exact for nearest-neighbour rounding:
    # (x + 1/2) * in / out as ((2x + 1) * in) / (2 * out) with the products exact in floats;
    # with a scale given, divided by the scale (ONNX's formula)
    two = _e.const(2.0, fdt)
    if scale is None:
        length = outf

        def step(v, doubled):  # v * in / out, v = doubled / 2
            return (doubled * inf) / (two * outf)
    else:
        if isinstance(scale, _e.PrimExpr):
            given = _e.cast(scale, fdt)
            factor = _e.select(given > zero, given, outf / inf)
            length = _e.select(given > zero, inf * given, outf)
        else:
            factor = _e.const(float(scale), fdt)
            length = inf * factor

        def step(v, doubled):
            return v / factor
    if mode == "half_pixel":
        return step(xf + half, two * xf + one) - half
    if mode == "half_pixel_symmetric":  # the sampled span centred on the input's centre
        if scale is None:
            return step(xf + half, two * xf + one) - half
        adjustment = outf / (inf * factor)
        offset = inf / two * (one - adjustment)
        return offset + step(xf + half, two * xf + one) - half
    if mode == "asymmetric":
        return step(xf, two * xf)
    if mode == "tf_half_pixel_for_nn":
        return step(xf + half, two * xf + one)
    if mode == "align_corners":  # a single output pixel samples the first input pixel
        return _e.select(length == one, zero, xf * (inf - one) / _e.select(length == one, one, length - one))
    if mode == "pytorch_half_pixel":
        return _e.select(out_size > 1, step(xf + half, two * xf + one) - half, zero)
    span = inf - one  # tf_crop_and_resize: roi gives the crop as fractions of the image
    s, e = _f(start, fdt), _f(end, fdt)
    return _e.select(
        length == one,
        half * (s + e) * span,
        s * span + xf * (e - s) * span / _e.select(length == one, one, length - one),
    )


def _nearest_index(v, rounding: str):
    """The int64 index nearest to the float coordinate `v` under `rounding`."""
    eps = _e.const(1e-5, v.dtype)  # as TVM: keeps exact integers from rounding the wrong way
    if rounding == "round":
        r = _op.round(v)  # half to even
    elif rounding == "round_prefer_floor":
        r = _op.ceil(v - 0.5)
    elif rounding == "round_prefer_ceil":
        r = _op.floor(v + 0.5)
    elif rounding == "floor":
        r = _op.floor(v + eps)
    else:
        r = _op.ceil(v - eps)
    return _e.cast(r, "int64")


def resize2d(
    data: te.Tensor,
    roi,
    size,
    layout: str = "NCHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.5,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    scale=None,
    params: te.Tensor | None = None,
    antialias: bool = False,
    window=None,
) -> te.Tensor:
    """`data` resampled to spatial size `size = (height, width)` (ONNX Resize semantics).

    `roi = (start_h, start_w, end_h, end_w)` is read only by "tf_crop_and_resize". An empty
    `rounding_method` means "round" for "align_corners" and "floor" otherwise (TVM's rule).
    `bicubic_alpha` is the cubic kernel's parameter (PyTorch uses -0.75); `bicubic_exclude`
    drops the taps outside the image and renormalizes the weights. `scale = (scale_h, scale_w)`,
    the factors a model gave instead of sizes, set the sampling step (ONNX's rule).
    `params`, a 1-d float tensor `(scale_h, scale_w, start_h, start_w, end_h, end_w)`, gives
    the scales and the roi at run time instead (a scale that is not positive: none given).
    `antialias` (linear and cubic) widens the kernel by 1 / scale when downsampling (ONNX's
    antialias=1): its taps per axis are `window = (n_h, n_w)` (sizes the VM computes from
    run-time scales), else derived from the static scales or sizes.
    """
    axes = layout_axes(layout)
    _check("resize method", method, RESIZE_METHODS)
    _check("coordinate_transformation_mode", coordinate_transformation_mode, COORDINATE_MODES)
    _check("rounding_method", rounding_method, ROUNDING_METHODS)
    mode = coordinate_transformation_mode
    if rounding_method == "":
        rounding_method = "round" if mode == "align_corners" else "floor"
    roi = [float(r) for r in roi]
    if len(roi) != 4:
        raise ValueError(f"resize2d roi must be (start_h, start_w, end_h, end_w), got {roi}")
    ha, wa = axes["H"], axes["W"]
    in_h, in_w = data.shape[ha], data.shape[wa]
    out_h, out_w = (_i64(s) for s in size)
    shape = list(data.shape)
    shape[ha], shape[wa] = out_h, out_w
    out_dtype = out_dtype or data.dtype
    fdt = _float_dtype(data.dtype)

    scale_h, scale_w = scale if scale else (None, None)
    if params is not None:
        scale_h, scale_w = params[0], params[1]
        roi = [params[2], params[3], params[4], params[5]]

    if antialias and method != "nearest_neighbor":
        support = 1.0 if method == "linear" else 2.0
        if window is None:
            import math

            axes_sizes = ((scale_h, in_h, out_h), (scale_w, in_w, out_w))
            factors = [min(_static_scale(v, i, o), 1.0) for v, i, o in axes_sizes]
            windows = [(f, -2 * math.floor(-support / f)) for f in factors]
        else:
            windows = []
            for v, i, o, n in ((scale_h, in_h, out_h, window[0]), (scale_w, in_w, out_w, window[1])):
                given = _e.cast(v, fdt)
                ratio = _f(o, fdt) / _f(i, fdt)
                windows.append((_op.min(_e.select(given > 0.0, given, ratio), _e.const(1.0, fdt)), _i64(n)))
        return _antialiased(data, shape, axes, roi, mode, method, windows, bicubic_alpha, bicubic_exclude,
                            extrapolation_value, out_dtype, scale_h, scale_w)

    def compute(*index):
        in_y = _source_coord(index[ha], in_h, out_h, mode, roi[0], roi[2], fdt, scale_h)
        in_x = _source_coord(index[wa], in_w, out_w, mode, roi[1], roi[3], fdt, scale_w)

        def pixel(y, x):
            i = list(index)
            i[ha], i[wa] = _clamp_index(y, in_h), _clamp_index(x, in_w)
            return data(*i)

        if method == "nearest_neighbor":
            value = pixel(_nearest_index(in_y, rounding_method), _nearest_index(in_x, rounding_method))
        else:
            y0, x0 = _op.floor(in_y), _op.floor(in_x)
            ty, tx = in_y - y0, in_x - x0
            y0, x0 = _e.cast(y0, "int64"), _e.cast(x0, "int64")

            def fpixel(dy, dx):
                return _e.cast(pixel(y0 + dy, x0 + dx), fdt)

            if method == "linear":
                top = _lerp(fpixel(0, 0), fpixel(0, 1), tx)
                bottom = _lerp(fpixel(1, 0), fpixel(1, 1), tx)
                value = _lerp(top, bottom, ty)
            else:
                wy = _cubic_weights(ty, bicubic_alpha)
                wx = _cubic_weights(tx, bicubic_alpha)
                if bicubic_exclude:
                    wy = _exclude_outside(wy, y0, in_h)
                    wx = _exclude_outside(wx, x0, in_w)
                rows = [_weighted([fpixel(dy, dx) for dx in (-1, 0, 1, 2)], wx) for dy in (-1, 0, 1, 2)]
                value = _weighted(rows, wy)
        if mode == "tf_crop_and_resize":
            zero = _e.const(0.0, fdt)
            outside = _op.any(in_y < zero, in_y > _f(in_h - 1, fdt), in_x < zero, in_x > _f(in_w - 1, fdt))
            value = _e.select(outside, _e.const(extrapolation_value, fdt), _e.cast(value, fdt))
        return _e.cast(value, out_dtype)

    return te.compute(tuple(shape), compute, name="resize")


def _static_scale(scale, in_size, out_size) -> float:
    """An axis' scale as a Python float: the one given, else the ratio of static sizes."""
    if isinstance(scale, int | float):
        return float(scale)
    if scale is None and isinstance(in_size, _e.IntImm) and isinstance(out_size, _e.IntImm):
        return int(out_size.value) / int(in_size.value)
    raise ValueError(
        "antialiased resize2d needs static scales or sizes, or a window (the taps per axis) with params"
    )


def _antialiased(data, shape, axes, roi, mode, method, windows, alpha, exclude, extrapolation_value,
                 out_dtype, scale_h, scale_w):
    """Antialiased linear/cubic resampling (ONNX's antialias=1): along each axis the kernel is
    stretched by 1 / s (s = min(scale, 1)) and read over a window of n taps (n = 2 ceil(support
    / s); `windows` holds (s, n) per axis, numbers or run-time expressions) around the source
    coordinate, edge pixels repeated beyond the image, the weights normalized to sum 1."""
    ha, wa = axes["H"], axes["W"]
    in_h, in_w = data.shape[ha], data.shape[wa]
    out_h, out_w = shape[ha], shape[wa]
    fdt = _float_dtype(data.dtype)
    zero = _e.const(0.0, fdt)

    def kernel(t):
        t = _op.fabs(t)
        if method == "linear":
            return _op.max(_e.const(1.0, fdt) - t, zero)
        a = _e.const(alpha, fdt)
        near = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0
        far = ((a * t - a * 5.0) * t + a * 8.0) * t - a * 4.0
        return _e.select(t <= 1.0, near, _e.select(t < 2.0, far, zero))

    def coord(o, axis):
        if axis == 0:
            return _source_coord(o, in_h, out_h, mode, roi[0], roi[2], fdt, scale_h)
        return _source_coord(o, in_w, out_w, mode, roi[1], roi[3], fdt, scale_w)

    def tap(o, k, axis):
        """(input index, weight) of tap k of output index o along axis 0 (H) or 1 (W)."""
        s, n = windows[axis]
        size = in_h if axis == 0 else in_w
        c = coord(o, axis)
        base = _e.cast(_op.ceil(c), "int64") - 1  # the tap left of c, also when c is integral
        start = 1 - _floordiv(_i64(n), 2)
        index = base + start + k
        w = kernel((_e.cast(index, fdt) - c) * (s if not isinstance(s, float) else _e.const(s, fdt)))
        if exclude:
            w = _e.select(_op.any(index < 0, index >= size), zero, w)
        return index, w

    def weight_total(axis, extent):
        k = te.reduce_axis((0, windows[axis][1]), name=f"k{axis}")

        def total(o):
            return te.sum(tap(o, k, axis)[1], axis=k)

        return te.compute((extent,), total, name=f"resize_weights{axis}")

    totals = [weight_total(0, out_h), weight_total(1, out_w)]
    ry = te.reduce_axis((0, windows[0][1]), name="ry")
    rx = te.reduce_axis((0, windows[1][1]), name="rx")

    def compute(*index):
        y, wy = tap(index[ha], ry, 0)
        x, wx = tap(index[wa], rx, 1)
        i = list(index)
        i[ha], i[wa] = _clamp_index(y, in_h), _clamp_index(x, in_w)
        return te.sum(_e.cast(data(*i), fdt) * wy * wx, axis=[ry, rx])

    out = te.compute(tuple(shape), compute, name="resize_antialias")

    def finish(*index):
        value = out(*index) / (totals[0][index[ha]] * totals[1][index[wa]])
        if mode == "tf_crop_and_resize":
            in_y, in_x = coord(index[ha], 0), coord(index[wa], 1)
            outside = _op.any(in_y < zero, in_y > _f(in_h - 1, fdt), in_x < zero, in_x > _f(in_w - 1, fdt))
            value = _e.select(outside, _e.const(extrapolation_value, fdt), value)
        return _e.cast(value, out_dtype)

    return te.compute(tuple(shape), finish, name="resize")


def _exclude_outside(weights, base, size) -> list:
    """Zero the weights of taps `base - 1 + k` outside [0, size), then renormalize to sum 1."""
    zero = _e.const(0.0, weights[0].dtype)
    kept = []
    for k, w in enumerate(weights):
        tap = base + (k - 1)
        kept.append(_e.select(_op.any(tap < 0, tap >= size), zero, w))
    total = kept[0] + kept[1] + kept[2] + kept[3]  # > 0 for a point within the image
    return [w / total for w in kept]


# --------------------------------------------------------------------------------------------
# grid_sample


def _unnormalize(g, size, align_corners: bool):
    """Grid value in [-1, 1] -> pixel coordinate (torch's grid_sampler_unnormalize)."""
    fdt = g.dtype
    s = _f(size, fdt)
    one = _e.const(1.0, fdt)
    if align_corners:
        return (g + one) * 0.5 * (s - one)
    return ((g + one) * s - one) * 0.5


def _reflect(x, size, align_corners: bool):
    """`x` reflected off the image's borders until it lies inside them (torch's rule)."""
    fdt = x.dtype
    s = _f(size, fdt)
    if align_corners:  # mirrors at the centers of the corner pixels: 0 and size - 1
        low, span = _e.const(0.0, fdt), s - 1.0
    else:  # mirrors at the outer edges of the corner pixels: -0.5 and size - 0.5
        low, span = _e.const(-0.5, fdt), s
    one = _e.const(1.0, fdt)
    safe_span = _op.max(span, one)
    d = _op.fabs(x - low)
    flips = _op.floor(d / safe_span)
    extra = _op.fmod(d, safe_span)
    even = flips - _op.floor(flips * 0.5) * 2.0 == _e.const(0.0, fdt)
    reflected = _e.select(even, extra + low, span - extra + low)
    return _e.select(span > _e.const(0.0, fdt), reflected, _e.const(0.0, fdt))


def _pad_coord(x, size, padding_mode: str, align_corners: bool):
    """Apply "border" / "reflection" padding to a float coordinate ("zeros" keeps it)."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        x = _reflect(x, size, align_corners)
    return _clamp_float(x, _f(size, x.dtype) - 1.0)


def grid_sample(
    data: te.Tensor,
    grid: te.Tensor,
    method: str = "bilinear",
    layout: str = "NCHW",
    padding_mode: str = "zeros",
    align_corners: bool = False,
) -> te.Tensor:
    """`data` sampled at the normalized points of `grid` (torch.nn.functional.grid_sample).

    `grid` has TVM's layout `(N, 2, H_out, W_out)`: `grid[n, 0]` is x (the width coordinate)
    and `grid[n, 1]` is y, both in [-1, 1]; torch's `(N, H_out, W_out, 2)` grid is its
    `permute_dims(grid, [0, 3, 1, 2])`. The result has `data`'s layout with H and W replaced
    by `H_out` and `W_out`. Bicubic uses torch's kernel parameter -0.75.
    """
    axes = layout_axes(layout)
    _check("grid_sample method", method, GRID_METHODS)
    _check("padding_mode", padding_mode, PADDING_MODES)
    align_corners = bool(align_corners)
    ha, wa, na = axes["H"], axes["W"], axes["N"]
    in_h, in_w = data.shape[ha], data.shape[wa]
    shape = list(data.shape)
    shape[ha], shape[wa] = grid.shape[2], grid.shape[3]
    fdt = _float_dtype(data.dtype)
    zero = _e.const(0.0, data.dtype)

    def compute(*index):
        n, h, w = index[na], index[ha], index[wa]
        gx = _unnormalize(_e.cast(grid[n, 0, h, w], fdt), in_w, align_corners)
        gy = _unnormalize(_e.cast(grid[n, 1, h, w], fdt), in_h, align_corners)

        def pixel(y, x):
            """data at float pixel coordinates (y, x) holding integers; 0 outside the image."""
            inside = _op.all(y >= 0.0, y <= _f(in_h, fdt) - 1.0, x >= 0.0, x <= _f(in_w, fdt) - 1.0)
            i = list(index)
            i[ha] = _e.cast(_clamp_float(y, _f(in_h, fdt) - 1.0), "int64")
            i[wa] = _e.cast(_clamp_float(x, _f(in_w, fdt) - 1.0), "int64")
            return _e.cast(_e.select(inside, data(*i), zero), fdt)

        if method == "bicubic":  # padding applies to each tap, not to the sample point
            y0, x0 = _op.floor(gy), _op.floor(gx)
            ty, tx = gy - y0, gx - x0
            wy, wx = _cubic_weights(ty, -0.75), _cubic_weights(tx, -0.75)
            ys = [_pad_coord(y0 + float(k - 1), in_h, padding_mode, align_corners) for k in range(4)]
            xs = [_pad_coord(x0 + float(k - 1), in_w, padding_mode, align_corners) for k in range(4)]
            rows = [_weighted([pixel(y, x) for x in xs], wx) for y in ys]
            value = _weighted(rows, wy)
        else:
            gy = _pad_coord(gy, in_h, padding_mode, align_corners)
            gx = _pad_coord(gx, in_w, padding_mode, align_corners)
            if method == "nearest":
                value = pixel(_op.round(gy), _op.round(gx))  # half to even, as torch's nearbyint
            else:
                y0, x0 = _op.floor(gy), _op.floor(gx)
                ty, tx = gy - y0, gx - x0
                top = _lerp(pixel(y0, x0), pixel(y0, x0 + 1.0), tx)
                bottom = _lerp(pixel(y0 + 1.0, x0), pixel(y0 + 1.0, x0 + 1.0), tx)
                value = _lerp(top, bottom, ty)
        return _e.cast(value, data.dtype)

    return te.compute(tuple(shape), compute, name="grid_sample")


def grid_sample3d(
    data: te.Tensor,
    grid: te.Tensor,
    method: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool = False,
) -> te.Tensor:
    """A volume `data` (N, C, D, H, W) sampled at the normalized points of `grid`
    (N, D_out, H_out, W_out, 3), whose last axis holds (x, y, z) in [-1, 1] (ONNX's GridSample
    and torch's 5-d grid_sample): trilinear ("bilinear") or nearest, with the 2-d version's
    padding modes. The result is (N, C, D_out, H_out, W_out).
    """
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"unknown 3-d grid_sample method {method!r}; expected 'bilinear' or 'nearest'")
    _check("padding_mode", padding_mode, PADDING_MODES)
    align_corners = bool(align_corners)
    in_d, in_h, in_w = data.shape[2], data.shape[3], data.shape[4]
    shape = (data.shape[0], data.shape[1], grid.shape[1], grid.shape[2], grid.shape[3])
    fdt = _float_dtype(data.dtype)
    zero = _e.const(0.0, data.dtype)
    sizes = (in_d, in_h, in_w)

    def compute(n, c, d, h, w):
        point = []
        for axis, size in zip((2, 1, 0), sizes):  # grid holds x (width) first
            g = _unnormalize(_e.cast(grid[n, d, h, w, axis], fdt), size, align_corners)
            point.append(_pad_coord(g, size, padding_mode, align_corners))

        def voxel(coords):
            """data at float voxel coordinates holding integers; 0 outside the volume."""
            below = [p <= _f(s, fdt) - 1.0 for p, s in zip(coords, sizes)]
            inside = _op.all(*[p >= 0.0 for p in coords], *below)
            index = [_e.cast(_clamp_float(p, _f(s, fdt) - 1.0), "int64") for p, s in zip(coords, sizes)]
            return _e.cast(_e.select(inside, data(n, c, *index), zero), fdt)

        if method == "nearest":
            value = voxel([_op.round(p) for p in point])  # half to even, as torch's nearbyint
        else:
            base = [_op.floor(p) for p in point]
            frac = [p - b for p, b in zip(point, base)]
            value = None
            for corner in range(8):
                offsets = [(corner >> (2 - k)) & 1 for k in range(3)]
                weight = None
                for t, o in zip(frac, offsets):
                    factor = t if o else 1.0 - t
                    weight = factor if weight is None else weight * factor
                term = voxel([b + float(o) for b, o in zip(base, offsets)]) * weight
                value = term if value is None else value + term
        return _e.cast(value, data.dtype)

    return te.compute(shape, compute, name="grid_sample3d")


# --------------------------------------------------------------------------------------------
# col2im
