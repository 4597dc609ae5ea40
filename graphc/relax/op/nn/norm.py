"""Normalizations (`relax.op.nn`): layer_norm, rms_norm and batch_norm (legalized for inference).

The scale/shift parameters have the shape of the normalized axes (layer_norm, rms_norm) or
of the channel axis (batch_norm); all tensors share one float dtype. batch_norm returns
TVM's `(output, new_mean, new_var)` tuple.

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
"""

from __future__ import annotations

from .... import topi
from ....errors import TypeInferenceError
from ...expr import Call
from ...struct_info import TensorStructInfo, TupleStructInfo, prim_text
from ..infer import analyzer_of, normalize_axis, op_label, provably_different, tensor_arg
from ..registry import Op, OpPatternKind, register_op
from ..te_legalize import attrs_as_kwargs, call_topi


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


_EPS = {"epsilon": "added to the variance"}
register_op(
    "relax.nn.layer_norm",
    3,
    _infer_layer_norm,
    legalize=call_topi(
        topi.nn.layer_norm, "layer_norm", attrs_as_kwargs("axes", "epsilon", rename={"axes": "axis"})
    ),
    pattern=OpPatternKind.kOpaque,
    attrs={"axes": "the normalized axes", **_EPS},
    description="Layer normalization over axes, then gamma * x + beta.",
)
register_op(
    "relax.nn.rms_norm",
    2,
    _infer_rms_norm,
    legalize=call_topi(
        topi.nn.rms_norm, "rms_norm", attrs_as_kwargs("axes", "epsilon", rename={"axes": "axis"})
    ),
    pattern=OpPatternKind.kOpaque,
    attrs={"axes": "the normalized axes", **_EPS},
    description="Root-mean-square normalization over axes, times weight.",
)
register_op(
    "relax.nn.batch_norm",
    5,
    _infer_batch_norm,
    legalize=call_topi(topi.nn.batch_norm, "batch_norm", attrs_as_kwargs("axis", "epsilon")),
    pattern=OpPatternKind.kOutEWiseFusable,
    attrs={"axis": "the channel axis", **_EPS},
    description="Batch normalization with the moving statistics (inference).",
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


__all__ = ["batch_norm", "layer_norm", "rms_norm"]
