"""Buffers: typed, shaped views of memory that loads and stores address.

A Buffer's `data` is a handle Var; several Buffers may share one `data` (views).
`strides` empty means compact row-major; `elem_offset` is in elements.

>>> A = decl_buffer((4, 8), "float32", name="A")
>>> A.shape
(4, 8)
>>> type(A[1, 2]).__name__
'BufferLoad'
"""

from __future__ import annotations

from ..errors import TIRError
from ..ir.dtype import DataType, canonical
from ..ir.node import Node, node
from .expr import BufferLoad, IntImm, PrimExpr, Ramp, Var, const, convert

DEFAULT_ALIGNMENT = 64


@node
class Buffer(Node):
    """A multi-dimensional view of the memory behind `data`."""

    data: Var
    dtype: str
    shape: tuple
    strides: tuple = ()
    elem_offset: PrimExpr | None = None
    name: str = "buffer"
    scope: str = "global"
    data_alignment: int = DEFAULT_ALIGNMENT
    offset_factor: int = 1
    axis_separators: tuple = ()
    __structural_binding__ = True

    def __getitem__(self, indices) -> PrimExpr:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return buffer_load(self, indices)

    def __call__(self, *indices) -> PrimExpr:
        return buffer_load(self, indices)

    def vload(self, indices, dtype: str | None = None) -> PrimExpr:
        return buffer_load(self, tuple(indices))

    def vstore(self, indices, value):
        from .stmt import BufferStore

        return BufferStore(self, convert(value, self.dtype), tuple(convert(i) for i in indices))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def name_hint(self) -> str:
        return self.name

    def offset_of(self, indices) -> PrimExpr:
        """The flat element offset of `indices` (uses strides when present)."""
        indices = [convert(i) for i in indices]
        if len(indices) != len(self.shape):
            raise TIRError(
                f"buffer {self.name} has {len(self.shape)} dimensions, indexed with {len(indices)}"
            )
        offset = const(0, indices[0].dtype if indices else "int32")
        if self.strides:
            for index, stride in zip(indices, self.strides):
                offset = offset + index * stride
        else:
            for index, extent in zip(indices, self.shape):
                offset = offset * extent + index
        if self.elem_offset is not None and not (
            isinstance(self.elem_offset, IntImm) and self.elem_offset.value == 0
        ):
            offset = offset + self.elem_offset
        return offset

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.shape!r}, {self.dtype!r})"


def buffer_load(buffer: Buffer, indices) -> BufferLoad:
    """`buffer[indices]`; a Ramp index makes a vector load."""
    indices = tuple(convert(i) for i in indices)
    if len(indices) != len(buffer.shape) and not (len(buffer.shape) == 1 and len(indices) == 1):
        raise TIRError(
            f"buffer {buffer.name} has {len(buffer.shape)} dimensions, indexed with {len(indices)}"
        )
    lanes = 1
    for index in indices:
        lanes = max(lanes, DataType(index.dtype).lanes)
    dtype = buffer.dtype if lanes == 1 else str(DataType(buffer.dtype).with_lanes(lanes))
    return BufferLoad(buffer, indices, dtype)


def decl_buffer(
    shape,
    dtype: str = "float32",
    name: str = "buffer",
    data: Var | None = None,
    strides=None,
    elem_offset=None,
    scope: str = "global",
    data_alignment: int = -1,
    offset_factor: int = 0,
    axis_separators=None,
) -> Buffer:
    """Declare a Buffer (TVM's `tir.decl_buffer`); dimensions may be ints or PrimExprs."""
    dtype = canonical(dtype)
    if isinstance(shape, int | PrimExpr):
        shape = (shape,)
    shape = tuple(_dim(d) for d in shape)
    if data is None:
        data = Var(name, "handle", type_annotation=dtype)
    strides = tuple(_dim(s) for s in strides) if strides else ()
    if elem_offset is not None:
        elem_offset = convert(elem_offset)
    return Buffer(
        data,
        dtype,
        shape,
        strides,
        elem_offset,
        name,
        scope,
        DEFAULT_ALIGNMENT if data_alignment in (-1, None) else data_alignment,
        max(offset_factor or 1, 1),
        tuple(axis_separators or ()),
    )


def _dim(d) -> PrimExpr:
    if isinstance(d, bool):
        raise TIRError(f"a buffer dimension cannot be a bool ({d!r})")
    if isinstance(d, int):
        return const(d, "int32" if -(2**31) <= d < 2**31 else "int64")
    d = convert(d)
    if not DataType(d.dtype).is_integer:
        raise TIRError(f"a buffer dimension must be an integer expression, got {d.dtype}")
    return d


def is_vector_index(index: PrimExpr) -> bool:
    return isinstance(index, Ramp) or DataType(index.dtype).lanes > 1
