"""Pooling (`relax.op.nn`): max/avg pool 1d/2d/3d and adaptive average pools, TVM's attributes.

`padding` is stored as befores then afters; `ceil_mode` rounds the output size up, keeping
only windows that start inside the data or its leading padding (PyTorch's rule). An adaptive
pool's `output_size` may be None, or hold None entries, to keep the input's size.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 16, 7, 7), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.nn.max_pool2d(x, 3, strides=2, padding=1, ceil_mode=True)).struct_info
R.Tensor((n, 16, 4, 4), dtype="float32")
>>> bb.normalize(relax.op.nn.adaptive_avg_pool2d(x, (1, None))).struct_info
R.Tensor((n, 16, 1, 7), dtype="float32")
>>> bb.normalize(relax.op.nn.avg_pool1d(x, 3))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'nn.avg_pool1d' expects data to be a 3-d tensor (layout NCW), got ...
"""

from __future__ import annotations

import operator

from .... import topi
from ....errors import TypeInferenceError
from ....tir.expr import IntImm
from ....topi.nn.conv import SPATIAL, from_layout, to_layout
from ....topi.nn.pooling import pool_output_size
from ...expr import Call
from ...struct_info import TensorStructInfo
from ..infer import analyzer_of, op_label, tensor_arg
from ..registry import Op, OpPatternKind, register_op
from ..te_legalize import call_topi
from .convolution import check_layout, check_ndim, check_output_size, spatial_ints, spatial_padding


def _data_and_layouts(call, can: str):
    """A pooling call's data and its (checked) input and output layouts."""
    label, attrs = op_label(call), call.attrs
    data = tensor_arg(call, 0, "data")
    layout = check_layout(label, "layout", attrs["layout"], can)
    out_layout = check_layout(label, "out_layout", attrs["out_layout"], can)
    return data, layout, out_layout


def _infer_pool(nd: int):
    can = "NC" + SPATIAL[nd]

    def infer(call, bb):
        label, attrs = op_label(call), call.attrs
        data, layout, out_layout = _data_and_layouts(call, can)
        ksize = spatial_ints(label, "pool_size", attrs["pool_size"], nd, 1)
        strides = spatial_ints(label, "strides", attrs["strides"], nd, 1)
        dilation = spatial_ints(label, "dilation", attrs["dilation"], nd, 1)
        padding = spatial_padding(label, attrs["padding"], nd)
        check_ndim(call, data, "data", layout)
        if data.shape_values is None:
            return TensorStructInfo(dtype=data.dtype, ndim=nd + 2)
        batch, channels, *in_size = from_layout(data.shape_values, layout, can)
        analyzer = analyzer_of(bb)
        out_size = [
            analyzer.simplify(pool_output_size(in_size[k], ksize[k], strides[k], padding[k], padding[nd + k],
                                               dilation[k], bool(attrs["ceil_mode"])))
            for k in range(nd)
        ]
        check_output_size(call, out_size, f"pool_size {list(ksize)} does not fit data {data}")
        return TensorStructInfo(tuple(to_layout([batch, channels, *out_size], out_layout, can)), data.dtype)

    return infer


def _output_sizes(label: str, output_size, nd: int):
    """None, or `nd` entries each None or a positive int (an int or one entry: every axis)."""
    if output_size is None:
        return None
    entries = output_size if isinstance(output_size, tuple | list) else (output_size,)
    try:
        sizes = tuple(None if e is None else operator.index(e) for e in entries)
    except TypeError:
        sizes = ()
    if len(sizes) == 1:
        sizes = sizes * nd
    if len(sizes) != nd or any(e is not None and e < 1 for e in sizes):
        shown = list(output_size) if isinstance(output_size, tuple | list) else output_size
        raise TypeInferenceError(
            f"{label} expects output_size to be None or 1 or {nd} entries, each a positive integer or "
            f"None, got {shown!r}"
        )
    return sizes


def _infer_adaptive(nd: int):
    can = "NC" + SPATIAL[nd]

    def infer(call, bb):
        label, attrs = op_label(call), call.attrs
        data, layout, out_layout = _data_and_layouts(call, can)
        sizes = _output_sizes(label, attrs["output_size"], nd) or (None,) * nd
        check_ndim(call, data, "data", layout)
        if data.shape_values is None:
            return TensorStructInfo(dtype=data.dtype, ndim=nd + 2)
        batch, channels, *in_size = from_layout(data.shape_values, layout, can)
        out_size = [d if s is None else IntImm("int64", s) for s, d in zip(sizes, in_size)]
        return TensorStructInfo(tuple(to_layout([batch, channels, *out_size], out_layout, can)), data.dtype)

    return infer


def _pool_kwargs(pool_type: str):
    def kwargs_of(call) -> dict:
        keys = ("pool_size", "strides", "padding", "dilation", "ceil_mode", "count_include_pad", "layout",
                "out_layout")
        return {"pool_type": pool_type, **{k: call.attrs[k] for k in keys}}

    return kwargs_of


def _adaptive_kwargs(pool_type: str):
    def kwargs_of(call) -> dict:
        return {"pool_type": pool_type, "output_size": call.attrs["output_size"],
                "layout": call.attrs["layout"], "out_layout": call.attrs["out_layout"]}

    return kwargs_of


_POOL_ATTRS = {
    "pool_size": "the window size along each spatial axis",
    "strides": "the stride of each spatial axis",
    "padding": "padding before then after each spatial axis",
    "dilation": "the spacing of window taps along each spatial axis",
    "ceil_mode": "round the output size up instead of down",
    "count_include_pad": "avg pools: divide by the window size including padding",
    "layout": "axis letters of data",
    "out_layout": "axis letters of the result",
}
_ADAPTIVE_ATTRS = {
    "output_size": "the output's spatial sizes (None or a None entry: the input's size)",
    "layout": "axis letters of data",
    "out_layout": "axis letters of the result",
}

for _nd in (1, 2, 3):
    for _kind in ("max", "avg"):
        register_op(
            f"relax.nn.{_kind}_pool{_nd}d",
            1,
            _infer_pool(_nd),
            legalize=call_topi(topi.nn.pool, f"{_kind}_pool{_nd}d", _pool_kwargs(_kind)),
            pattern=OpPatternKind.kOutEWiseFusable,
            attrs=_POOL_ATTRS,
            description=f"{_nd}-d {'maximum' if _kind == 'max' else 'average'} over sliding windows.",
        )
    register_op(
        f"relax.nn.adaptive_avg_pool{_nd}d",
        1,
        _infer_adaptive(_nd),
        legalize=call_topi(topi.nn.adaptive_pool, f"adaptive_avg_pool{_nd}d", _adaptive_kwargs("avg")),
        pattern=OpPatternKind.kOutEWiseFusable,
        attrs=_ADAPTIVE_ATTRS,
        description=f"{_nd}-d average over windows chosen to give output_size.",
    )


def _pool_call(op_name: str, nd: int, data, pool_size, strides, padding, dilation, ceil_mode,
               count_include_pad, layout, out_layout) -> Call:
    label = f"'{op_name.removeprefix('relax.')}'"
    attrs = {
        "pool_size": spatial_ints(label, "pool_size", pool_size, nd, 1),
        "strides": spatial_ints(label, "strides", strides, nd, 1),
        "padding": spatial_padding(label, padding, nd),
        "dilation": spatial_ints(label, "dilation", dilation, nd, 1),
        "ceil_mode": bool(ceil_mode),
        "count_include_pad": bool(count_include_pad),
        "layout": layout,
        "out_layout": out_layout or layout,
    }
    return Call(Op.get(op_name), [data], attrs)


def _make_pool(kind: str, nd: int):
    layout = "NC" + SPATIAL[nd]

    def builder(data, pool_size=(1,) * nd, strides=(1,) * nd, padding=(0,) * nd, dilation=(1,) * nd,
                ceil_mode: bool = False, count_include_pad: bool = False, layout: str = layout,
                out_layout: str | None = None) -> Call:
        return _pool_call(f"relax.nn.{kind}_pool{nd}d", nd, data, pool_size, strides, padding, dilation,
                          ceil_mode, count_include_pad, layout, out_layout)

    what = "maximum" if kind == "max" else "average"
    builder.__name__ = builder.__qualname__ = f"{kind}_pool{nd}d"
    builder.__doc__ = f"{nd}-d {what} pool of `data` ({layout}) over windows of `pool_size`."
    return builder


def _make_adaptive(nd: int):
    layout = "NC" + SPATIAL[nd]

    def builder(data, output_size=None, layout: str = layout, out_layout: str | None = None) -> Call:
        op_name = f"relax.nn.adaptive_avg_pool{nd}d"
        sizes = _output_sizes(f"'{op_name.removeprefix('relax.')}'", output_size, nd)
        attrs = {"output_size": sizes, "layout": layout, "out_layout": out_layout or layout}
        return Call(Op.get(op_name), [data], attrs)

    builder.__name__ = builder.__qualname__ = f"adaptive_avg_pool{nd}d"
    builder.__doc__ = f"{nd}-d adaptive average pool of `data` ({layout}) to `output_size`."
    return builder


max_pool1d, max_pool2d, max_pool3d = (_make_pool("max", nd) for nd in (1, 2, 3))
avg_pool1d, avg_pool2d, avg_pool3d = (_make_pool("avg", nd) for nd in (1, 2, 3))
adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (_make_adaptive(nd) for nd in (1, 2, 3))

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d"]
