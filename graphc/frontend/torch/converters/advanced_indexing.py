"""Advanced indexing and indexed updates: `index.Tensor` with several index tensors,
`index_put`, `slice_scatter`/`select_scatter`, `masked_scatter`, `diagonal`, `as_strided`,
`unfold` (sliding windows), `repeat_interleave` with a tensor of repeats. (Gather and scatter
along one axis, with an index tensor of the data's rank, are in `gather_sort_scan.py`.)

Advanced indexing follows NumPy: the index tensors broadcast to one shape S; the indexed axes
are moved to the front so that `gather_nd` / `scatter_nd` can address them with one (S..., k)
tensor of positions, and the result's S axes go where PyTorch puts them (in place of the
indexed axes when those are adjacent, in front otherwise).
"""

from __future__ import annotations

import numpy as np
import torch

from .... import relax, tir
from .common import cast, dtype_of, ndim_of, scalar_tensor, shape_of, shape_values
from .registry import converter

op = relax.op


def _static(args, value, what: str) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, tir.IntImm):
        return value.value
    raise args.unsupported("self", f"needs a static {what}, got the symbolic {value}")


class _Advanced:
    """The indexed axes of `x` moved to the front, and the (S..., k) tensor of positions."""

    def __init__(self, importer, args, x, indices):
        n = ndim_of(x)
        raw = list(args.raw("indices"))
        fakes = [raw[i].meta["val"] if i < len(raw) and raw[i] is not None else None for i in range(n)]
        self.used = [a for a, i in enumerate(indices) if i is not None]
        self.others = [a for a in range(n) if a not in self.used]
        shape = shape_of(x)
        s_shape = torch.broadcast_shapes(*(fakes[a].shape for a in self.used))
        self.s_shape = [args.prim(d) for d in s_shape]
        positions = []
        for a in self.used:
            wrapped = _wrapped(importer, indices[a], shape[a])
            s_shape = relax.ShapeExpr(shape_values(self.s_shape))
            positions.append(importer.emit(op.broadcast_to(wrapped, s_shape)))
        self.positions = importer.emit(op.stack(positions, axis=len(self.s_shape)))
        self.perm = self.used + self.others
        self.moved = x if self.perm == list(range(n)) else importer.emit(op.permute_dims(x, self.perm))
        adjacent = self.used == list(range(self.used[0], self.used[-1] + 1))
        self.front = self.used[0] if adjacent else 0  # where the S axes go in the result
        self.rest_shape = [shape[a] for a in self.others]

    def to_torch_layout(self):
        """Permutation from (S, others...) to PyTorch's result layout, or None when equal."""
        ns, front = len(self.s_shape), self.front
        if front == 0:
            return None
        return list(range(ns, ns + front)) + list(range(ns)) + list(range(ns + front, ns + len(self.others)))

    def result_shape(self):
        rest = self.rest_shape
        return rest[: self.front] + self.s_shape + rest[self.front :]


def _wrapped(importer, index, size):
    """An int64 index tensor with negative positions counted from the end of a dim of `size`."""
    index = cast(index, "int64")
    negative = op.less(index, relax.const(0, "int64"))
    return importer.emit(op.where(negative, op.add(index, scalar_tensor(size, "int64")), index))


def _reject_masks(args, indices):
    for i in indices:
        if i is not None and dtype_of(i) == "bool":
            raise args.unsupported(
                "indices", "holds a boolean mask: the result's shape depends on the data; "
                "use torch.where or masked_fill instead"
            )


@converter("aten.index.Tensor", "aten._unsafe_index.Tensor")
def _index(importer, args):
    x = args["self"]
    indices = list(args["indices"])
    _reject_masks(args, indices)
    used = [(axis, idx) for axis, idx in enumerate(indices) if idx is not None]
    if len(used) == 1:
        axis, idx = used[0]
        return op.take(x, _wrapped(importer, idx, shape_of(x)[axis]), axis=axis)
    adv = _Advanced(importer, args, x, indices)
    out = importer.emit(op.gather_nd(adv.moved, adv.positions))
    perm = adv.to_torch_layout()
    return out if perm is None else op.permute_dims(out, perm)


@converter("aten.index_put.default", "aten.index_put_.default", "aten._unsafe_index_put.default")
def _index_put(importer, args):
    x = args["self"]
    indices = list(args["indices"])
    accumulate = bool(args["accumulate"])
    values = cast(args["values"], dtype_of(x))
    masks = [i for i in indices if i is not None and dtype_of(i) == "bool"]
    if masks:
        return _masked_put(importer, args, x, indices, values, accumulate)
    adv = _Advanced(importer, args, x, indices)
    updates = importer.emit(op.broadcast_to(values, relax.ShapeExpr(shape_values(adv.result_shape()))))
    perm = adv.to_torch_layout()
    if perm is not None:  # back from PyTorch's layout to (S, others...)
        updates = importer.emit(op.permute_dims(updates, [perm.index(i) for i in range(len(perm))]))
    out = importer.emit(op.scatter_nd(adv.moved, adv.positions, updates, "add" if accumulate else "update"))
    if adv.perm == list(range(ndim_of(x))):
        return out
    return op.permute_dims(out, [adv.perm.index(i) for i in range(len(adv.perm))])


def _masked_put(importer, args, x, indices, values, accumulate):
    """`x[mask] = v` with one boolean mask and a single value: a `where`."""
    used = [(p, i) for p, i in enumerate(indices) if i is not None]
    if len(used) != 1:
        raise args.unsupported("indices", "mixes a boolean mask with other indices")
    if any(not (isinstance(d, tir.IntImm) and d.value == 1) for d in shape_of(values)):
        raise args.unsupported(
            "values", "must hold a single value with a boolean mask (the order of several is data-dependent)"
        )
    position, mask = used[0]
    trailing = ndim_of(x) - position - ndim_of(mask)
    if trailing:
        mask = importer.emit(op.reshape(mask, relax.ShapeExpr(list(shape_of(mask)) + [1] * trailing)))
    value = importer.emit(op.reshape(values, relax.ShapeExpr([])))
    if accumulate:
        value = importer.emit(op.where(mask, value, relax.const(0, dtype_of(x))))
        return op.add(x, value)
    return op.where(mask, value, x)


def _scatter_along(importer, x, src, dim, start, step):
    """`x` with positions start, start+step, ... along `dim` replaced by `src`."""
    count = shape_of(src)[dim]
    offsets = op.arange(relax.PrimValue(tir.const(0, "int64")), relax.PrimValue(count), 1, "int64")
    index = op.add(op.multiply(offsets, relax.const(step, "int64")), scalar_tensor(start, "int64"))
    index = importer.emit(index)
    column = [1] * ndim_of(src)
    column[dim] = count
    index = importer.emit(op.reshape(index, relax.ShapeExpr(shape_values(column))))
    index = importer.emit(op.broadcast_to(index, relax.ShapeExpr(list(src.struct_info.shape_values))))
    return op.scatter_elements(x, index, cast(src, dtype_of(x)), axis=dim)


def _numel(x):
    count = tir.const(1, "int64")
    for d in shape_of(x):
        count = count * d
    return count


def _wrap(value, size):
    """A start/index as Python or symbolic int, negative values counted from the end."""
    if isinstance(value, int) and value < 0:
        return size + value
    return value


@converter("aten.slice_scatter.default")
def _slice_scatter(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    size = shape_of(x)[dim]
    start = args["start"]
    args.ignore("end")  # src's size along dim says where the slice ends
    step = args["step"]
    if not isinstance(step, int) or step <= 0:
        raise args.unsupported("step", "must be a positive integer")
    start = 0 if start is None else _wrap(start, size)
    return _scatter_along(importer, x, args["src"], dim, start, step)


@converter("aten.select_scatter.default")
def _select_scatter(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    src = importer.emit(op.expand_dims(args["src"], dim))
    return _scatter_along(importer, x, src, dim, _wrap(args["index"], shape_of(x)[dim]), 1)


@converter("aten.masked_scatter.default", "aten.masked_scatter_.default")
def _masked_scatter(importer, args):
    """Masked positions take source's elements in order: the k-th True takes source.flat[k]."""
    x, mask, source = args["self"], args["mask"], args["source"]
    shape = relax.ShapeExpr(list(x.struct_info.shape_values))
    flat = relax.ShapeExpr([_numel(x)])
    mask = importer.emit(op.reshape(importer.emit(op.broadcast_to(mask, shape)), flat))
    rank = importer.emit(op.cumsum(cast(mask, "int64"), 0, "int64"))
    rank = importer.emit(op.subtract(rank, relax.const(1, "int64")))
    count = _numel(source)
    last = importer.emit(op.subtract(scalar_tensor(count, "int64"), relax.const(1, "int64")))
    rank = importer.emit(op.minimum(op.maximum(rank, relax.const(0, "int64")), last))
    source = importer.emit(op.reshape(cast(source, dtype_of(x)), relax.ShapeExpr([count])))
    taken = importer.emit(op.take(source, rank, axis=0))
    out = importer.emit(op.where(mask, taken, importer.emit(op.reshape(x, flat))))
    return op.reshape(out, shape)


@converter("aten.diagonal.default", "aten.diagonal_copy.default")
def _diagonal(importer, args):
    x = args["self"]
    n = ndim_of(x)
    offset = int(args["offset"])
    d1, d2 = args["dim1"] % n, args["dim2"] % n
    rest = [a for a in range(n) if a not in (d1, d2)]
    moved = importer.emit(op.permute_dims(x, rest + [d1, d2]))
    shape = shape_of(x)
    rows, cols = _static(args, shape[d1], "dim1 size"), _static(args, shape[d2], "dim2 size")
    r0, c0 = max(-offset, 0), max(offset, 0)
    length = max(0, min(rows - r0, cols - c0))
    flat_index = np.array([(i + r0) * cols + i + c0 for i in range(length)], dtype="int64")
    flat = importer.emit(op.reshape(moved, relax.ShapeExpr([shape[a] for a in rest] + [rows * cols])))
    return op.take(flat, relax.const(flat_index, "int64"), axis=len(rest))


@converter("aten.as_strided.default", "aten.as_strided_copy.default")
def _as_strided(importer, args):
    """A strided view of the input's contiguous storage, as a gather of flat positions."""
    fake = args.fake("self")
    if not fake.is_contiguous() or fake.storage_offset() != 0:
        raise args.unsupported("self", "must be a contiguous tensor that starts its storage")
    x = args["self"]
    sizes = [_static(args, s, "size") for s in args["size"]]
    strides = [_static(args, s, "stride") for s in args["stride"]]
    offset = args["storage_offset"] or 0
    positions = np.full(sizes, _static(args, offset, "storage offset"), dtype="int64")
    for axis, (size, stride) in enumerate(zip(sizes, strides)):
        column = [1] * len(sizes)
        column[axis] = size
        positions = positions + (np.arange(size, dtype="int64") * stride).reshape(column)
    flat = importer.emit(op.reshape(x, relax.ShapeExpr([_numel(x)])))
    return op.take(flat, relax.const(positions, "int64"), axis=0)


@converter("aten.unfold.default")
def _unfold(importer, args):
    """Windows of `size` every `step` along `dimension`, the window axis last."""
    x = args["self"]
    n = ndim_of(x)
    dim = args["dimension"] % n if n else 0
    size, step = int(args["size"]), int(args["step"])
    length = _static(args, shape_of(x)[dim], "size along the unfolded dim") if n else 1
    windows = (length - size) // step + 1
    index = np.arange(windows, dtype="int64")[:, None] * step + np.arange(size, dtype="int64")[None, :]
    if n == 0:
        return op.reshape(x, relax.ShapeExpr([1]))
    taken = importer.emit(op.take(x, relax.const(index, "int64"), axis=dim))
    perm = list(range(dim + 1)) + list(range(dim + 2, n + 1)) + [dim + 1]
    return op.permute_dims(taken, perm)


@converter("aten.repeat_interleave.Tensor")
def _repeat_interleave(importer, args):
    """The indices 0..n-1 each repeated repeats[i] times; the repeats must be constants."""
    repeats = args.raw("repeats")
    value = _constant(importer, repeats)
    if value is None:
        raise args.unsupported("repeats", "must be a constant tensor (the output size depends on it)")
    args.ignore("output_size")  # checked by PyTorch against the same constant repeats
    return relax.const(np.repeat(np.arange(len(value), dtype="int64"), value), "int64")


def _constant(importer, node):
    """The value of a node that is a Relax constant, as numpy, or None."""
    value = importer.retrieve(node)
    if isinstance(value, relax.Constant):
        return value.data.numpy() if hasattr(value.data, "numpy") else np.asarray(value.data)
    if isinstance(value, relax.Var):
        bound = importer.bb.lookup_binding(value)
        if isinstance(bound, relax.Constant):
            return bound.data.numpy() if hasattr(bound.data, "numpy") else np.asarray(bound.data)
    return None

