"""Reads and writes by computed indices: Gather, GatherElements, GatherND, ScatterElements,
ScatterND, and the rearrangements ReverseSequence and TensorScatter.

The last two build, from an `arange` along one axis and per-batch run-time values (sequence lengths,
write positions), the index of the element each output position reads, and read it with
`gather_elements`, whose indices are checked at run time: a sequence length past the time
axis raises IndexError instead of reading out of bounds.
"""

from __future__ import annotations

import numpy as np

from ... import relax
from .common import Emitting, cast, dtype_of, ndim_of, norm_axis, shape_expr, shape_of
from .importer import Known
from .registry import converter

op = Emitting(relax.op)
I64 = "int64"


def _along(values, axis: int, ndim: int, dim):
    """A 1-d tensor of `dim` values shaped to broadcast along `axis` of a rank-`ndim` tensor."""
    return op.reshape(values, shape_expr([dim if k == axis else 1 for k in range(ndim)]))


def _positions(x, axis: int):
    dim = shape_of(x)[axis]
    return _along(op.arange(0, relax.PrimValue(dim), 1, I64), axis, ndim_of(x), dim)


@converter("ReverseSequence", since=10)
def reverse_sequence(node):
    """y[b, t] = x[b, L[b] - 1 - t] for t < L[b], else x[b, t]."""
    x, lens = node.input(0), node.input(1)
    ndim = ndim_of(x)
    batch = norm_axis(node.attr("batch_axis"), ndim, node)
    time = norm_axis(node.attr("time_axis"), ndim, node)
    if batch == time:
        raise node.unsupported("time_axis", node.attr("time_axis"), "must differ from batch_axis")
    if ndim_of(lens) != 1:
        raise node.error(f"sequence_lens must be 1-d, got rank {ndim_of(lens)}")
    t = _positions(x, time)
    lengths = _along(cast(lens, I64), batch, ndim, shape_of(x)[batch])
    reversed_t = op.subtract(op.subtract(lengths, relax.const(1, I64)), t)
    index = op.where(op.less(t, lengths), reversed_t, op.broadcast_to(t, shape_expr(
        [d if k in (batch, time) else 1 for k, d in enumerate(shape_of(x))])))
    index = op.broadcast_to(index, shape_expr(shape_of(x)))
    return op.gather_elements(x, index, axis=time)


def _check_linear_writes(node, starts, count, length):
    """Linear mode writes positions [start, start + count) of the cache axis: a start below 0
    or past length - count stops the model (ONNX's reference fails; nothing wraps)."""
    first = op.min(starts)
    last = op.add(op.max(starts), count)
    inside = op.logical_and(op.greater_equal(first, relax.const(0, I64)), op.less_equal(last, length))
    where = node.where.replace("{", "{{").replace("}", "}}")
    message = (f"{where}: mode 'linear' writes {{}} positions from write_indices {{}}, outside "
               f"the cache axis of length {{}} (valid starts: [0, length - count])")
    node.importer.emit(relax.op.assert_op(inside, [count, starts, length], format=message))


@converter("TensorScatter", since=24)
def tensor_scatter(node):
    """The cache with, for each batch b, `update` written along `axis` from position
    write_indices[b] (modulo the cache length in "circular" mode): each cache position reads
    the update element it receives, or keeps its own value."""
    cache, update = node.input(0), node.input(1)
    ndim = ndim_of(cache)
    axis = norm_axis(node.attr("axis"), ndim, node)
    if axis == 0:
        raise node.unsupported("axis", node.attr("axis"), "must not be the batch axis 0")
    mode = node.expect("mode", "linear", "circular")
    if ndim_of(update) != ndim:
        raise node.error(f"update must have the cache's rank {ndim}, got rank {ndim_of(update)}")
    c = _positions(cache, axis)
    batch = shape_of(cache)[0]
    if node.has_input(2):
        starts = _along(cast(node.input(2), I64), 0, ndim, batch)
    else:
        starts = relax.const(0, I64)
    offset = op.subtract(c, starts)
    length = op.reshape(op.shape_to_tensor(shape_expr([shape_of(cache)[axis]])), relax.ShapeExpr([]))
    count = op.reshape(op.shape_to_tensor(shape_expr([shape_of(update)[axis]])), relax.ShapeExpr([]))
    if mode == "circular":
        offset = op.floor_mod(offset, length)
    elif node.has_input(2):
        _check_linear_writes(node, cast(node.input(2), I64), count, length)
    written = op.logical_and(op.greater_equal(offset, relax.const(0, I64)), op.less(offset, count))
    index = op.where(written, offset, op.zeros_like(offset))
    dims = zip(shape_of(cache), shape_of(update))
    full = shape_expr([d if k == axis else u for k, (d, u) in enumerate(dims)])
    index = op.broadcast_to(index, full)
    incoming = op.gather_elements(update, index, axis=axis)
    if dtype_of(incoming) != dtype_of(cache):
        raise node.error(f"update must have the cache's dtype {dtype_of(cache)}, got {dtype_of(incoming)}")
    return op.where(op.broadcast_to(written, full), incoming, cache)


# -- gather / scatter -----------------------------------------------------------------------


# The gathers and scatters run in mode "raise" (their default): a negative index counts from the
# end once, as ONNX says, and anything outside [-n, n) raises IndexError when the model runs.
# Wrapping negatives here as well would wrap [-2n, -n) twice, into a silently wrong element.


@converter("Gather", since=1)
def gather(node):
    axis = node.attr("axis")
    data, idx = node.known(0), node.known(1)
    if data is not None and idx is not None and idx.dtype != object:
        ax = axis % max(data.ndim, 1)
        dim = data.shape[ax]
        if idx.size and (idx.min() < -dim or idx.max() >= dim):
            bad = idx[(idx < -dim) | (idx >= dim)].reshape(-1)[0]
            raise node.error(f"index {bad} is out of range [{-dim}, {dim}) for axis {ax} of the data")
        idx = np.where(idx < 0, idx + dim, idx)
        return Known(np.take(data, idx, axis=ax), node.importer.known_dtype(node.inputs[0]))
    x, indices = node.input(0), node.input(1)
    return op.take(x, indices, axis=norm_axis(axis, ndim_of(x), node))


@converter("GatherElements", since=11)
def gather_elements(node):
    x, indices = node.input(0), node.input(1)
    axis = norm_axis(node.attr("axis"), ndim_of(x), node)
    return op.gather_elements(x, indices, axis=axis)


@converter("GatherND", since=11)
def gather_nd(node):
    x, indices = node.input(0), node.input(1)
    batch_dims = node.attr("batch_dims", 0)
    return op.gather_nd(x, indices, batch_dims=batch_dims)


_REDUCTIONS = {"none": "update", "add": "add", "mul": "mul", "max": "max", "min": "min"}


@converter("ScatterElements", "Scatter", since=1)
def scatter_elements(node):
    x, indices, updates = node.input(0), node.input(1), node.input(2)
    axis = norm_axis(node.attr("axis"), ndim_of(x), node)
    reduction = node.attr("reduction", "none") if node.version >= 16 else "none"
    if reduction not in _REDUCTIONS:
        raise node.unsupported("reduction", reduction)
    return op.scatter_elements(x, indices, updates, axis=axis, reduction=_REDUCTIONS[reduction])


@converter("ScatterND", since=11)
def scatter_nd(node):
    x, indices, updates = node.input(0), node.input(1), node.input(2)
    reduction = node.attr("reduction", "none") if node.version >= 16 else "none"
    if reduction not in _REDUCTIONS:
        raise node.unsupported("reduction", reduction)
    return op.scatter_nd(x, indices, updates, reduction=_REDUCTIONS[reduction])
