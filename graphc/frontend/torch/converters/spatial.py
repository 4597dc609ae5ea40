"""Convolutions, pooling, padding and resampling (NCHW-style layouts, as PyTorch has them)."""

from __future__ import annotations

from .... import relax, tir
from ....errors import FrontendError
from .common import dtype_of, ndim_of, shape_of
from .registry import converter

op = relax.op
_CONV = {1: op.nn.conv1d, 2: op.nn.conv2d, 3: op.nn.conv3d}
_CONV_T = {1: op.nn.conv1d_transpose, 2: op.nn.conv2d_transpose, 3: op.nn.conv3d_transpose}
_MAX_POOL = {1: op.nn.max_pool1d, 2: op.nn.max_pool2d, 3: op.nn.max_pool3d}
_AVG_POOL = {1: op.nn.avg_pool1d, 2: op.nn.avg_pool2d, 3: op.nn.avg_pool3d}
_ADAPTIVE = {1: op.nn.adaptive_avg_pool1d, 2: op.nn.adaptive_avg_pool2d, 3: op.nn.adaptive_avg_pool3d}


def _tuple(value, n: int) -> list[int]:
    if isinstance(value, int):
        return [value] * n
    value = [int(v) for v in value]
    return value * n if len(value) == 1 else value


def _add_bias(importer, out, bias, spatial: int):
    if bias is None:
        return out
    (channels,) = shape_of(bias)
    shaped = importer.emit(op.reshape(bias, relax.ShapeExpr([channels] + [1] * spatial)))
    return op.add(importer.emit(out), shaped)


def _convolution(importer, args, transposed: bool, output_padding):
    """Every convolution overload: the schema names of input, weight, bias, stride, padding,
    dilation and groups are the same; `transposed` and `output_padding` vary."""
    x, weight, bias = args["input"], args["weight"], args["bias"]
    stride, padding, dilation, groups = args["stride"], args["padding"], args["dilation"], args["groups"]
    spatial = ndim_of(x) - 2
    if isinstance(padding, str):
        raise args.unsupported(
            "padding", "(string padding) is decomposed by torch.export; got it undecomposed"
        )
    kw = {
        "strides": _tuple(stride, spatial),
        "padding": _tuple(padding, spatial),
        "dilation": _tuple(dilation, spatial),
        "groups": int(groups),
        "out_dtype": args.out_dtype,
    }
    if transposed:
        fn = _CONV_T.get(spatial)
        if fn is None:
            raise FrontendError(
                f"{args.op}: transposed convolution over {spatial} spatial dims is not supported"
            )
        out = fn(x, weight, output_padding=_tuple(output_padding, spatial), **kw)
    else:
        if any(_tuple(output_padding, spatial)):
            raise args.unsupported("output_padding", "must be 0 for a forward convolution")
        out = _CONV[spatial](x, weight, **kw)
    return _add_bias(importer, out, bias, spatial)


@converter("aten.convolution.default")
def _convolution_op(importer, args):
    return _convolution(importer, args, args["transposed"], args["output_padding"])


@converter("aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default")
def _conv(importer, args):
    return _convolution(importer, args, False, 0)


@converter("aten.conv_transpose1d.default", "aten.conv_transpose2d.input", "aten.conv_transpose3d.input")
def _conv_transpose(importer, args):
    return _convolution(importer, args, True, args["output_padding"])


def _pool_args(args, spatial):
    kernel = _tuple(args["kernel_size"], spatial)
    stride = args["stride"]
    stride = (
        kernel
        if stride is None or (isinstance(stride, list | tuple) and not stride)
        else _tuple(stride, spatial)
    )
    return kernel, stride, _tuple(args["padding"], spatial)


@converter(
    "aten.max_pool1d.default",
    "aten.max_pool2d.default",
    "aten.max_pool3d.default",
    "aten.max_pool2d_with_indices.default",
    "aten.max_pool3d_with_indices.default",
    "aten.max_pool1d_with_indices.default",
)
def _max_pool(importer, args):
    x = args["self"]
    spatial = ndim_of(x) - 2
    kernel, stride, padding = _pool_args(args, spatial)
    out = _MAX_POOL[spatial](
        x, kernel, stride, padding, _tuple(args["dilation"], spatial), ceil_mode=bool(args["ceil_mode"])
    )
    if "with_indices" in args.op:
        for user in args.node.users:
            if user.args[1] != 0:
                raise FrontendError(f"{args.op}: the indices output of max pooling is not supported")
        return relax.Tuple([importer.emit(out)])
    return out


@converter("aten.avg_pool1d.default", "aten.avg_pool2d.default", "aten.avg_pool3d.default")
def _avg_pool(importer, args):
    x = args["self"]
    spatial = ndim_of(x) - 2
    kernel, stride, padding = _pool_args(args, spatial)
    divisor = args.get("divisor_override")
    include_pad = bool(args["count_include_pad"])
    if divisor is not None:
        if bool(args["ceil_mode"]):
            raise args.unsupported("divisor_override", "is not supported together with ceil_mode")
        include_pad = True  # every window then holds the full kernel: mean * kernel = the window sum
    out = _AVG_POOL[spatial](
        x,
        kernel,
        stride,
        padding,
        [1] * spatial,
        ceil_mode=bool(args["ceil_mode"]),
        count_include_pad=include_pad,
    )
    if divisor is None:
        return out
    volume = 1
    for k in kernel:
        volume *= k
    return op.multiply(importer.emit(out), relax.const(volume / int(divisor), dtype_of(x)))


@converter(
    "aten.adaptive_avg_pool1d.default",
    "aten.adaptive_avg_pool2d.default",
    "aten._adaptive_avg_pool2d.default",
    "aten.adaptive_avg_pool3d.default",
    "aten._adaptive_avg_pool3d.default",
)
def _adaptive_avg_pool(importer, args):
    x = args["self"]
    spatial = ndim_of(x) - 2
    return _ADAPTIVE[spatial](x, [int(s) for s in _tuple(args["output_size"], spatial)])


@converter(
    "aten.constant_pad_nd.default",
    "aten.pad.default",
    "aten.reflection_pad1d.default",
    "aten.reflection_pad2d.default",
    "aten.reflection_pad3d.default",
    "aten.replication_pad1d.default",
    "aten.replication_pad2d.default",
    "aten.replication_pad3d.default",
)
def _pad(importer, args):
    x = args["self"]
    n = ndim_of(x)
    pad = [int(p) for p in (args["pad"] if "pad" in args.values else args["padding"])]
    if any(p < 0 for p in pad):
        raise args.unsupported("pad", "has negative (cropping) widths")
    width = [0] * (2 * n)
    for i in range(len(pad) // 2):  # torch lists (before, after) pairs from the last axis backwards
        axis = n - 1 - i
        width[2 * axis], width[2 * axis + 1] = pad[2 * i], pad[2 * i + 1]
    name = args.op
    if "reflection" in name:
        mode, value = "reflect", 0.0
    elif "replication" in name:
        mode, value = "edge", 0.0
    elif name.startswith("aten.pad"):
        mode = {
            "constant": "constant",
            "reflect": "reflect",
            "replicate": "edge",
            "circular": "circular",
        }.get(args["mode"])
        if mode is None:
            raise args.unsupported("mode")
        value = args["value"] or 0.0
    else:
        mode, value = "constant", args["value"]
    return op.nn.pad(x, width, mode, float(value))


@converter("aten.pixel_shuffle.default")
def _pixel_shuffle(importer, args):
    return op.nn.pixel_shuffle(args["self"], int(args["upscale_factor"]))


_RESIZE = {
    "aten.upsample_nearest2d": ("nearest_neighbor", "asymmetric", "floor"),
    "aten._upsample_nearest_exact2d": ("nearest_neighbor", "half_pixel", "round_prefer_ceil"),
    "aten.upsample_bilinear2d": ("linear", None, ""),
    "aten.upsample_bicubic2d": ("cubic", None, ""),
}


@converter(
    "aten.upsample_nearest2d.vec",
    "aten.upsample_nearest2d.default",
    "aten.upsample_bilinear2d.vec",
    "aten.upsample_bilinear2d.default",
    "aten.upsample_bicubic2d.vec",
    "aten.upsample_bicubic2d.default",
    "aten._upsample_nearest_exact2d.vec",
    "aten._upsample_nearest_exact2d.default",
)
def _upsample(importer, args):
    x = args["input"] if "input" in args.values else args["self"]
    packet = args.op.rsplit(".", 1)[0]
    method, mode, rounding = _RESIZE[packet]
    if mode is None:
        mode = "align_corners" if args["align_corners"] else "half_pixel"
    else:
        args.ignore("align_corners")
    args.ignore("output_size", "scale_factors", "scales_h", "scales_w")  # the traced output size
    size = args.out_shape[2:]
    return op.image.resize2d(
        x,
        relax.ShapeExpr(size),
        method=method,
        coordinate_transformation_mode=mode,
        rounding_method=rounding,
        cubic_alpha=-0.75,
    )


_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


@converter("aten.grid_sampler_2d.default", "aten.grid_sampler.default")
def _grid_sampler(importer, args):
    x, grid = args["input"], args["grid"]
    if ndim_of(x) != 4:
        raise args.unsupported("input", "must be 4-d (N, C, H, W)")
    method = _GRID_MODES.get(args["interpolation_mode"])
    padding = _GRID_PADDING.get(args["padding_mode"])
    if method is None:
        raise args.unsupported("interpolation_mode", "must be 0 (bilinear), 1 (nearest) or 2 (bicubic)")
    if padding is None:
        raise args.unsupported("padding_mode", "must be 0 (zeros), 1 (border) or 2 (reflection)")
    grid = importer.emit(op.permute_dims(grid, [0, 3, 1, 2]))  # (N, H, W, 2) -> graphc's (N, 2, H, W)
    return op.image.grid_sample(
        x, grid, method=method, layout="NCHW", padding_mode=padding, align_corners=bool(args["align_corners"])
    )


@converter(
    "aten.adaptive_max_pool1d.default", "aten.adaptive_max_pool2d.default", "aten.adaptive_max_pool3d.default"
)
def _adaptive_max_pool(importer, args):
    """Adaptive max pooling where the windows tile the input: a max pool with stride = kernel."""
    x = args["self"]
    spatial = ndim_of(x) - 2
    out_size = _tuple(args["output_size"], spatial)
    in_size = [d.value if isinstance(d, tir.IntImm) else None for d in shape_of(x)[2:]]
    if any(i is None or o <= 0 or i % o for i, o in zip(in_size, out_size)):
        raise args.unsupported(
            "output_size", f"must divide the static input size {in_size} (uneven adaptive windows)"
        )
    for user in args.node.users:
        if user.args[1] != 0:
            raise FrontendError(f"{args.op}: the indices output of max pooling is not supported")
    kernel = [i // o for i, o in zip(in_size, out_size)]
    out = _MAX_POOL[spatial](x, kernel, kernel, [0] * spatial, [1] * spatial)
    return relax.Tuple([importer.emit(out)])
