"""The padded strides that `Schedule.storage_align` asks for, read from "buffer_dim_align".

`storage_align(block, buffer_index, axis, factor, offset)` records
`[buffer_index, axis, factor, offset]` in the "buffer_dim_align" annotation of the block
that writes the buffer. As in TVM's CompactBufferAllocation, the strides are computed
innermost first from the (compacted) shape: the compact stride of an aligned dimension is
raised to the smallest value `s >= stride` with `s % factor == offset % factor`, and every
outer stride is built on the padded one. `CompactBufferAllocation` gives intermediate
buffers these strides; `LowerOpaqueBlock` then allocates their strided span and
`FlattenBuffer` indexes them with the strides.

>>> from graphc import tir
>>> [int(s) for s in aligned_strides((tir.const(32), tir.const(32)), [(32, 1), None])]
[33, 1]
>>> [int(s) for s in aligned_strides((tir.const(4), tir.const(6), tir.const(5)), [None, (8, 0), None])]
[48, 8, 1]
"""

from __future__ import annotations

from ...errors import TIRError
from ..analysis.block_access import get_block_access_region
from ..expr import IntImm, PrimExpr, const, floormod
from ..functor import StmtVisitor

ANNOTATION = "buffer_dim_align"


def _as_int(value) -> int:
    return value.value if isinstance(value, IntImm) else int(value)


def _written(block) -> tuple:
    """The regions `block` writes, in the order `storage_align`'s buffer_index counts them."""
    if block.reads or block.writes:
        return block.writes
    return get_block_access_region(block)[1]


class _Collect(StmtVisitor):
    def __init__(self):
        self.aligns: dict = {}

    def visit_BlockRealize(self, op) -> None:
        block = op.block
        entries = block.annotations.get(ANNOTATION)
        if entries:
            writes = _written(block)
            for entry in entries:
                index, axis, factor, offset = (_as_int(x) for x in entry)
                if not 0 <= index < len(writes):
                    raise TIRError(
                        f"block {block.name_hint!r}: {ANNOTATION} names written buffer {index}, but the "
                        f"block writes {len(writes)}; re-apply storage_align with a valid buffer_index"
                    )
                buffer = writes[index].buffer
                if not 0 <= axis < len(buffer.shape) or factor <= 0:
                    raise TIRError(
                        f"block {block.name_hint!r}: {ANNOTATION} on {buffer.name} needs "
                        f"0 <= axis < {len(buffer.shape)} and factor > 0, got axis {axis}, factor {factor}"
                    )
                per_dim = self.aligns.setdefault(buffer, [None] * len(buffer.shape))
                per_dim[axis] = (factor, offset)
        super().visit_BlockRealize(op)


def collect_dim_aligns(body) -> dict:
    """Buffer -> per dimension `(factor, offset)` or None, from the blocks of `body` writing it."""
    collector = _Collect()
    collector.visit_stmt(body)
    return collector.aligns


def _pad(stride: PrimExpr, factor: int, offset: int) -> PrimExpr:
    """The smallest `s >= stride` with `s % factor == offset % factor`."""
    if isinstance(stride, IntImm):
        return const(stride.value + (offset - stride.value) % factor, stride.dtype)
    return stride + floormod(const(offset, stride.dtype) - stride, const(factor, stride.dtype))


def aligned_strides(shape, aligns) -> tuple:
    """Strides for `shape` with each aligned dimension's stride padded (innermost first)."""
    if len(aligns) != len(shape):
        raise TIRError(f"{len(aligns)} alignments given for a {len(shape)}-dimensional shape")
    strides: list = [None] * len(shape)
    stride = const(1, shape[0].dtype if shape else "int32")
    for dim in reversed(range(len(shape))):
        if aligns[dim] is not None:
            stride = _pad(stride, *aligns[dim])
        strides[dim] = stride
        extent = shape[dim]
        if isinstance(stride, IntImm) and isinstance(extent, IntImm):
            stride = const(stride.value * extent.value, stride.dtype)
        else:
            stride = stride * extent
    return tuple(strides)


__all__ = ["ANNOTATION", "aligned_strides", "collect_dim_aligns"]
