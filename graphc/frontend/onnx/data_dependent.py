"""Operators whose output shape depends on the input's values: NonZero, Compress, Unique,
NonMaxSuppression.

One design for all of them (docs/onnx_frontend.md): a Relax operator (`relax.nonzero`,
`relax.unique`, `relax.non_max_suppression`) that knows only its results' ranks, legalized
to a VM builtin that allocates each result at its exact size when the model runs; the
importer `match_cast`s the results to fresh symbolic sizes for the operators after them.
Compress is NonZero of its condition and a `take`, whose run-time index check rejects a
condition longer than the axis that selects past it.
"""

from __future__ import annotations

from ... import relax
from .common import Emitting, ndim_of, norm_axis, shape_expr, shape_of
from .registry import converter

op = Emitting(relax.op)


def _refined(node, value, hint: str):
    return node.importer.refine(node.importer.emit(value), hint)


def _count(x):
    total = 1
    for d in shape_of(x):
        total = total * d
    return total


@converter("NonZero", since=9)
def nonzero(node):
    return _refined(node, relax.op.nonzero(node.input(0)), "nonzero")


@converter("Compress", since=9)
def compress(node):
    x, condition = node.input(0), node.input(1)
    if ndim_of(condition) != 1:
        raise node.error(f"condition must be 1-d, got rank {ndim_of(condition)}")
    axis = node.attr("axis", None)
    if axis is None:
        x, axis = op.reshape(x, shape_expr([_count(x)])), 0
    else:
        axis = norm_axis(axis, ndim_of(x), node)
    picked = _refined(node, relax.op.nonzero(condition), "selected")
    picked = op.reshape(picked, shape_expr(shape_of(picked)[1:]))
    return op.take(x, picked, axis=axis)


@converter("Unique", since=11)
def unique(node):
    x = node.input(0)
    axis = node.attr("axis", None)
    if axis is not None:
        axis = norm_axis(axis, ndim_of(x), node)
    result = node.importer.emit(relax.op.unique(x, axis=axis, sorted=bool(node.attr("sorted"))))
    hints = ("unique", "first", "inverse", "counts")
    return tuple(node.importer.refine(node.importer.emit(relax.TupleGetItem(result, k)), hints[k])
                 for k in range(4))


@converter("NonMaxSuppression", since=10)
def non_max_suppression(node):
    """The optional thresholds and limit are read when the model runs (graph inputs or
    constants alike); an absent limit keeps no box, as ONNX says."""
    boxes, scores = node.input(0), node.input(1)
    limit = node.input(2, relax.const(0, "int64"))
    iou = node.input(3, relax.const(0.0, "float32"))
    floor = node.input(4, relax.const(0.0, "float32"))
    center = node.expect("center_point_box", 0, 1)
    call = relax.op.non_max_suppression(boxes, scores, limit, iou, floor, center, node.has_input(4))
    return _refined(node, call, "selected")
