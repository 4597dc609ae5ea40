"""Image resampling operators (`relax.op.image`): `resize2d` (ONNX Resize's modes) and `grid_sample`
(torch's); the operators that gather image regions are in `image_regions`.

Both take a 4-d image in a layout ordering the letters N, C, H and W ("NCHW", "NHWC", ...)
and give a result in the same layout with new spatial extents: `resize2d` takes them from its
`size` argument (a shape, symbolic dimensions welcome), `grid_sample` from its grid, which
has TVM's layout `(N, 2, H_out, W_out)`.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 8, 8, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.image.resize2d(x, (16, 12), layout="NHWC")).struct_info
R.Tensor((n, 16, 12, 3), dtype="float32")
>>> bb.normalize(relax.op.image.resize2d(x, (16, 12), method="bilinear"))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'image.resize2d' expects method to be one of ['nearest_neighbor', \
'linear', 'cubic'], got 'bilinear'
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.expr import IntImm, PrimExpr
from ..expr import Call, Expr, ShapeExpr
from ..struct_info import UNKNOWN_DTYPE, ShapeStructInfo, TensorStructInfo, prim_text
from .infer import analyzer_of, attr_dtype, op_label, provably_different, tensor_arg
from .registry import Op, OpPatternKind, register_op

_IMAGE = topi.image


def _choice(call, key: str, allowed) -> str:
    value = call.attrs[key]
    if value not in allowed:
        raise TypeInferenceError(
            f"{op_label(call)} expects {key} to be one of {list(allowed)}, got {value!r}"
        )
    return value


def _layout_axes(call) -> dict:
    layout = call.attrs["layout"]
    try:
        return _IMAGE.layout_axes(layout)
    except ValueError:
        raise TypeInferenceError(
            f"{op_label(call)} expects layout to order the letters N, C, H and W "
            f'(e.g. "NCHW", "NHWC"), got {layout!r}'
        ) from None


def _image_arg(call, index: int, name: str, form: str) -> TensorStructInfo:
    """Argument `index`, a 4-d tensor (or one of unknown rank); `form` describes its axes."""
    sinfo = tensor_arg(call, index, name)
    if sinfo.ndim not in (-1, 4):
        raise TypeInferenceError(f"{op_label(call)} expects {name} to be a 4-d tensor {form}, got {sinfo}")
    return sinfo


def _float_arg(call, sinfo: TensorStructInfo, name: str) -> None:
    if not sinfo.is_unknown_dtype and not sinfo.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op_label(call)} requires {name} to have a float dtype, got {sinfo}")


def _with_spatial(data: TensorStructInfo, axes: dict, height, width, dtype: str) -> TensorStructInfo:
    """`data`'s struct info with its H and W extents replaced (only the rank when unknown)."""
    if data.shape_values is None or height is None:
        return TensorStructInfo(dtype=dtype, ndim=4, vdevice=data.vdevice)
    dims = list(data.shape_values)
    dims[axes["H"]], dims[axes["W"]] = height, width
    return TensorStructInfo(tuple(dims), dtype, vdevice=data.vdevice)


def _infer_resize2d(call, bb):
    axes = _layout_axes(call)
    layout = call.attrs["layout"]
    data = _image_arg(call, 0, "data", f"in layout {layout}")
    size = call.args[1].struct_info
    if not isinstance(size, ShapeStructInfo) or size.ndim not in (-1, 2):
        raise TypeInferenceError(
            f"{op_label(call)} expects size to be a 2-d shape (R.Shape([height, width])), got {size}"
        )
    _choice(call, "method", _IMAGE.RESIZE_METHODS)
    _choice(call, "coordinate_transformation_mode", _IMAGE.COORDINATE_MODES)
    _choice(call, "rounding_method", _IMAGE.ROUNDING_METHODS)
    roi = call.attrs["roi"]
    if len(roi) != 4:
        raise TypeInferenceError(
            f"{op_label(call)} expects roi to be 4 floats (start_h, start_w, end_h, end_w), got {list(roi)}"
        )
    if len(call.args) not in (2, 3, 4):
        raise TypeInferenceError(f"{op_label(call)} expects 2 to 4 arguments, got {len(call.args)}")
    if len(call.args) == 4:
        window = call.args[3].struct_info
        if not isinstance(window, ShapeStructInfo) or window.ndim != 2 or not call.attrs.get("antialias"):
            raise TypeInferenceError(
                f"{op_label(call)} expects window, its 4th argument, to be a 2-d shape (taps_h, taps_w) "
                f"of an antialiased resize, got {window}"
            )
    if len(call.args) >= 3:
        params = tensor_arg(call, 2, "params")
        _float_arg(call, params, "params")
        dims = params.shape_values
        wrong = dims is not None and isinstance(dims[0], IntImm) and dims[0].value != 6
        if params.ndim not in (-1, 1) or wrong:
            raise TypeInferenceError(
                f"{op_label(call)} expects params to be a 1-d tensor of 6 floats "
                f"(scale_h, scale_w, start_h, start_w, end_h, end_w), got {params}"
            )
    if call.attrs.get("antialias") and (call.attrs["method"] == "nearest_neighbor" or len(call.args) == 3):
        # run-time params need the run-time window (taps per axis) too
        raise TypeInferenceError(
            f"{op_label(call)} supports antialias for the linear and cubic methods with static scales "
            f"(no run-time params), got method {call.attrs['method']!r} with {len(call.args)} arguments"
        )
    values = size.values
    if values is not None and any(isinstance(d, IntImm) and d.value < 0 for d in values):
        raise TypeInferenceError(f"{op_label(call)} expects a non-negative size, got {size}")
    dtype = attr_dtype(call, "out_dtype")
    if dtype == UNKNOWN_DTYPE:
        dtype = data.dtype
    height, width = values if values is not None else (None, None)
    return _with_spatial(data, axes, height, width, dtype)


def _infer_grid_sample(call, bb):
    axes = _layout_axes(call)
    layout = call.attrs["layout"]
    data = _image_arg(call, 0, "data", f"in layout {layout}")
    grid = _image_arg(call, 1, "grid", "shaped (N, 2, H_out, W_out)")
    _float_arg(call, data, "data")
    _float_arg(call, grid, "grid")
    _choice(call, "method", _IMAGE.GRID_METHODS)
    _choice(call, "padding_mode", _IMAGE.PADDING_MODES)
    dims = grid.shape_values
    if dims is None:
        return _with_spatial(data, axes, None, None, data.dtype)
    batch = data.shape_values[axes["N"]] if data.shape_values is not None else None
    analyzer = analyzer_of(bb)
    if provably_different(dims[1], IntImm("int64", 2), analyzer) or (
        batch is not None and provably_different(dims[0], batch, analyzer)
    ):
        want = prim_text(batch) if batch is not None else "N"
        raise TypeInferenceError(
            f"{op_label(call)} expects grid to have shape ({want}, 2, H_out, W_out) for data {data} "
            f"in layout {layout}, got {grid}"
        )
    return _with_spatial(data, axes, dims[2], dims[3], data.dtype)


def _infer_grid_sample3d(call, bb):
    data = tensor_arg(call, 0, "data")
    grid = tensor_arg(call, 1, "grid")
    forms = ((data, "data", "(N, C, D, H, W)"), (grid, "grid", "(N, D_out, H_out, W_out, 3)"))
    for sinfo, name, form in forms:
        if sinfo.ndim not in (-1, 5):
            raise TypeInferenceError(
                f"{op_label(call)} expects {name} to be a 5-d tensor {form}, got {sinfo}"
            )
    _float_arg(call, data, "data")
    _float_arg(call, grid, "grid")
    _choice(call, "method", ("bilinear", "nearest"))
    _choice(call, "padding_mode", _IMAGE.PADDING_MODES)
    dims, shape = grid.shape_values, data.shape_values
    if dims is None or shape is None:
        return TensorStructInfo(dtype=data.dtype, ndim=5, vdevice=data.vdevice)
    analyzer = analyzer_of(bb)
    three = IntImm("int64", 3)
    if provably_different(dims[4], three, analyzer) or provably_different(dims[0], shape[0], analyzer):
        raise TypeInferenceError(
            f"{op_label(call)} expects grid to have shape ({prim_text(shape[0])}, D_out, H_out, W_out, 3) "
            f"for data {data}, got {grid}"
        )
    return TensorStructInfo((shape[0], shape[1], dims[1], dims[2], dims[3]), data.dtype, vdevice=data.vdevice)


def _legalize_grid_sample3d(bb, call):
    a = call.attrs
    return bb.call_te(
        _IMAGE.grid_sample3d,
        call.args[0],
        call.args[1],
        method=a["method"],
        padding_mode=a["padding_mode"],
        align_corners=a["align_corners"],
        primfunc_name_hint="grid_sample3d",
    )


def _legalize_resize2d(bb, call):
    a = call.attrs
    out_dtype = a["out_dtype"]
    return bb.call_te(
        _IMAGE.resize2d,
        call.args[0],
        tuple(a["roi"]),
        list(call.args[1].struct_info.values),
        layout=a["layout"],
        method=a["method"],
        coordinate_transformation_mode=a["coordinate_transformation_mode"],
        rounding_method=a["rounding_method"],
        bicubic_alpha=a["cubic_alpha"],
        bicubic_exclude=a["cubic_exclude"],
        extrapolation_value=a["extrapolation_value"],
        out_dtype=None if out_dtype in (None, UNKNOWN_DTYPE) else out_dtype,
        scale=a.get("scale"),
        params=call.args[2] if len(call.args) >= 3 else None,
        antialias=bool(a.get("antialias", False)),
        window=list(call.args[3].struct_info.values) if len(call.args) == 4 else None,
        primfunc_name_hint="resize2d",
    )


def _legalize_grid_sample(bb, call):
    a = call.attrs
    return bb.call_te(
        _IMAGE.grid_sample,
        call.args[0],
        call.args[1],
        method=a["method"],
        layout=a["layout"],
        padding_mode=a["padding_mode"],
        align_corners=a["align_corners"],
        primfunc_name_hint="grid_sample",
    )


register_op(
    "relax.image.resize2d",
    -1,
    _infer_resize2d,
    legalize=_legalize_resize2d,
    pattern=OpPatternKind.kInjective,
    attrs={
        "roi": "(start_h, start_w, end_h, end_w), read by tf_crop_and_resize",
        "layout": "the image layout, an ordering of N, C, H, W",
        "method": "nearest_neighbor, linear or cubic",
        "coordinate_transformation_mode": "how output coordinates map to input ones (ONNX's modes)",
        "rounding_method": "how nearest_neighbor rounds ('' picks TVM's default for the mode)",
        "cubic_alpha": "the cubic kernel's parameter (PyTorch: -0.75)",
        "cubic_exclude": "1: drop cubic taps outside the image and renormalize",
        "extrapolation_value": "the value outside the roi (tf_crop_and_resize)",
        "out_dtype": "the result dtype; void means data's dtype",
        "scale": "(scale_h, scale_w) given instead of sizes: the sampling step (ONNX), or None",
        "antialias": "linear and cubic: widen the kernel by 1 / scale when downsampling (ONNX)",
    },
    description="Resize the H and W dimensions of an image to `size`.",
)
register_op(
    "relax.image.grid_sample",
    2,
    _infer_grid_sample,
    legalize=_legalize_grid_sample,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "method": "bilinear, nearest or bicubic",
        "layout": "the image layout, an ordering of N, C, H, W",
        "padding_mode": "zeros, border or reflection (for points outside the image)",
        "align_corners": "grid values -1 and 1 are the centers (True) or outer edges of the corner pixels",
    },
    description="Sample an image at the normalized points of a (N, 2, H_out, W_out) grid.",
)
register_op(
    "relax.image.grid_sample3d",
    2,
    _infer_grid_sample3d,
    legalize=_legalize_grid_sample3d,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "method": "bilinear (trilinear) or nearest",
        "padding_mode": "zeros, border or reflection (for points outside the volume)",
        "align_corners": "grid values -1 and 1 are the centers (True) or outer edges of the corner voxels",
    },
    description="Sample a (N, C, D, H, W) volume at the normalized (x, y, z) points of a "
    "(N, D_out, H_out, W_out, 3) grid.",
)


def _size_expr(size) -> Expr:
    if isinstance(size, Expr):
        return size
    if isinstance(size, int | PrimExpr):
        size = (size, size)
    size = tuple(size)
    if len(size) == 1:
        size = size * 2
    return ShapeExpr(size)


def resize2d(
    data,
    size,
    roi=None,
    layout: str = "NCHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "round",
    cubic_alpha: float = -0.5,
    cubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    scale=None,
    params=None,
    antialias: bool = False,
    window=None,
) -> Call:
    """`data` resized to `size = (height, width)` (one int or PrimExpr: a square; or a shape value).

    `roi` (a float or 4 floats, start_h, start_w, end_h, end_w) is read only by the
    "tf_crop_and_resize" mode. PyTorch's bicubic interpolation is `cubic_alpha=-0.75`.
    `params`, an optional third argument, is a 1-d float tensor of 6 values computed at run
    time, `(scale_h, scale_w, start_h, start_w, end_h, end_w)`, replacing `scale` and `roi`
    (a scale that is not positive means none: the sizes' ratio is the step). `antialias`
    (linear and cubic) widens the kernel when downsampling; with run-time `params` it also
    takes `window`, the taps per axis `(n_h, n_w)` computed at run time (2 ceil(support / s)).
    """
    if roi is None:
        roi = (0.0,) * 4
    elif isinstance(roi, int | float):
        roi = (float(roi),) * 4
    return Call(
        Op.get("relax.image.resize2d"),
        [data, _size_expr(size)] + ([params] if params is not None else [])
        + ([_size_expr(window)] if window is not None else []),
        {
            "roi": tuple(float(r) for r in roi),
            "layout": str(layout),
            "method": str(method),
            "coordinate_transformation_mode": str(coordinate_transformation_mode),
            "rounding_method": str(rounding_method),
            "cubic_alpha": float(cubic_alpha),
            "cubic_exclude": int(cubic_exclude),
            "extrapolation_value": float(extrapolation_value),
            "out_dtype": out_dtype or UNKNOWN_DTYPE,
            **({"scale": tuple(float(s) for s in scale)} if scale is not None else {}),
            **({"antialias": True} if antialias else {}),
        },
    )


def grid_sample(
    data,
    grid,
    method: str = "bilinear",
    layout: str = "NCHW",
    padding_mode: str = "zeros",
    align_corners: bool = False,
) -> Call:
    """`data` sampled at `grid`, shaped `(N, 2, H_out, W_out)` with (x, y) in [-1, 1] on axis 1.

    torch.nn.functional.grid_sample's `(N, H_out, W_out, 2)` grid becomes this one through
    `relax.op.permute_dims(grid, [0, 3, 1, 2])`.
    """
    return Call(
        Op.get("relax.image.grid_sample"),
        [data, grid],
        {
            "method": str(method),
            "layout": str(layout),
            "padding_mode": str(padding_mode),
            "align_corners": bool(align_corners),
        },
    )


def grid_sample3d(
    data, grid, method: str = "bilinear", padding_mode: str = "zeros", align_corners: bool = False
) -> Call:
    """A volume `data` (N, C, D, H, W) sampled at `grid` (N, D_out, H_out, W_out, 3), whose last
    axis holds (x, y, z) in [-1, 1] (torch's and ONNX's layout): (N, C, D_out, H_out, W_out)."""
    return Call(
        Op.get("relax.image.grid_sample3d"),
        [data, grid],
        {"method": str(method), "padding_mode": str(padding_mode), "align_corners": bool(align_corners)},
    )


__all__ = ["grid_sample", "grid_sample3d", "resize2d"]
