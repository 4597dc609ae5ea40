"""Rearrangements by computed indices: ReverseSequence and TensorScatter.

Both build, from an `arange` along one axis and per-batch run-time values (sequence lengths,
write positions), the index of the element each output position reads, and read it with
`gather_elements`, whose indices are checked at run time: a sequence length past the time
axis raises IndexError instead of reading out of bounds.
"""

from __future__ import annotations

from ... import relax
from .common import Emitting, cast, dtype_of, ndim_of, norm_axis, shape_expr, shape_of
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
