"""Image-region operators (`relax.op.image_regions`): ONNX's `col2im`, `deform_conv2d`, `roi_align`
and MaxPool's `max_pool2d_indices`, each reading regions (blocks, windows, regions of interest) of
an image. Their operator names stay under `relax.image.` (TVM's), as the scripts print them.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((1, 12, 20), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.image_regions.col2im(x, (5, 6), (2, 3))).struct_info
R.Tensor((1, 2, 5, 6), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.expr import IntImm
from ..expr import Call, ShapeExpr
from ..struct_info import ShapeStructInfo, TensorStructInfo
from .image import _choice, _float_arg, _image_arg
from .infer import analyzer_of, is_const, op_label, provably_different, tensor_arg
from .registry import Op, OpPatternKind, register_op

_REGIONS = topi.image_regions


def _infer_col2im(call, bb):
    data = tensor_arg(call, 0, "data")
    if data.ndim not in (-1, 3):
        raise TypeInferenceError(
            f"{op_label(call)} expects data to be a 3-d tensor (N, C * prod(block), L), got {data}"
        )
    image, block = call.args[1].struct_info, call.args[2].struct_info
    for sinfo, name in ((image, "image_shape"), (block, "block_shape")):
        if not isinstance(sinfo, ShapeStructInfo) or sinfo.values is None:
            raise TypeInferenceError(f"{op_label(call)} expects {name} to be a shape value, got {sinfo}")
    nd = len(image.values)
    if len(block.values) != nd:
        raise TypeInferenceError(
            f"{op_label(call)} expects block_shape to have one size per image axis ({nd}), got {block}"
        )
    for key, count in (("strides", nd), ("dilations", nd), ("pads", 2 * nd)):
        if len(call.attrs[key]) != count:
            raise TypeInferenceError(f"{op_label(call)} expects {count} {key}, got {list(call.attrs[key])}")
    if data.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=nd + 2, vdevice=data.vdevice)
    kernel = block.values[0]
    for b in block.values[1:]:
        kernel = kernel * b
    kernel = analyzer_of(bb).simplify(kernel)
    channels = data.shape_values[1]
    if isinstance(kernel, IntImm) and isinstance(channels, IntImm) and channels.value % max(kernel.value, 1):
        raise TypeInferenceError(
            f"{op_label(call)} expects data's axis 1 ({channels.value}) to be a multiple of the block size "
            f"{kernel.value}, got {data}"
        )
    out = analyzer_of(bb).simplify(channels // kernel) if isinstance(kernel, IntImm) else channels // kernel
    return TensorStructInfo((data.shape_values[0], out, *image.values), data.dtype, vdevice=data.vdevice)



def _legalize_col2im(bb, call):
    a = call.attrs
    return bb.call_te(
        _REGIONS.col2im,
        call.args[0],
        list(call.args[1].struct_info.values),
        list(call.args[2].struct_info.values),
        strides=list(a["strides"]),
        dilations=list(a["dilations"]),
        pads=list(a["pads"]),
        primfunc_name_hint="col2im",
    )



def _infer_deform_conv2d(call, bb):
    names = ("data", "weight", "offset", "mask")
    args = [tensor_arg(call, i, name) for i, name in enumerate(names)]
    for sinfo, name in zip(args, names):
        if sinfo.ndim not in (-1, 4):
            raise TypeInferenceError(f"{op_label(call)} expects {name} to be a 4-d tensor, got {sinfo}")
        _float_arg(call, sinfo, name)
    data, weight, offset, _ = args
    for key, count in (("strides", 2), ("dilations", 2), ("pads", 4)):
        if len(call.attrs[key]) != count:
            raise TypeInferenceError(f"{op_label(call)} expects {count} {key}, got {list(call.attrs[key])}")
    if data.shape_values is None or weight.shape_values is None or offset.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=4, vdevice=data.vdevice)
    n, c = data.shape_values[:2]
    oc, cg, kh, kw = weight.shape_values
    analyzer = analyzer_of(bb)
    groups, offset_groups = call.attrs["groups"], call.attrs["offset_groups"]
    if provably_different(cg * groups, c, analyzer):
        raise TypeInferenceError(
            f"{op_label(call)} expects weight's axis 1 times groups ({groups}) to be data's channels, "
            f"got data {data} and weight {weight}"
        )
    if provably_different(offset.shape_values[1], kh * kw * 2 * offset_groups, analyzer):
        raise TypeInferenceError(
            f"{op_label(call)} expects offset to have offset_groups * KH * KW * 2 channels, got {offset}"
        )
    return TensorStructInfo((n, oc, *offset.shape_values[2:]), data.dtype, vdevice=data.vdevice)



def _legalize_deform_conv2d(bb, call):
    a = call.attrs
    return bb.call_te(
        _REGIONS.deform_conv2d,
        *call.args,
        strides=list(a["strides"]),
        pads=list(a["pads"]),
        dilations=list(a["dilations"]),
        groups=a["groups"],
        offset_groups=a["offset_groups"],
        primfunc_name_hint="deform_conv2d",
    )



def _infer_roi_align(call, bb):
    data = _image_arg(call, 0, "data", "(N, C, H, W)")
    rois = tensor_arg(call, 1, "rois")
    index = tensor_arg(call, 2, "batch_indices")
    _float_arg(call, data, "data")
    _float_arg(call, rois, "rois")
    if rois.ndim not in (-1, 2) or (rois.shape_values is not None and not is_const(rois.shape_values[1], 4)):
        raise TypeInferenceError(f"{op_label(call)} expects rois to be shaped (R, 4), got {rois}")
    if index.ndim not in (-1, 1) or (not index.is_unknown_dtype and not index.dtype.startswith("int")):
        raise TypeInferenceError(
            f"{op_label(call)} expects batch_indices to be a 1-d integer tensor, got {index}"
        )
    _choice(call, "mode", ("avg", "max"))
    if call.attrs["sampling_ratio"] < 0:
        raise TypeInferenceError(
            f"{op_label(call)} expects a sampling_ratio >= 0 (0: adaptive), "
            f"got {call.attrs['sampling_ratio']}"
        )
    out_h, out_w = call.attrs["output_size"]
    if data.shape_values is None or rois.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=4, vdevice=data.vdevice)
    dims = (rois.shape_values[0], data.shape_values[1], IntImm("int64", out_h), IntImm("int64", out_w))
    return TensorStructInfo(dims, data.dtype, vdevice=data.vdevice)



def _legalize_roi_align(bb, call):
    a = call.attrs
    return bb.call_te(
        _REGIONS.roi_align,
        *call.args,
        output_size=tuple(a["output_size"]),
        spatial_scale=a["spatial_scale"],
        sampling_ratio=a["sampling_ratio"],
        mode=a["mode"],
        half_pixel=a["half_pixel"],
        primfunc_name_hint="roi_align",
    )



def _infer_max_pool2d_indices(call, bb):
    data = _image_arg(call, 0, "data", "(N, C, H, W)")
    size = call.args[1].struct_info
    if not isinstance(size, ShapeStructInfo) or size.ndim not in (-1, 2):
        raise TypeInferenceError(f"{op_label(call)} expects out_size to be a 2-d shape (OH, OW), got {size}")
    for key, count in (("kernel", 2), ("strides", 2), ("dilations", 2), ("pads", 4)):
        if len(call.attrs[key]) != count:
            raise TypeInferenceError(f"{op_label(call)} expects {count} {key}, got {list(call.attrs[key])}")
    if call.attrs["storage_order"] not in (0, 1):
        raise TypeInferenceError(
            f"{op_label(call)} expects storage_order 0 or 1, got {call.attrs['storage_order']}"
        )
    if data.shape_values is None or size.values is None:
        return TensorStructInfo(dtype="int64", ndim=4, vdevice=data.vdevice)
    return TensorStructInfo((*data.shape_values[:2], *size.values), "int64", vdevice=data.vdevice)



def _legalize_max_pool2d_indices(bb, call):
    a = call.attrs
    return bb.call_te(
        _REGIONS.max_pool2d_indices,
        call.args[0],
        list(call.args[1].struct_info.values),
        kernel=list(a["kernel"]),
        strides=list(a["strides"]),
        pads=list(a["pads"]),
        dilations=list(a["dilations"]),
        storage_order=a["storage_order"],
        primfunc_name_hint="max_pool2d_indices",
    )



register_op(
    "relax.image.col2im",
    3,
    _infer_col2im,
    legalize=_legalize_col2im,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "strides": "the step between blocks, per image axis",
        "dilations": "the spacing of a block's elements, per image axis",
        "pads": "the padding of the image: begins then ends",
    },
    description="Sum the blocks of a (N, C * prod(block_shape), L) tensor back into an image "
    "(N, C, *image_shape) (ONNX's Col2Im).",
)



register_op(
    "relax.image.deform_conv2d",
    4,
    _infer_deform_conv2d,
    legalize=_legalize_deform_conv2d,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "strides": "(stride_h, stride_w)",
        "pads": "(top, left, bottom, right)",
        "dilations": "(dilation_h, dilation_w)",
        "groups": "channel groups of the convolution",
        "offset_groups": "channel groups sharing one set of offsets and masks",
    },
    description="Deformable 2-d convolution: kernel taps read the image by bilinear interpolation "
    "at their positions plus learned offsets, scaled by a mask (ONNX's DeformConv, without bias).",
)



register_op(
    "relax.image.roi_align",
    3,
    _infer_roi_align,
    legalize=_legalize_roi_align,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "output_size": "(OH, OW), the bins of each region",
        "spatial_scale": "the factor from roi coordinates to pixels",
        "sampling_ratio": "samples per bin along each axis (0: adaptive, ceil(region size / bins))",
        "mode": "avg or max over a bin's samples",
        "half_pixel": "shift regions by -0.5 pixel (ONNX's half_pixel mode)",
    },
    description="Pool bilinear samples of (x1, y1, x2, y2) regions of an image into fixed-size "
    "bins (ONNX's RoiAlign).",
)



register_op(
    "relax.image.max_pool2d_indices",
    2,
    _infer_max_pool2d_indices,
    legalize=_legalize_max_pool2d_indices,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "kernel": "(KH, KW)",
        "strides": "(stride_h, stride_w)",
        "pads": "(top, left, bottom, right)",
        "dilations": "(dilation_h, dilation_w)",
        "storage_order": "0: row-major flat indices, 1: column-major",
    },
    description="The flat int64 index of each 2-d max-pooling window's maximum (ONNX MaxPool's Indices).",
)



def col2im(data, image_shape, block_shape, strides=None, dilations=None, pads=None) -> Call:
    """The blocks of `data` (N, C * prod(block_shape), L) summed back into an image
    (N, C, *image_shape); `image_shape` and `block_shape` are shapes (symbolic sizes welcome),
    `pads` the begins then the ends (default: ones for strides and dilations, zero pads)."""
    image, block = ShapeExpr(list(image_shape)), ShapeExpr(list(block_shape))
    nd = len(image.values)
    return Call(
        Op.get("relax.image.col2im"),
        [data, image, block],
        {
            "strides": tuple(int(v) for v in (strides or [1] * nd)),
            "dilations": tuple(int(v) for v in (dilations or [1] * nd)),
            "pads": tuple(int(v) for v in (pads or [0] * (2 * nd))),
        },
    )



def deform_conv2d(
    data, weight, offset, mask, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), groups=1,
    offset_groups=1,
) -> Call:
    """Deformable convolution of `data` (N, C, H, W) with `weight` (OC, C / groups, KH, KW):
    `offset` (N, offset_groups * KH * KW * 2, OH, OW) moves each tap by (dy, dx), `mask`
    (N, offset_groups * KH * KW, OH, OW) scales it; the result is (N, OC, OH, OW)."""
    return Call(
        Op.get("relax.image.deform_conv2d"),
        [data, weight, offset, mask],
        {
            "strides": tuple(int(v) for v in strides),
            "pads": tuple(int(v) for v in pads),
            "dilations": tuple(int(v) for v in dilations),
            "groups": int(groups),
            "offset_groups": int(offset_groups),
        },
    )



def roi_align(
    data, rois, batch_indices, output_size, spatial_scale=1.0, sampling_ratio=2, mode="avg", half_pixel=True
) -> Call:
    """RoiAlign of `data` (N, C, H, W) over `rois` (R, 4) of images `batch_indices` (R,):
    (R, C, OH, OW)."""
    return Call(
        Op.get("relax.image.roi_align"),
        [data, rois, batch_indices],
        {
            "output_size": tuple(int(v) for v in output_size),
            "spatial_scale": float(spatial_scale),
            "sampling_ratio": int(sampling_ratio),
            "mode": str(mode),
            "half_pixel": bool(half_pixel),
        },
    )



def max_pool2d_indices(data, out_size, kernel, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1),
                       storage_order=0) -> Call:
    """The flat index into `data` (N, C, H, W) of each 2-d max-pooling window's maximum, shaped
    (N, C, *out_size) (the pooled size, e.g. of `relax.op.nn.max_pool2d`'s result)."""
    return Call(
        Op.get("relax.image.max_pool2d_indices"),
        [data, ShapeExpr(list(out_size))],
        {
            "kernel": tuple(int(v) for v in kernel),
            "strides": tuple(int(v) for v in strides),
            "pads": tuple(int(v) for v in pads),
            "dilations": tuple(int(v) for v in dilations),
            "storage_order": int(storage_order),
        },
    )


__all__ = ["col2im", "deform_conv2d", "max_pool2d_indices", "roi_align"]
