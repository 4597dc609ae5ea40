"""Operators whose output shape depends on the input's values: `nonzero`, `unique`.

The one design for every such operator: the Relax operator knows its results' ranks and
dtypes only; it legalizes to a pure call of a VM builtin (`vm.builtin.nonzero`, ...,
graphc/vm/data_dependent.py) that computes the values and allocates the result at its
exact size when the model runs. A frontend `match_cast`s the result to fresh symbolic
sizes, so the operators after it see (symbolic) shapes as usual.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.nonzero(x)).struct_info
R.Tensor(dtype="int64", ndim=2)
>>> relax.BlockBuilder().normalize(relax.op.unique(x, axis=1)).struct_info.fields[0]
R.Tensor(dtype="float32", ndim=2)
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ..expr import Call
from ..struct_info import TensorStructInfo, TupleStructInfo
from .infer import op_label, tensor_arg
from .packed import call_pure_packed
from .registry import Op, register_op


def _infer_nonzero(call, bb):
    tensor_arg(call, 0, "x")
    return TensorStructInfo(dtype="int64", ndim=2)


def _legalize_nonzero(bb, call):
    return call_pure_packed("vm.builtin.nonzero", call.args[0], sinfo_args=_infer_nonzero(call, bb))


_legalize_nonzero.data_dependent_shape = True  # LegalizeOps: the result's shape is unknown
register_op("relax.nonzero", 1, _infer_nonzero, legalize=_legalize_nonzero,
            description="The indices of the nonzero elements of x, one column per element (numpy's "
                        "nonzero stacked), int64 of shape (rank, count); the count is known at run time.")


def nonzero(x) -> Call:
    """The (rank, count) int64 indices of `x`'s nonzero elements, in row-major order."""
    return Call(Op.get("relax.nonzero"), [x])


def _infer_unique(call, bb):
    x = tensor_arg(call, 0, "x")
    axis = call.attrs["axis"]
    if axis is not None and x.ndim >= 0 and not -x.ndim <= axis < x.ndim:
        raise TypeInferenceError(f"{op_label(call)} expects axis in [{-x.ndim}, {x.ndim}), got {axis}")
    values = TensorStructInfo(dtype=x.dtype, ndim=1 if axis is None else x.ndim)
    index = TensorStructInfo(dtype="int64", ndim=1)
    return TupleStructInfo([values, index, index, index])


def _legalize_unique(bb, call):
    x = call.args[0]
    axis = call.attrs["axis"]
    return call_pure_packed("vm.builtin.unique", x, -1 if axis is None else axis % x.struct_info.ndim,
                            int(axis is None), int(call.attrs["sorted"]), sinfo_args=_infer_unique(call, bb))


_legalize_unique.data_dependent_shape = True
register_op("relax.unique", 1, _infer_unique, legalize=_legalize_unique,
            attrs={"axis": "the axis whose slices are compared (None: the flattened elements)",
                   "sorted": "values in ascending order (else in order of first occurrence)"},
            description="The unique values (or slices along axis) of x, with the index of each one's "
                        "first occurrence, the inverse indices and the counts; sizes known at run time.")


def unique(x, axis: int | None = None, sorted: bool = True) -> Call:  # noqa: A002 - numpy's word
    """(values, first indices, inverse indices, counts) of `x` (numpy's unique with all
    outputs; `sorted=False` orders by first occurrence, as ONNX's Unique does)."""
    attrs = {"axis": None if axis is None else int(axis), "sorted": bool(sorted)}
    return Call(Op.get("relax.unique"), [x], attrs)





def _infer_nms(call, bb):
    for k, name in enumerate(("boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
                              "score_threshold")):
        tensor_arg(call, k, name)
    return TensorStructInfo(dtype="int64", ndim=2)


def _legalize_nms(bb, call):
    return call_pure_packed("vm.builtin.non_max_suppression", *call.args, int(call.attrs["center_point_box"]),
                            int(call.attrs["has_score_threshold"]), sinfo_args=_infer_nms(call, bb))


_legalize_nms.data_dependent_shape = True
register_op("relax.non_max_suppression", 5, _infer_nms, legalize=_legalize_nms,
            attrs={"center_point_box": "0: boxes as two corners (y1, x1, y2, x2); 1: (x, y, width, height)",
                   "has_score_threshold": "whether boxes scoring at most score_threshold are dropped"},
            description="ONNX's NonMaxSuppression: the (batch, class, box) rows of the boxes kept; the "
                        "count is known at run time.")


def non_max_suppression(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold,
                        center_point_box: int = 0, has_score_threshold: bool = True) -> Call:
    """The int64 (count, 3) (batch, class, box) rows ONNX's NonMaxSuppression keeps."""
    return Call(Op.get("relax.non_max_suppression"),
                [boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold],
                {"center_point_box": int(center_point_box), "has_score_threshold": bool(has_score_threshold)})


__all__ = ["non_max_suppression", "nonzero", "unique"]
