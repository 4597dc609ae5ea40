"""VM builtins of ONNX sequences whose length is known only at run time (a sequence carried
through a loop run by the VM, a split into a number of pieces read from a tensor): such a
sequence is a tuple of tensors in the VM, and these builtins make new tuples from old ones.

>>> from graphc.runtime.tensor import Tensor
>>> t = lambda a: Tensor._from_host_array(np.asarray(a, "float32"))
>>> seq = sequence_insert((t([1.0]),), t([2.0, 3.0]), 0, 0, "SequenceInsert node 's'")
>>> [e.numpy().tolist() for e in seq], int(sequence_length(seq).numpy())
([[1.0], [2.0, 3.0]], 2)
"""

from __future__ import annotations

import numpy as np

from ..runtime.tensor import Tensor
from .builtins import register_builtin


def _host(x) -> np.ndarray:
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _position(pos, length: int, where: str, insert: bool = False) -> int:
    p = _host(pos)
    if p.size != 1:
        raise ValueError(f"{where}: the position must be a scalar, got a tensor of shape {p.shape}")
    index = int(p.reshape(-1)[0])
    limit = length + 1 if insert else length
    if not -length <= index < limit:
        raise IndexError(
            f"{where}: position {index} is out of range for a sequence of {length} "
            f"(accepted: [{-length}, {limit - 1}])"
        )
    return index + length if index < 0 else index


@register_builtin("vm.builtin.sequence_insert", override=True)
def sequence_insert(seq, tensor, has_pos: int, pos, where: str) -> tuple:
    seq = tuple(seq)
    index = _position(pos, len(seq), where, insert=True) if has_pos else len(seq)
    return seq[:index] + (tensor,) + seq[index:]


@register_builtin("vm.builtin.sequence_erase", override=True)
def sequence_erase(seq, has_pos: int, pos, where: str) -> tuple:
    seq = tuple(seq)
    if not seq:
        raise IndexError(f"{where}: erasing from an empty sequence")
    index = _position(pos, len(seq), where) if has_pos else len(seq) - 1
    return seq[:index] + seq[index + 1 :]


@register_builtin("vm.builtin.sequence_at", override=True)
def sequence_at(seq, pos, where: str):
    seq = tuple(seq)
    return seq[_position(pos, len(seq), where)]


@register_builtin("vm.builtin.sequence_length", override=True)
def sequence_length(seq) -> Tensor:
    return Tensor._from_host_array(np.array(len(tuple(seq)), dtype=np.int64))


@register_builtin("vm.builtin.concat_from_sequence", override=True)
def concat_from_sequence(seq, axis: int, new_axis: int, where: str) -> Tensor:
    arrays = [_host(e) for e in seq]
    if not arrays:
        raise ValueError(f"{where}: concatenating an empty sequence")
    try:
        out = np.stack(arrays, axis=int(axis)) if new_axis else np.concatenate(arrays, axis=int(axis))
    except (ValueError, np.exceptions.AxisError) as exc:
        shapes = [a.shape for a in arrays]
        raise ValueError(f"{where}: cannot concatenate elements of shapes {shapes}: {exc}") from exc
    return Tensor._from_host_array(np.ascontiguousarray(out))


@register_builtin("vm.builtin.split_to_sequence", override=True)
def split_to_sequence(x, split, axis: int, where: str) -> tuple:
    """Pieces of `x` along `axis`: of size `split` (a scalar; the last one smaller if the axis
    does not divide), or of the sizes a 1-d `split` lists (which must add up to the axis)."""
    a, s = _host(x), _host(split)
    axis = int(axis)
    length = a.shape[axis]
    if s.ndim == 0:
        size = int(s)
        if size <= 0:
            raise ValueError(f"{where}: the split size must be positive, got {size}")
        sizes = [size] * (length // size) + ([length % size] if length % size else [])
    else:
        sizes = [int(v) for v in s.reshape(-1)]
        if any(v < 0 for v in sizes) or sum(sizes) != length:
            raise ValueError(f"{where}: the split sizes {sizes} must be non-negative and add up to {length}")
    bounds = np.cumsum([0] + sizes)
    index = [slice(None)] * a.ndim
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        index[axis] = slice(int(start), int(stop))
        pieces.append(Tensor._from_host_array(np.ascontiguousarray(a[tuple(index)])))
    return tuple(pieces)


__all__ = [
    "concat_from_sequence",
    "sequence_at",
    "sequence_erase",
    "sequence_insert",
    "sequence_length",
    "split_to_sequence",
]
