"""Convolutions (`relax.op.nn`): conv1d/2d/3d and conv1d/2d_transpose, with TVM's attributes.

Attributes are stored complete: `strides` and `dilation` one value per spatial axis,
`padding` as befores then afters (TVM's `(top, left, bottom, right)` in 2-d), and the data,
kernel and output layouts (any permutation of the default letters, e.g. NHWC / HWIO).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 3, 32, 32), "float32"))
>>> w = relax.Var("w", relax.TensorStructInfo((16, 3, 3, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.nn.conv2d(x, w)).struct_info
R.Tensor((n, 16, 30, 30), dtype="float32")
>>> bb.normalize(relax.op.nn.conv2d(x, w, groups=3))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'nn.conv2d' expects data's channels (3) to equal weight's input \
channels (3) times groups (3): data is R.Tensor((n, 3, 32, 32), dtype="float32"), weight is ...
"""

from __future__ import annotations

import operator

from .... import topi
from ....errors import TypeInferenceError
from ....tir.expr import IntImm, floormod
from ....topi.nn.conv import SPATIAL, conv_output_size, conv_transpose_output_size, from_layout, to_layout
from ...expr import Call
from ...struct_info import UNKNOWN_DTYPE, TensorStructInfo, canonical_dtype, prim_text
from ..infer import analyzer_of, attr_dtype, binary_dtype, op_label, provably_different, tensor_arg
from ..registry import Op, OpPatternKind, register_op
from ..te_legalize import call_topi

# --- attribute normalization, shared with pooling.py ------------------------------------------


def _ints(value) -> tuple | None:
    """`value` (an integer or a sequence of them, numpy's included) as a tuple of ints, or None."""
    try:
        return (operator.index(value),)
    except TypeError:
        pass
    try:
        return tuple(operator.index(v) for v in value)
    except TypeError:
        return None


def spatial_ints(label: str, attr: str, value, nd: int, minimum: int) -> tuple[int, ...]:
    """An int or 1 or `nd` ints as `nd` ints, each at least `minimum`."""
    values = _ints(value)
    if values is not None and len(values) == 1:
        values = values * nd
    if values is None or len(values) != nd or any(v < minimum for v in values):
        raise TypeInferenceError(
            f"{label} expects {attr} to be 1 or {nd} integer(s) >= {minimum}, got {_show(value)}"
        )
    return values


def spatial_padding(label: str, value, nd: int) -> tuple[int, ...]:
    """TVM's padding forms (an int, 1, `nd` or `2 * nd` ints) as `nd` befores then `nd` afters."""
    values = _ints(value)
    if values is not None and len(values) in (1, nd):
        values = values * (2 * nd // len(values))
    if values is None or len(values) != 2 * nd or any(v < 0 for v in values):
        raise TypeInferenceError(
            f"{label} expects padding to be 1, {nd} or {2 * nd} non-negative integer(s) "
            f"(befores then afters), got {_show(value)}"
        )
    return values


def positive_int(label: str, attr: str, value) -> int:
    try:
        result = operator.index(value)
    except TypeError:
        result = 0
    if result < 1:
        raise TypeInferenceError(f"{label} expects {attr} to be a positive integer, got {value!r}")
    return result


def check_layout(label: str, attr: str, layout, canonical: str) -> str:
    """`layout` when it is a permutation of the letters of `canonical`, else an error."""
    if not isinstance(layout, str) or sorted(layout) != sorted(canonical):
        raise TypeInferenceError(
            f"{label} expects {attr} to be a permutation of {canonical!r} (e.g. {canonical!r} or "
            f"{canonical[0] + canonical[2:] + canonical[1]!r}), got {layout!r}"
        )
    return layout


def check_ndim(call, sinfo: TensorStructInfo, name: str, layout: str) -> None:
    if sinfo.ndim not in (-1, len(layout)):
        raise TypeInferenceError(
            f"{op_label(call)} expects {name} to be a {len(layout)}-d tensor (layout {layout}), got {sinfo}"
        )


def check_output_size(call, dims, what: str) -> None:
    """Spatial output sizes known to be below 1 mean the window does not fit the data."""
    for k, d in enumerate(dims):
        if isinstance(d, IntImm) and d.value < 1:
            raise TypeInferenceError(
                f"{op_label(call)} gives output size {d.value} along spatial axis {k}: {what}"
            )


def _show(value) -> str:
    return repr(list(value)) if isinstance(value, tuple | list) else repr(value)


def _label(op_name: str) -> str:
    return f"'{op_name.removeprefix('relax.')}'"


# --- struct info ------------------------------------------------------------------------------


def _check_attrs(call, nd: int, transpose: bool) -> tuple:
    label, attrs = op_label(call), call.attrs
    strides = spatial_ints(label, "strides", attrs["strides"], nd, 1)
    dilation = spatial_ints(label, "dilation", attrs["dilation"], nd, 1)
    padding = spatial_padding(label, attrs["padding"], nd)
    out_pad = spatial_ints(label, "output_padding", attrs["output_padding"], nd, 0) if transpose else None
    groups = positive_int(label, "groups", attrs["groups"])
    if transpose and any(p >= s for p, s in zip(out_pad, strides)):
        raise TypeInferenceError(
            f"{label} expects output_padding to be smaller than strides, got output_padding "
            f"{list(out_pad)} with strides {list(strides)}"
        )
    return strides, padding, dilation, out_pad, groups


def _infer_conv(nd: int, transpose: bool):
    sp = SPATIAL[nd]
    dcan, kcan = "NC" + sp, ("IO" if transpose else "OI") + sp

    def infer(call, bb):
        label, attrs = op_label(call), call.attrs
        data, weight = tensor_arg(call, 0, "data"), tensor_arg(call, 1, "weight")
        data_layout = check_layout(label, "data_layout", attrs["data_layout"], dcan)
        kernel_layout = check_layout(label, "kernel_layout", attrs["kernel_layout"], kcan)
        out_layout = check_layout(label, "out_layout", attrs["out_layout"], dcan)
        strides, padding, dilation, out_pad, groups = _check_attrs(call, nd, transpose)
        out_dtype = attr_dtype(call, "out_dtype")
        if out_dtype == UNKNOWN_DTYPE:
            out_dtype = binary_dtype(call, data, weight, names=("data", "weight"))
        check_ndim(call, data, "data", data_layout)
        check_ndim(call, weight, "weight", kernel_layout)
        if data.shape_values is None or weight.shape_values is None:
            return TensorStructInfo(dtype=out_dtype, ndim=nd + 2)
        analyzer = analyzer_of(bb)
        batch, channels, *in_size = from_layout(data.shape_values, data_layout, dcan)
        k0, k1, *ksize = from_layout(weight.shape_values, kernel_layout, kcan)
        pads = [padding[k] + padding[nd + k] for k in range(nd)]
        if transpose:
            _check_transpose_channels(call, analyzer, data, weight, channels, k0, groups)
            out_channels = analyzer.simplify(k1 * groups)
            out_size = [
                conv_transpose_output_size(in_size[k], ksize[k], strides[k], pads[k], dilation[k], out_pad[k])
                for k in range(nd)
            ]
        else:
            _check_conv_channels(call, analyzer, data, weight, channels, k0, k1, groups)
            out_channels = k0
            out_size = [
                conv_output_size(in_size[k], ksize[k], strides[k], pads[k], dilation[k]) for k in range(nd)
            ]
        out_size = [analyzer.simplify(d) for d in out_size]
        check_output_size(call, out_size, f"data is {data}, weight is {weight}")
        dims = to_layout([batch, out_channels, *out_size], out_layout, dcan)
        return TensorStructInfo(tuple(dims), out_dtype)

    return infer


def _check_conv_channels(call, analyzer, data, weight, channels, out_ch, in_per_group, groups) -> None:
    label = op_label(call)
    if provably_different(channels, analyzer.simplify(in_per_group * groups), analyzer):
        raise TypeInferenceError(
            f"{label} expects data's channels ({prim_text(channels)}) to equal weight's input channels "
            f"({prim_text(in_per_group)}) times groups ({groups}): data is {data}, weight is {weight}"
        )
    if analyzer.can_prove(floormod(out_ch, groups) != 0):
        raise TypeInferenceError(
            f"{label} expects weight's output channels ({prim_text(out_ch)}) to be divisible by groups "
            f"({groups}): weight is {weight}"
        )


def _check_transpose_channels(call, analyzer, data, weight, channels, in_ch, groups) -> None:
    label = op_label(call)
    if provably_different(channels, in_ch, analyzer):
        raise TypeInferenceError(
            f"{label} expects data's channels ({prim_text(channels)}) to equal weight's input channels "
            f"({prim_text(in_ch)}): data is {data}, weight is {weight}"
        )
    if analyzer.can_prove(floormod(in_ch, groups) != 0):
        raise TypeInferenceError(
            f"{label} expects weight's input channels ({prim_text(in_ch)}) to be divisible by groups "
            f"({groups}): weight is {weight}"
        )


# --- registration -----------------------------------------------------------------------------


def _topi_kwargs(transpose: bool):
    keys = ["strides", "padding", *(["output_padding"] if transpose else []), "dilation", "groups",
            "data_layout", "kernel_layout", "out_layout"]

    def kwargs_of(call) -> dict:
        kwargs = {k: call.attrs[k] for k in keys}
        dtype = call.attrs.get("out_dtype")
        kwargs["out_dtype"] = None if dtype in (None, "", UNKNOWN_DTYPE) else dtype
        return kwargs

    return kwargs_of


_ATTRS = {
    "strides": "the stride of each spatial axis",
    "padding": "padding before then after each spatial axis",
    "dilation": "the spacing of kernel taps along each spatial axis",
    "groups": "channel groups (data channels and output channels split evenly)",
    "data_layout": "axis letters of data",
    "kernel_layout": "axis letters of weight",
    "out_layout": "axis letters of the result",
    "out_dtype": "accumulation and result dtype; void (the default) means the operands' dtype",
}
_TRANSPOSE_ATTRS = dict(_ATTRS, output_padding="extra size added after each spatial axis of the result")

for _nd in (1, 2, 3):
    register_op(
        f"relax.nn.conv{_nd}d",
        2,
        _infer_conv(_nd, transpose=False),
        legalize=call_topi(getattr(topi.nn, f"conv{_nd}d"), f"conv{_nd}d", _topi_kwargs(False)),
        pattern=OpPatternKind.kOutEWiseFusable,
        attrs=_ATTRS,
        description=f"{_nd}-d convolution (cross-correlation) with strides, padding, dilation and groups.",
    )
for _nd in (1, 2):
    register_op(
        f"relax.nn.conv{_nd}d_transpose",
        2,
        _infer_conv(_nd, transpose=True),
        legalize=call_topi(getattr(topi.nn, f"conv{_nd}d_transpose"), f"conv{_nd}d_transpose",
                           _topi_kwargs(True)),
        pattern=OpPatternKind.kOutEWiseFusable,
        attrs=_TRANSPOSE_ATTRS,
        description=f"{_nd}-d transposed convolution (the gradient of conv{_nd}d with respect to data).",
    )


# --- builders ---------------------------------------------------------------------------------


def _conv_call(op_name: str, nd: int, data, weight, strides, padding, dilation, groups, data_layout,
               kernel_layout, out_layout, out_dtype, output_padding=None) -> Call:
    label = _label(op_name)
    attrs = {
        "strides": spatial_ints(label, "strides", strides, nd, 1),
        "padding": spatial_padding(label, padding, nd),
    }
    if output_padding is not None:
        attrs["output_padding"] = spatial_ints(label, "output_padding", output_padding, nd, 0)
    attrs.update(
        dilation=spatial_ints(label, "dilation", dilation, nd, 1),
        groups=positive_int(label, "groups", groups),
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout or data_layout,
        out_dtype=canonical_dtype(out_dtype),
    )
    return Call(Op.get(op_name), [data, weight], attrs)


def conv1d(data, weight, strides=1, padding=0, dilation=1, groups: int = 1, data_layout: str = "NCW",
           kernel_layout: str = "OIW", out_layout: str | None = None, out_dtype: str | None = None) -> Call:
    """1-d convolution of `data` (N, C, W) with `weight` (O, C / groups, KW)."""
    return _conv_call("relax.nn.conv1d", 1, data, weight, strides, padding, dilation, groups, data_layout,
                      kernel_layout, out_layout, out_dtype)


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups: int = 1,
           data_layout: str = "NCHW", kernel_layout: str = "OIHW", out_layout: str | None = None,
           out_dtype: str | None = None) -> Call:
    """2-d convolution of `data` (N, C, H, W) with `weight` (O, C / groups, KH, KW)."""
    return _conv_call("relax.nn.conv2d", 2, data, weight, strides, padding, dilation, groups, data_layout,
                      kernel_layout, out_layout, out_dtype)


def conv3d(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups: int = 1,
           data_layout: str = "NCDHW", kernel_layout: str = "OIDHW", out_layout: str | None = None,
           out_dtype: str | None = None) -> Call:
    """3-d convolution of `data` (N, C, D, H, W) with `weight` (O, C / groups, KD, KH, KW)."""
    return _conv_call("relax.nn.conv3d", 3, data, weight, strides, padding, dilation, groups, data_layout,
                      kernel_layout, out_layout, out_dtype)


def conv1d_transpose(data, weight, strides=1, padding=0, output_padding=0, dilation=1, groups: int = 1,
                     data_layout: str = "NCW", kernel_layout: str = "IOW", out_layout: str | None = None,
                     out_dtype: str | None = None) -> Call:
    """1-d transposed convolution of `data` (N, C, W) with `weight` (C, O / groups, KW)."""
    return _conv_call("relax.nn.conv1d_transpose", 1, data, weight, strides, padding, dilation, groups,
                      data_layout, kernel_layout, out_layout, out_dtype, output_padding)


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), output_padding=(0, 0), dilation=(1, 1),
                     groups: int = 1, data_layout: str = "NCHW", kernel_layout: str = "IOHW",
                     out_layout: str | None = None, out_dtype: str | None = None) -> Call:
    """2-d transposed convolution of `data` (N, C, H, W) with `weight` (C, O / groups, KH, KW)."""
    return _conv_call("relax.nn.conv2d_transpose", 2, data, weight, strides, padding, dilation, groups,
                      data_layout, kernel_layout, out_layout, out_dtype, output_padding)


__all__ = ["conv1d", "conv1d_transpose", "conv2d", "conv2d_transpose", "conv3d"]
