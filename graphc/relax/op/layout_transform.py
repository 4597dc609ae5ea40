"""`layout_transform(x, index_map, pad_value=None)`: `x` stored at the indices `index_map` gives.

As in TVM, the operator is legalized by applying the schedule primitive `transform_layout` to
the output of an identity PrimFunc, so the result's shape is the span of the map's outputs over
`x`'s shape; an injective map that is not onto fills the positions no element maps to with
`pad_value`. Struct-info inference builds that PrimFunc too, so both always agree.
`axis_separators` (non-flat buffers) are not supported by graphc.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((32, 8), "float32"))
>>> call = layout_transform(x, lambda i, j: (i // 16, j, i % 16))
>>> relax.BlockBuilder().normalize(call).struct_info
R.Tensor((2, 8, 16), dtype="float32")
"""

from __future__ import annotations

from ...errors import ScheduleError, TypeInferenceError
from ...tir.arith import Analyzer
from ...tir.index_map import IndexMap
from ..expr import Call, PrimValue
from ..struct_info import TensorStructInfo
from .infer import op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op


def _transformed_func(call, sinfo: TensorStructInfo):
    """The identity PrimFunc on `sinfo` with its output's layout transformed (the legalization)."""
    from ... import te, tir

    x = te.placeholder(sinfo.shape_values, sinfo.dtype, name="x")
    y = te.compute(x.shape, lambda *i: x(*i), name="te_layout_transform")
    func = te.create_prim_func([x, y]).without_attr("global_symbol")
    sch = tir.Schedule(func)
    pad = call.attrs.get("pad_value")
    if pad is not None:  # the tensor's dtype: R.prim_value(0.0) is a float64
        pad = tir.Cast(sinfo.dtype, pad.value) if pad.value.dtype != sinfo.dtype else pad.value
        pad = Analyzer().simplify(pad)
    try:
        sch.transform_layout(sch.get_block("te_layout_transform"), ("write", 0), call.attrs["index_map"],
                             pad_value=pad)
    except ScheduleError as err:
        raise TypeInferenceError(f"{op_label(call)} cannot apply its index map to {sinfo}: {err}") from None
    return sch.mod["main"]


def _infer(call, bb):
    x = tensor_arg(call, 0, "x")
    for key in ("axis_separators", "input_axis_separators"):
        if call.attrs.get(key):
            raise TypeInferenceError(f"{op_label(call)}: {key} (non-flat buffers) are not supported by "
                                     "graphc")
    index_map = call.attrs["index_map"]
    if x.ndim != -1 and len(index_map.initial_indices) != x.ndim:
        raise TypeInferenceError(f"{op_label(call)} expects an index map of {x.ndim} indices for {x}, got "
                                 f"{index_map}")
    if x.shape_values is None or x.is_unknown_dtype:
        return TensorStructInfo(None, x.dtype, len(index_map.final_indices))
    func = _transformed_func(call, x)
    out = func.buffer_map[func.params[1]]
    return TensorStructInfo(tuple(out.shape), x.dtype)


def _legalize(bb, call):
    from .base import call_tir

    func = _transformed_func(call, call.args[0].struct_info)
    gvar = bb.add_func(func, "te_layout_transform")
    return call_tir(gvar, [call.args[0]], call.struct_info)


register_op("relax.layout_transform", 1, _infer, legalize=_legalize, pattern=OpPatternKind.kInjective,
            attrs={"index_map": "the new indices of each element (an IndexMap)",
                   "pad_value": "the value of positions no element maps to (None: the map must be onto)",
                   "axis_separators": "TVM's non-flat buffers (not supported)",
                   "input_axis_separators": "TVM's non-flat buffers (not supported)"},
            description="Store a tensor at the indices an index map gives.")


def layout_transform(x, index_map, pad_value=None, axis_separators=None, input_axis_separators=None) -> Call:
    """`x` at the indices `index_map` (a function of the indices, or an IndexMap) gives."""
    index_map = IndexMap.from_func(index_map)
    if pad_value is not None and not isinstance(pad_value, PrimValue):
        pad_value = PrimValue(pad_value)
    attrs = {"index_map": index_map, "pad_value": pad_value,
             "axis_separators": tuple(axis_separators or ()),
             "input_axis_separators": tuple(input_axis_separators or ())}
    return Call(Op.get("relax.layout_transform"), [x], attrs)


__all__ = ["layout_transform"]
