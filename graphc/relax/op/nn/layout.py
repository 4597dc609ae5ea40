"""Spatial rearrangements (`relax.op.nn`): `pad` (constant, reflect, edge, circular) and `pixel_shuffle`.

`pad_width` is TVM's flat `(before_0, after_0, before_1, after_1, ...)`, one pair per axis;
pairs `((before_0, after_0), ...)` are accepted and flattened. PyTorch's F.pad lists pairs
from the last axis backwards and may list fewer than all axes: a frontend reverses and
completes them.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 8, 3, 5), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.nn.pad(x, [0, 0, 0, 0, 1, 1, 2, 2], pad_mode="reflect")).struct_info
R.Tensor((n, 8, 5, 9), dtype="float32")
>>> bb.normalize(relax.op.nn.pixel_shuffle(x, 2)).struct_info
R.Tensor((n, 2, 6, 10), dtype="float32")
>>> bb.normalize(relax.op.nn.pixel_shuffle(x, 3))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'nn.pixel_shuffle' expects data's channels (axis -3) to be a multiple
of upscale_factor ** 2 = 9, got R.Tensor((n, 8, 3, 5), dtype="float32")
"""

from __future__ import annotations

from .... import topi
from ....errors import TypeInferenceError
from ....tir import expr as _e
from ....topi.nn.pad import PAD_MODES
from ...expr import Call, ShapeExpr
from ...struct_info import TensorStructInfo
from ..infer import analyzer_of, is_const, op_label, tensor_arg
from ..registry import Op, OpPatternKind, register_op

__all__ = ["dynamic_pad", "pad", "pixel_shuffle"]


def _infer_pad(call, bb):
    data = tensor_arg(call, 0, "data")
    width, mode = list(call.attrs["pad_width"]), call.attrs["pad_mode"]
    if mode not in PAD_MODES:
        raise TypeInferenceError(f"{op_label(call)} expects pad_mode to be one of {list(PAD_MODES)}, "
                                 f"got {mode!r}")
    if any(w < 0 for w in width):
        raise TypeInferenceError(f"{op_label(call)} expects non-negative pad_width, got {width}")
    if data.ndim == -1:
        return data
    if len(width) != 2 * data.ndim:
        raise TypeInferenceError(
            f"{op_label(call)} expects pad_width to have 2 * ndim = {2 * data.ndim} entries (before, after "
            f"for each axis) for data {data}, got {len(width)}: {width}")
    dims = data.shape_values
    if dims is None:
        return data
    if mode in ("reflect", "circular"):
        limit = "smaller than" if mode == "reflect" else "at most"
        for axis, d in enumerate(dims):
            before, after = width[2 * axis], width[2 * axis + 1]
            if not is_const(d) or not (before or after):
                continue
            if max(before, after) >= d.value + (mode == "circular"):
                raise TypeInferenceError(
                    f"{op_label(call)} with pad_mode {mode!r} expects each pad width {limit} the axis "
                    f"length, got {before}, {after} on axis {axis} of data {data}")
    analyzer = analyzer_of(bb)
    out = tuple(
        analyzer.simplify(d + (width[2 * k] + width[2 * k + 1])) if width[2 * k] or width[2 * k + 1] else d
        for k, d in enumerate(dims)
    )
    return TensorStructInfo(out, data.dtype)


def _legalize_pad(bb, call):
    width = call.attrs["pad_width"]
    return bb.call_te(topi.nn.pad, call.args[0], list(width[0::2]), list(width[1::2]),
                      pad_value=call.attrs["pad_value"], pad_mode=call.attrs["pad_mode"],
                      primfunc_name_hint="pad")


def _infer_pixel_shuffle(call, bb):
    data = tensor_arg(call, 0, "data")
    r = call.attrs["upscale_factor"]
    if isinstance(r, bool) or not isinstance(r, int) or r < 1:
        raise TypeInferenceError(f"{op_label(call)} expects upscale_factor to be a positive int, got {r!r}")
    if data.ndim != -1 and data.ndim < 3:
        raise TypeInferenceError(
            f"{op_label(call)} expects data to have at least 3 dimensions (..., channels, height, width), "
            f"got {data}")
    if data.shape_values is None:
        return data
    *lead, c, h, w = data.shape_values
    analyzer = analyzer_of(bb)
    if is_const(c) and c.value % (r * r) != 0 or (
        not is_const(c) and analyzer.can_prove(_e.floormod(c, _e.const(r * r, c.dtype)) != 0)
    ):
        raise TypeInferenceError(
            f"{op_label(call)} expects data's channels (axis -3) to be a multiple of upscale_factor ** 2 = "
            f"{r * r}, got {data}")
    out = (*lead, analyzer.simplify(_e.floordiv(c, _e.const(r * r, c.dtype))),
           analyzer.simplify(h * r), analyzer.simplify(w * r))
    return TensorStructInfo(out, data.dtype)


register_op(
    "relax.nn.pad",
    1,
    _infer_pad,
    legalize=_legalize_pad,
    pattern=OpPatternKind.kInjective,
    attrs={
        "pad_width": "flat (before_0, after_0, before_1, after_1, ...) widths, one pair per axis",
        "pad_mode": "'constant', 'reflect', 'edge' (or 'replicate') or 'circular'",
        "pad_value": "the fill value of 'constant' padding",
    },
    description="Pad each axis before and after, with a constant or from the data.",
)
register_op(
    "relax.nn.pixel_shuffle",
    1,
    _infer_pixel_shuffle,
    legalize=lambda bb, call: bb.call_te(topi.nn.pixel_shuffle, call.args[0], call.attrs["upscale_factor"],
                                         primfunc_name_hint="pixel_shuffle"),
    pattern=OpPatternKind.kInjective,
    attrs={"upscale_factor": "r: (..., C * r * r, H, W) becomes (..., C, H * r, W * r)"},
    description="Move channel blocks into space (sub-pixel convolution's rearrangement).",
)


def _flat_widths(pad_width) -> tuple:
    flat = []
    for w in pad_width:
        if isinstance(w, list | tuple):
            flat.extend(int(x) for x in w)
        else:
            flat.append(int(w))
    return tuple(flat)


def pad(data, pad_width, pad_mode: str = "constant", pad_value: float = 0.0) -> Call:
    """`data` padded by `pad_width` (flat before/after per axis) with `pad_mode`."""
    return Call(Op.get("relax.nn.pad"), [data],
                {"pad_width": _flat_widths(pad_width), "pad_mode": pad_mode, "pad_value": float(pad_value)})


def _infer_dynamic_pad(call, bb):
    data = tensor_arg(call, 0, "data")
    mode = call.attrs["pad_mode"]
    if mode not in PAD_MODES:
        raise TypeInferenceError(f"{op_label(call)} expects pad_mode to be one of {list(PAD_MODES)}, "
                                 f"got {mode!r}")
    widths = []
    for index, name in ((1, "pad_before"), (2, "pad_after")):
        arg = call.args[index]
        if not isinstance(arg, ShapeExpr) or (data.ndim >= 0 and len(arg.values) != data.ndim):
            raise TypeInferenceError(f"{op_label(call)} expects {name} to be a shape of one value per "
                                     f"axis of {data}, got {arg.struct_info}")
        widths.append(arg.values)
    value = tensor_arg(call, 3, "pad_value")
    if value.ndim not in (0, -1):
        raise TypeInferenceError(f"{op_label(call)} expects pad_value to be a 0-d tensor, got {value}")
    if data.shape_values is None:
        return data
    analyzer = analyzer_of(bb)
    dims = tuple(analyzer.simplify(d + b + a) for d, b, a in zip(data.shape_values, *widths))
    return TensorStructInfo(dims, data.dtype)


def _legalize_dynamic_pad(bb, call):
    return bb.call_te(topi.nn.dynamic_pad, *call.args, pad_mode=call.attrs["pad_mode"],
                      primfunc_name_hint="dynamic_pad")


register_op(
    "relax.nn.dynamic_pad",
    4,
    _infer_dynamic_pad,
    legalize=_legalize_dynamic_pad,
    pattern=OpPatternKind.kInjective,
    attrs={"pad_mode": "constant, reflect, edge (replicate) or circular"},
    description="Pad by widths that are symbolic sizes (R.Shape; negative widths crop) with a 0-d tensor "
                "value.",
)


def dynamic_pad(data, pad_before, pad_after, pad_value, pad_mode: str = "constant") -> Call:
    """`data` padded by `pad_before[k]` / `pad_after[k]` (ints or symbolic sizes, negative
    crops) on axis k, filling the 0-d tensor `pad_value` ("constant") or by `pad_mode`."""
    args = [data, ShapeExpr(list(pad_before)), ShapeExpr(list(pad_after)), pad_value]
    return Call(Op.get("relax.nn.dynamic_pad"), args, {"pad_mode": str(pad_mode)})


def pixel_shuffle(data, upscale_factor: int) -> Call:
    """`(..., C * r * r, H, W)` rearranged to `(..., C, H * r, W * r)` with `r = upscale_factor`."""
    return Call(Op.get("relax.nn.pixel_shuffle"), [data], {"upscale_factor": int(upscale_factor)})
