"""Gathers over windows and regions of an image, as TE computes: `col2im`, `deform_conv2d`,
`roi_align` and `max_pool2d_indices`. They share `topi.image`'s coordinate helpers; every read is
clamped into the image, and an image index read from a tensor (RoiAlign's) is checked.
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from ..tir import op as _op
from ..tir.generic import floordiv as _floordiv
from ..tir.generic import floormod as _floormod
from .image import _clamp_index, _f, _float_dtype, _i64

__all__ = ["col2im", "deform_conv2d", "max_pool2d_indices", "roi_align"]


def col2im(data: te.Tensor, image_shape, block_shape, strides, dilations, pads) -> te.Tensor:
    """The blocks of `data` (N, C * prod(block_shape), L) summed back into an image
    (N, C, *image_shape): im2col's inverse (ONNX's Col2Im), any number of spatial axes.

    Output pixel `p` gathers, for each offset `o` of the block, the block `l` whose element
    at `o` lands on `p`: `p + pad_begin - o * dilation = l * stride` along every axis. The
    image and block sizes may be symbolic; `pads` lists the begins then the ends."""
    nd = len(image_shape)
    image = [_i64(s) for s in image_shape]
    block = [_i64(s) for s in block_shape]
    counts = []  # blocks along each axis
    for d in range(nd):
        span = image[d] + pads[d] + pads[nd + d] - (block[d] - 1) * dilations[d] - 1
        counts.append(_floordiv(span, strides[d]) + 1)
    kernel = block[0]
    for b in block[1:]:
        kernel = kernel * b
    channels = _floordiv(data.shape[1], kernel)
    k = te.reduce_axis((0, kernel), name="k")
    zero = _e.const(0, "int64")
    shape = (data.shape[0], channels, *image)

    def compute(*index):
        n, c, pos = index[0], index[1], index[2:]
        rest = k
        offsets = []
        for d in reversed(range(nd)):
            offsets.append(_floormod(rest, block[d]))
            rest = _floordiv(rest, block[d])
        offsets.reverse()
        valid = []
        column = zero
        for d in range(nd):
            h = _i64(pos[d]) + pads[d] - offsets[d] * dilations[d]
            q = _floordiv(h, strides[d])
            valid += [h >= 0, _floormod(h, strides[d]) == 0, q < counts[d]]
            column = column * counts[d] + _clamp_index(q, counts[d])
        value = data[n, c * kernel + k, _clamp_index(column, data.shape[2])]
        return te.sum(_e.select(_op.all(*valid), value, _e.const(0, data.dtype)), axis=k)

    return te.compute(shape, compute, name="col2im")


# --------------------------------------------------------------------------------------------
# deform_conv2d


def deform_conv2d(
    data, weight, offset, mask, strides, pads, dilations, groups: int = 1, offset_groups: int = 1
):
    """Deformable 2-d convolution (ONNX's DeformConv): every kernel tap of output pixel (i, j)
    reads `data` by bilinear interpolation at its regular position plus its learned offset
    (zero outside the image), scaled by `mask`. `offset` is (N, offset_groups * KH * KW * 2,
    OH, OW) holding (dy, dx) per tap, `mask` (N, offset_groups * KH * KW, OH, OW); `pads` is
    (top, left, bottom, right). The result is (N, OC, OH, OW) without bias."""
    _, channels, in_h, in_w = data.shape
    out_c, group_c, kh, kw = weight.shape
    out_h, out_w = offset.shape[2], offset.shape[3]
    per_group = _floordiv(out_c, groups)
    per_offset_group = _floordiv(channels, offset_groups)
    fdt = _float_dtype(data.dtype)
    rc = te.reduce_axis((0, group_c), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    zero = _e.const(0.0, fdt)

    def sample(n, c, y, x):
        y0, x0 = _op.floor(y), _op.floor(x)
        ty, tx = y - y0, x - x0
        total = zero
        for dy, wy in ((0, 1.0 - ty), (1, ty)):
            for dx, wx in ((0, 1.0 - tx), (1, tx)):
                yy, xx = _e.cast(y0, "int64") + dy, _e.cast(x0, "int64") + dx
                inside = _op.all(yy >= 0, yy < in_h, xx >= 0, xx < in_w)
                value = _e.cast(data[n, c, _clamp_index(yy, in_h), _clamp_index(xx, in_w)], fdt)
                total = total + _e.select(inside, value, zero) * wy * wx
        return total

    def compute(n, o, i, j):
        c = _floordiv(o, per_group) * group_c + rc
        tap = _floordiv(c, per_offset_group) * (kh * kw) + ry * kw + rx
        dy, dx = _e.cast(offset[n, tap * 2, i, j], fdt), _e.cast(offset[n, tap * 2 + 1, i, j], fdt)
        y = _e.cast(i * strides[0] - pads[0] + ry * dilations[0], fdt) + dy
        x = _e.cast(j * strides[1] - pads[1] + rx * dilations[1], fdt) + dx
        term = _e.cast(weight[o, rc, ry, rx], fdt) * _e.cast(mask[n, tap, i, j], fdt) * sample(n, c, y, x)
        return te.sum(term, axis=[rc, ry, rx])

    out = te.compute((data.shape[0], out_c, out_h, out_w), compute, name="deform_conv2d")
    if fdt == data.dtype:
        return out
    return te.compute(out.shape, lambda *i: _e.cast(out(*i), data.dtype), name="deform_conv2d_cast")


# --------------------------------------------------------------------------------------------
# roi_align


def roi_align(data, rois, batch_indices, output_size, spatial_scale: float, sampling_ratio: int,
              mode: str = "avg", half_pixel: bool = True):
    """RoiAlign (ONNX's): the average or maximum of `sampling_ratio` x `sampling_ratio`
    bilinear samples in each of the `output_size` bins of each region `rois[r] = (x1, y1, x2,
    y2)` of image `batch_indices[r]` of `data` (N, C, H, W); result (R, C, OH, OW).

    `half_pixel` shifts the region by -0.5 pixel; without it a region is at least 1 x 1.
    A sample beyond one pixel outside the image counts 0. A batch index outside [0, N) raises
    IndexError when the kernel runs. `sampling_ratio` 0 is adaptive: ceil(region size / bins)
    samples along each axis, per region (no samples: 0); the reduction runs over a bound,
    ceil((H + 1) / OH) along the height, which any region inside the image keeps to, and a
    larger region raises IndexError naming its grid."""
    if mode not in ("avg", "max"):
        raise ValueError(f"unknown roi_align mode {mode!r}; expected 'avg' or 'max'")
    if sampling_ratio < 0:
        raise ValueError(f"roi_align needs a sampling_ratio >= 0 (0: adaptive), got {sampling_ratio}")
    batch, channels, height, width = data.shape
    out_h, out_w = output_size
    fdt = _float_dtype(data.dtype)
    adaptive = sampling_ratio == 0
    bound_h = _floordiv(_i64(height) + out_h, out_h) if adaptive else sampling_ratio
    bound_w = _floordiv(_i64(width) + out_w, out_w) if adaptive else sampling_ratio
    iy = te.reduce_axis((0, bound_h), name="iy")
    ix = te.reduce_axis((0, bound_w), name="ix")
    zero = _e.const(0.0, fdt)
    one = _e.const(1.0, fdt)
    hf, wf = _f(height, fdt), _f(width, fdt)
    batch_message = ("roi_align: batch index {index} in batch_indices is out of range [{lo}, {hi}) "
                     "for the images of data")

    def axis_taps(v, size, sizef):
        """(low, high, weight of high) of coordinate v >= 0 along an axis of `size` pixels."""
        low = _e.cast(_op.floor(v), "int64")
        edge = low >= size - 1
        low_c = _e.select(edge, size - 1, low)
        high = _e.select(edge, size - 1, low + 1)
        frac = _e.select(edge, zero, v - _op.floor(v))
        return low_c, high, frac

    def region(r):
        """(start_h, start_w, roi_h, roi_w) of region r, in pixels of `data`."""
        shift = _e.const(0.5 if half_pixel else 0.0, fdt)
        scale = _e.const(float(spatial_scale), fdt)
        start_w = _e.cast(rois[r, 0], fdt) * scale - shift
        start_h = _e.cast(rois[r, 1], fdt) * scale - shift
        roi_w = _e.cast(rois[r, 2], fdt) * scale - shift - start_w
        roi_h = _e.cast(rois[r, 3], fdt) * scale - shift - start_h
        if not half_pixel:
            roi_w, roi_h = _op.max(roi_w, one), _op.max(roi_h, one)
        return start_h, start_w, roi_h, roi_w

    def grid(r):
        """Samples per bin along (height, width) of region r: int64, possibly <= 0 (adaptive)."""
        if not adaptive:
            return _e.const(sampling_ratio, "int64"), _e.const(sampling_ratio, "int64")
        _, _, roi_h, roi_w = region(r)
        return (_e.cast(_op.ceil(roi_h / _f(out_h, fdt)), "int64"),
                _e.cast(_op.ceil(roi_w / _f(out_w, fdt)), "int64"))

    def checked_grid(count, bound, axis):
        """`count` (at least 1) checked against the reduction's bound: IndexError past it."""
        message = (f"roi_align: a region needs {{index}} samples per bin along the {axis} (adaptive "
                   "sampling_ratio 0), more than regions inside the image do (fewer than {hi})")
        return _op.check_index(_op.max(count, _e.const(1, "int64")), bound + 1, False, message)

    def compute(r, c, ph, pw):
        start_h, start_w, roi_h, roi_w = region(r)
        grid_h, grid_w = grid(r)
        if adaptive:
            steps_h, steps_w = checked_grid(grid_h, bound_h, "height"), checked_grid(grid_w, bound_w, "width")
            active = _op.all(iy < grid_h, ix < grid_w)
        else:
            steps_h, steps_w, active = grid_h, grid_w, None
        bin_h, bin_w = roi_h / _f(out_h, fdt), roi_w / _f(out_w, fdt)
        half = _e.const(0.5, fdt)
        y = start_h + _f(ph, fdt) * bin_h + (_f(iy, fdt) + half) * bin_h / _f(steps_h, fdt)
        x = start_w + _f(pw, fdt) * bin_w + (_f(ix, fdt) + half) * bin_w / _f(steps_w, fdt)
        outside = _op.any(y < -one, y > hf, x < -one, x > wf)
        y0, y1, ly = axis_taps(_op.max(y, zero), height, hf)
        x0, x1, lx = axis_taps(_op.max(x, zero), width, wf)
        n = _op.check_index(_e.cast(batch_indices[r], "int64"), batch, False, batch_message)

        def at(yy, xx):
            return _e.cast(data[n, c, yy, xx], fdt)

        terms = [(one - ly) * (one - lx) * at(y0, x0), (one - ly) * lx * at(y0, x1),
                 ly * (one - lx) * at(y1, x0), ly * lx * at(y1, x1)]
        if mode == "avg":
            value = _e.select(outside, zero, terms[0] + terms[1] + terms[2] + terms[3])
            count = _f(steps_h * steps_w, fdt)
            if active is not None:
                value = _e.select(active, value, zero)
            return te.sum(value / count, axis=[iy, ix])
        value = _e.select(outside, zero, _op.max(_op.max(terms[0], terms[1]), _op.max(terms[2], terms[3])))
        if active is not None:
            value = _e.select(active, value, _op.min_value(fdt))
        return te.max(value, axis=[iy, ix])

    out = te.compute((rois.shape[0], channels, out_h, out_w), compute, name="roi_align")
    if adaptive and mode == "max":  # a region without samples (an empty grid) is 0
        def empty_is_zero(r, c, ph, pw):
            grid_h, grid_w = grid(r)
            empty = _op.any(grid_h <= 0, grid_w <= 0)
            return _e.select(empty, zero, out[r, c, ph, pw])

        out = te.compute(out.shape, empty_is_zero, name="roi_align_empty")
    if fdt == data.dtype:
        return out
    return te.compute(out.shape, lambda *i: _e.cast(out(*i), data.dtype), name="roi_align_cast")


# --------------------------------------------------------------------------------------------
# max_pool2d_indices


def max_pool2d_indices(data, out_size, kernel, strides, pads, dilations, storage_order: int = 0):
    """The flat index into `data` (N, C, H, W) of the maximum of each 2-d max-pooling window
    (the first on ties; padding never wins): `((n * C + c) * H + h) * W + w`, or with
    `storage_order=1` (column-major) `((n * C + c) * W + w) * H + h`. `out_size` is the pooled
    (OH, OW), `pads` (top, left, bottom, right)."""
    _, channels, height, width = data.shape
    kh, kw = kernel
    k = te.reduce_axis((0, kh * kw), name="k")

    def position(o, kk, axis):
        return o * strides[axis] - pads[axis] + kk * dilations[axis]

    def best(n, c, i, j):
        h, w = position(i, _floordiv(k, kw), 0), position(j, _floormod(k, kw), 1)
        inside = _op.all(h >= 0, h < height, w >= 0, w < width)
        value = data[n, c, _clamp_index(h, height), _clamp_index(w, width)]
        return te.argmax(value, axis=k, where=inside)

    shape = (data.shape[0], channels, out_size[0], out_size[1])
    arg = te.compute(shape, best, name="max_pool_arg")

    def flat(n, c, i, j):
        kk = _e.cast(arg(n, c, i, j), "int64")
        h, w = position(i, _floordiv(kk, kw), 0), position(j, _floormod(kk, kw), 1)
        plane = n * channels + c
        if storage_order:
            return (plane * width + w) * height + h
        return (plane * height + h) * width + w

    return te.compute(shape, flat, name="max_pool_indices")
