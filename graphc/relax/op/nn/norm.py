"""Normalizations (`relax.op.nn`): layer_norm, rms_norm, batch_norm (legalized for inference),
group_norm and instance_norm.

The scale/shift parameters have the shape of the normalized axes (layer_norm, rms_norm) or
of the channel axis (batch_norm, group_norm, instance_norm); all tensors share one float
dtype. batch_norm returns TVM's `(output, new_mean, new_var)` tuple. group_norm and
instance_norm take TVM's `center` / `scale` flags (False: beta / gamma is not applied).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 8), "float32"))
>>> g = relax.Var("g", relax.TensorStructInfo((8,), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.nn.layer_norm(x, g, g, axes=[-1])).struct_info
R.Tensor((2, 8), dtype="float32")
>>> bb.normalize(relax.op.nn.layer_norm(x, g, g, axes=[0]))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'nn.layer_norm' expects gamma to have shape (2,) (data's axes [0]), got ...
>>> x4 = relax.Var("x4", relax.TensorStructInfo((2, 8, 4, 4), "float32"))
>>> bb.normalize(relax.op.nn.group_norm(x4, g, g, num_groups=4, channel_axis=1, axes=[2, 3])).struct_info
R.Tensor((2, 8, 4, 4), dtype="float32")
>>> bb.normalize(relax.op.nn.group_norm(x4, g, g, num_groups=3, channel_axis=1, axes=[2, 3]))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'nn.group_norm' expects data's channels (axis 1) to be a multiple
of num_groups 3, got ...
"""

from __future__ import annotations

from .... import topi
from ....errors import TypeInferenceError
from ....tir import expr as _e
from ...expr import Call
from ...struct_info import TensorStructInfo, TupleStructInfo, prim_text
from ..infer import analyzer_of, is_const, normalize_axis, op_label, provably_different, tensor_arg
from ..registry import Op, OpPatternKind, register_op
from ..te_legalize import register_topi_op


def _check_param(call, bb, x: TensorStructInfo, index: int, name: str, axes: list[int]) -> TensorStructInfo:
    p = tensor_arg(call, index, name)
    if not (x.is_unknown_dtype or p.is_unknown_dtype) and p.dtype != x.dtype:
        raise TypeInferenceError(f"{op_label(call)} expects {name} to have data's dtype {x.dtype}, got {p}")
    if x.shape_values is None or p.ndim == -1:
        return p
    want = [x.shape_values[a] for a in axes]
    dims = p.shape_values
    analyzer = analyzer_of(bb)
    if p.ndim != len(want) or (
        dims is not None and any(provably_different(a, b, analyzer) for a, b in zip(dims, want))
    ):
        shape = "(" + ", ".join(prim_text(d) for d in want) + ("," if len(want) == 1 else "") + ")"
        raise TypeInferenceError(
            f"{op_label(call)} expects {name} to have shape {shape} (data's axes {axes}), got {p}"
        )
    return p


def _float_data(call) -> TensorStructInfo:
    x = tensor_arg(call, 0, "data")
    if not x.is_unknown_dtype and not x.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op_label(call)} requires data to have a float dtype, got {x}")
    return x


def _axes(call, x: TensorStructInfo) -> list[int]:
    return [normalize_axis(call, int(a), x.ndim, "axes") for a in call.attrs["axes"]]


def _infer_layer_norm(call, bb):
    x = _float_data(call)
    if x.ndim != -1:
        axes = _axes(call, x)
        _check_param(call, bb, x, 1, "gamma", axes)
        _check_param(call, bb, x, 2, "beta", axes)
    return x


def _infer_rms_norm(call, bb):
    x = _float_data(call)
    if x.ndim != -1:
        _check_param(call, bb, x, 1, "weight", _axes(call, x))
    return x


def _infer_batch_norm(call, bb):
    x = _float_data(call)
    params = []
    for index, name in enumerate(("gamma", "beta", "moving_mean", "moving_var"), start=1):
        if x.ndim == -1:
            params.append(tensor_arg(call, index, name))
        else:
            axis = normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
            params.append(_check_param(call, bb, x, index, name, [axis]))
    return TupleStructInfo([x, params[2], params[3]])


def _channel_axes(call, x: TensorStructInfo) -> tuple[int, list[int]]:
    """The channel axis and the normalized axes (which must not include it), non-negative."""
    channel = normalize_axis(call, call.attrs["channel_axis"], x.ndim, "channel_axis")
    axes = _axes(call, x)
    if channel in axes:
        raise TypeInferenceError(
            f"{op_label(call)} expects axes {list(call.attrs['axes'])} not to include channel_axis "
            f"{call.attrs['channel_axis']} (the statistics are per channel or group), for data {x}")
    if len(set(axes)) != len(axes):
        raise TypeInferenceError(f"{op_label(call)} expects distinct axes, got {list(call.attrs['axes'])}")
    return channel, axes


def _infer_channel_norm(call, bb):
    x = _float_data(call)
    if x.ndim == -1:
        for index, name in ((1, "gamma"), (2, "beta")):
            tensor_arg(call, index, name)
        return x
    channel, _ = _channel_axes(call, x)
    groups = call.attrs.get("num_groups")
    if groups is not None:
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
            raise TypeInferenceError(
                f"{op_label(call)} expects num_groups to be a positive int, got {groups!r}")
        c = x.shape_values[channel] if x.shape_values is not None else None
        if c is not None and (
            (is_const(c) and c.value % groups != 0)
            or (not is_const(c) and analyzer_of(bb).can_prove(_e.floormod(c, _e.const(groups, c.dtype)) != 0))
        ):
            raise TypeInferenceError(
                f"{op_label(call)} expects data's channels (axis {channel}) to be a multiple of num_groups "
                f"{groups}, got {x}")
    _check_param(call, bb, x, 1, "gamma", [channel])
    _check_param(call, bb, x, 2, "beta", [channel])
    return x


_EPS = {"epsilon": "added to the variance"}
for _name, _inputs, _infer, _what in (
    ("layer_norm", 3, _infer_layer_norm, "Layer normalization over axes, then gamma * x + beta."),
    ("rms_norm", 2, _infer_rms_norm, "Root-mean-square normalization over axes, times weight."),
):
    register_topi_op(f"relax.nn.{_name}", _inputs, _infer, getattr(topi.nn, _name),
                     pattern=OpPatternKind.kOpaque, attrs={"axes": "the normalized axes", **_EPS},
                     rename={"axes": "axis"}, description=_what)
register_topi_op("relax.nn.batch_norm", 5, _infer_batch_norm, topi.nn.batch_norm,
                 pattern=OpPatternKind.kOutEWiseFusable, attrs={"axis": "the channel axis", **_EPS},
                 description="Batch normalization with the moving statistics (inference).")


_AFFINE = {"center": "add beta (False: skip it)", "scale": "multiply by gamma (False: skip it)"}


def _legalize_channel_norm(fn, name: str):
    def legalize(bb, call):
        attrs = dict(call.attrs)
        return bb.call_te(fn, *call.args, primfunc_name_hint=name, **attrs)

    return legalize


register_op(
    "relax.nn.group_norm",
    3,
    _infer_channel_norm,
    legalize=_legalize_channel_norm(topi.nn.group_norm, "group_norm"),
    pattern=OpPatternKind.kOutEWiseFusable,
    attrs={
        "num_groups": "how many groups the channels split into",
        "channel_axis": "the channel axis",
        "axes": "the normalized axes besides the group's channels",
        **_EPS,
        **_AFFINE,
    },
    description="Group normalization: statistics over axes and each group of channels; per-channel affine.",
)
register_op(
    "relax.nn.instance_norm",
    3,
    _infer_channel_norm,
    legalize=_legalize_channel_norm(topi.nn.instance_norm, "instance_norm"),
    pattern=OpPatternKind.kOutEWiseFusable,
    attrs={"channel_axis": "the channel axis", "axes": "the normalized axes", **_EPS, **_AFFINE},
    description="Instance normalization: statistics over axes per sample and channel; per-channel affine.",
)


def _axes_attr(axes) -> tuple:
    return (int(axes),) if isinstance(axes, int) else tuple(int(a) for a in axes)


def layer_norm(data, gamma, beta, axes=-1, epsilon: float = 1e-5) -> Call:
    """`(data - mean) / sqrt(var + epsilon) * gamma + beta`, statistics over `axes`."""
    return Call(
        Op.get("relax.nn.layer_norm"),
        [data, gamma, beta],
        {"axes": _axes_attr(axes), "epsilon": float(epsilon)},
    )


def rms_norm(data, weight, axes=-1, epsilon: float = 1e-5) -> Call:
    """`data / sqrt(mean(data^2) + epsilon) * weight`, the mean over `axes`."""
    return Call(
        Op.get("relax.nn.rms_norm"), [data, weight], {"axes": _axes_attr(axes), "epsilon": float(epsilon)}
    )


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis: int = 1, epsilon: float = 1e-5) -> Call:
    """`(output, new_mean, new_var)`; legalized for inference with the moving statistics."""
    return Call(
        Op.get("relax.nn.batch_norm"),
        [data, gamma, beta, moving_mean, moving_var],
        {"axis": int(axis), "epsilon": float(epsilon)},
    )


def group_norm(data, gamma, beta, num_groups: int, channel_axis: int, axes, epsilon: float = 1e-5,
               center: bool = True, scale: bool = True) -> Call:
    """Normalize over `axes` and the channels of each of `num_groups` groups, then
    `* gamma + beta` per channel (as enabled by `scale` and `center`)."""
    return Call(
        Op.get("relax.nn.group_norm"),
        [data, gamma, beta],
        {"num_groups": int(num_groups), "channel_axis": int(channel_axis), "axes": _axes_attr(axes),
         "epsilon": float(epsilon), "center": bool(center), "scale": bool(scale)},
    )


def instance_norm(data, gamma, beta, channel_axis: int, axes, epsilon: float = 1e-5, center: bool = True,
                  scale: bool = True) -> Call:
    """Normalize each sample's channels separately over `axes`, then `* gamma + beta` per channel."""
    return Call(
        Op.get("relax.nn.instance_norm"),
        [data, gamma, beta],
        {"channel_axis": int(channel_axis), "axes": _axes_attr(axes), "epsilon": float(epsilon),
         "center": bool(center), "scale": bool(scale)},
    )


__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm", "rms_norm"]
