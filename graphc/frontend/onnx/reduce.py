"""Reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}, ArgMax/ArgMin,
CumSum, TopK.

Axes given as an input may be constants or tensors computed at run time; the latter reduce
through `relax.dynamic_reduce` over symbolic axes (every axis kept with size 1, then
squeezed when `keepdims=0`). Likewise CumSum's axis may be a run-time value and TopK's k.
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from ...tir.expr import logical_or as _or
from .common import (
    Emitting,
    axis_mask,
    dtype_of,
    dynamic_slice,
    ndim_of,
    norm_axes,
    norm_axis,
    shape_expr,
    shape_of,
    squeezed_shape,
)
from .dtypes import is_float, numpy_dtype
from .registry import converter

op = Emitting(relax.op)
I64 = "int64"

# opset from which each reduction takes its axes as an input instead of an attribute
_AXES_INPUT_SINCE = {"ReduceSum": 13}

_KINDS = (
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
)


def _axes(node, x):
    """(static axes list | None for all | symbolic axes, is_static, noop)."""
    ndim = ndim_of(x)
    noop = bool(node.attr("noop_with_empty_axes", 0)) if node.version >= 13 else False
    if node.version >= _AXES_INPUT_SINCE.get(node.op_type, 18):
        if not node.has_input(1):
            return None, True, noop
        known = node.known(1)
        if known is None:
            values = node.ints(1, "axes")
            if not values:
                return None, True, noop
            return values, False, noop
        axes = known.reshape(-1)
        if axes.dtype == object:
            return list(node.ints(1, "axes")), False, noop
        if axes.size == 0:
            return None, True, noop
        return norm_axes(axes.tolist(), ndim, node), True, False
    axes = node.attr("axes", None)
    if axes is None or len(axes) == 0:
        return None, True, False
    return norm_axes(axes, ndim, node), True, False


class _Reducer:
    """One reduction over static axes (None: all) or symbolic run-time axes."""

    def __init__(self, node, x, axes, static: bool, keepdims: bool):
        self.node, self.x, self.static, self.keepdims = node, x, static, keepdims
        self.axes = axes if static else axis_mask(node, ndim_of(x), axes)
        self.rank = ndim_of(x) - (0 if static else len(axes))

    def __call__(self, kind: str, value):
        if kind == "mean" and self.static:
            return op.mean(value, axis=self.axes, keepdims=self.keepdims)
        if kind == "mean":
            return op.divide(self("sum", value), self.count(value))
        if self.static:
            fn = {"sum": op.sum, "max": op.max, "min": op.min, "prod": op.prod}[kind]
            out = fn(value, axis=self.axes, keepdims=self.keepdims)
            if self.reduces_empty(value):
                return op.full_like(out, _identity(kind, dtype_of(value)))
        else:
            out = op.dynamic_reduce(value, self.axes, kind)
            out = out if self.keepdims else self.squeeze(out, value)
            if self.reduces_empty(value) or self.may_be_empty(value):
                # a zero-size axis that the run-time axes may name; the masked kernel's
                # product over an empty axis is not 1
                return self.identity_if_empty(kind, value, out)
        return out  # the kernels start from the identity (te.max: -inf for floats)

    def identity_if_empty(self, kind: str, value, out):
        """`out`, or the identity of `kind` where the reduction covers no element."""
        count = self.count(value)
        empty = op.equal(count, op.zeros_like(count))
        return op.where(empty, op.full_like(out, _identity(kind, dtype_of(value))), out)

    def may_be_empty(self, value) -> bool:
        """Whether a reduced axis has a size known only at run time (it may be 0)."""
        shape = shape_of(value)
        candidates = range(len(shape)) if not self.static or self.axes is None else self.axes
        return any(not isinstance(shape[a], tir.IntImm) for a in candidates)

    def reduces_empty(self, value) -> bool:
        """Whether a reduced axis (any axis, for run-time axes) has the static size 0: a
        reduction over no element is the identity (sum 0, prod 1, max -inf, min inf), which
        a tensor program's loop over nothing never writes."""
        shape = shape_of(value)
        candidates = range(len(shape)) if not self.static or self.axes is None else self.axes
        return any(isinstance(shape[a], tir.IntImm) and int(shape[a].value) == 0 for a in candidates)

    def squeeze(self, out, value):
        dims = squeezed_shape(shape_of(value), self.axes)[: self.rank]
        return op.reshape(out, shape_expr(self.node.importer.bind_prims(dims, "kept", sizes=True)))

    def count(self, value):
        """The number of elements reduced into each output element, as a 0-d tensor."""
        count = tir.const(1, I64)
        shape = shape_of(value)
        if self.static:
            for a in range(len(shape)) if self.axes is None else self.axes:
                count = count * shape[a]
        else:
            for d, m in zip(shape, self.axes):
                count = count * (1 + m * (d - 1))
        count = op.reshape(op.shape_to_tensor(shape_expr([count])), relax.ShapeExpr([]))
        return op.astype(count, dtype_of(value))


@converter(*_KINDS, since=1)
def reduce(node):
    x = node.input(0)
    keepdims = bool(node.attr("keepdims"))
    axes, static, noop = _axes(node, x)
    if axes is None and noop:
        return x
    r = _Reducer(node, x, axes, static, keepdims)
    kind = node.op_type
    if kind == "ReduceSum":
        return r("sum", x)
    if kind == "ReduceMean":
        return r("mean", x)
    if kind == "ReduceMax":
        return r("max", x)
    if kind == "ReduceMin":
        return r("min", x)
    if kind == "ReduceProd":
        return r("prod", x)
    if kind == "ReduceL1":
        return r("sum", op.abs(x))
    if kind == "ReduceSumSquare":
        return r("sum", op.multiply(x, x))
    if kind == "ReduceL2":
        return _float_fn(op.sqrt, r("sum", op.multiply(x, x)))
    if kind == "ReduceLogSum":
        return _float_fn(op.log, r("sum", x))
    if not static:  # sizes chosen at run time do not broadcast provably: no shift
        return op.log(r("sum", op.exp(x)))
    # ReduceLogSumExp, shifted by the maximum for stability
    peak = _Reducer(node, x, axes, static, True)("max", x)
    peak = op.where(op.isfinite(peak), peak, op.zeros_like(peak)) if is_float(dtype_of(x)) else peak
    total = r("sum", op.exp(op.subtract(x, peak)))
    shift = peak if keepdims else _drop(node, peak, axes, static, x)
    return op.add(op.log(total), shift)


def _identity(kind: str, dtype: str):
    """The value of a reduction of `kind` over no element, in `dtype`."""
    if kind in ("sum", "prod"):
        return 0 if kind == "sum" else 1
    if is_float(dtype):
        return float("-inf") if kind == "max" else float("inf")
    if dtype == "bool":
        return kind == "min"
    info = np.iinfo(numpy_dtype(dtype))
    return int(info.min) if kind == "max" else int(info.max)


def _drop(node, peak, axes, static, x):
    if static:
        nd = ndim_of(x)
        return op.squeeze(peak, list(range(nd)) if axes is None else axes)
    return _Reducer(node, x, axes, static, False).squeeze(peak, x)


def _float_fn(fn, value):
    dtype = dtype_of(value)
    if is_float(dtype):
        return fn(value)
    return op.astype(fn(op.astype(value, "float64")), dtype)


@converter("ArgMax", "ArgMin", since=1)
def arg_reduce(node):
    x = node.input(0)
    axis = norm_axis(node.attr("axis"), ndim_of(x), node)
    keepdims = bool(node.attr("keepdims"))
    last = node.attr("select_last_index", 0) if node.version >= 12 else 0
    fn = op.argmax if node.op_type == "ArgMax" else op.argmin
    if not last:
        return fn(x, axis=axis, keepdims=keepdims)
    flipped = fn(op.flip(x, axis), axis=axis, keepdims=keepdims)
    dim = shape_of(x)[axis]
    size = (
        relax.const(int(dim.value) - 1, I64)
        if isinstance(dim, tir.IntImm)
        else op.reshape(op.shape_to_tensor(shape_expr([dim - 1])), relax.ShapeExpr([]))
    )
    return op.subtract(size, flipped)


@converter("CumSum", "CumProd", since=11)
def cumulative(node):
    x = node.input(0)
    ndim = ndim_of(x)
    exclusive, reverse = bool(node.attr("exclusive")), bool(node.attr("reverse"))
    fn = op.cumsum if node.op_type == "CumSum" else op.cumprod

    def along(axis):
        v = op.flip(x, axis) if reverse else x
        out = fn(v, axis=axis, exclusive=exclusive)
        return op.flip(out, axis) if reverse else out

    known = node.const(1)
    if known is not None:
        return along(norm_axis(int(known.reshape(-1)[0]), ndim, node))
    # an axis known only at run time: every candidate, the one asked for selected
    axis = node.ints(1, "axis")[0]
    out = along(ndim - 1)
    for k in range(ndim - 1):
        chosen = op.reshape(
            op.shape_to_tensor(
                shape_expr(
                    [tir.select(_or(axis == k, axis == k - ndim), tir.const(1, I64), tir.const(0, I64))]
                )
            ),
            relax.ShapeExpr([]),
        )
        out = op.where(op.astype(chosen, "bool"), along(k), out)
    return out


@converter("TopK", since=1)
def topk(node):
    x = node.input(0)
    ndim = ndim_of(x)
    axis = norm_axis(node.attr("axis"), ndim, node)
    largest = bool(node.attr("largest", 1)) if node.version >= 11 else True
    node.attr("sorted", 1)
    if node.version < 10:
        k = tir.const(node.attr("k"), I64)
    else:
        k = node.ints(1, "k")[0]
    if isinstance(k, tir.IntImm):
        result = node.importer.emit(op.topk(x, int(k.value), axis=axis, largest=largest, dtype=I64))
        return relax.TupleGetItem(result, 0), relax.TupleGetItem(result, 1)
    order = op.argsort(x, axis=axis, descending=largest, dtype=I64)
    order = dynamic_slice(node, order, [axis], [0], [k], [1])
    order = node.importer.emit(order)
    return op.gather_elements(x, order, axis=axis), order
