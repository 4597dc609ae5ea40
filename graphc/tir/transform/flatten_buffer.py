"""`FlattenBuffer`: every N-D buffer access becomes an access to a flat 1-D buffer.

The flat buffer shares the N-D buffer's `data` Var; the index is
`sum(index_d * stride_d) + elem_offset` (compact row-major strides when `strides` is
empty). Parameter buffers in `buffer_map` keep their N-D shapes; `Allocate` extents
become the flat size.

>>> from graphc import tir
>>> A = tir.decl_buffer((4, 8), "float32", "A")
>>> a, i, j = tir.Var("a", "handle"), tir.Var("i"), tir.Var("j")
>>> f = tir.PrimFunc([a], tir.BufferStore(A, tir.const(0.0), (i, j)), buffer_map={a: A})
>>> store = flatten_buffer(f).body
>>> [int(d) for d in store.buffer.shape], store.buffer.data is A.data, store.indices[0].b is j
([32], True, True)
"""

from __future__ import annotations

from ...errors import TIRError
from ..buffer import Buffer
from ..expr import IntImm, PrimExpr, Ramp, const, convert, ramp
from ..function import PrimFunc
from ..functor import StmtExprMutator
from ..stmt import Allocate
from .function_pass import prim_func_pass


def _is_zero(expr) -> bool:
    return expr is None or (isinstance(expr, IntImm) and expr.value == 0)


def is_flat(buffer: Buffer) -> bool:
    """A 1-D compact buffer with no offset: already in the lowered form."""
    return len(buffer.shape) == 1 and not buffer.strides and _is_zero(buffer.elem_offset)


def _product(dims) -> PrimExpr:
    size = const(1, dims[0].dtype) if dims else const(1)
    for dim in dims:
        size = size * dim
    return size


def _strides(buffer: Buffer) -> list[PrimExpr]:
    if buffer.strides:
        if len(buffer.strides) != len(buffer.shape):
            raise TIRError(
                f"buffer {buffer.name} has {len(buffer.shape)} dimensions but {len(buffer.strides)} strides"
            )
        return list(buffer.strides)
    strides, acc = [], None
    for dim in reversed(buffer.shape):
        strides.append(const(1, dim.dtype) if acc is None else acc)
        acc = dim if acc is None else acc * dim
    return strides[::-1]


def flat_size(buffer: Buffer) -> PrimExpr:
    """Elements the flat view must cover: the product of dims, or the strided span."""
    if not buffer.strides:
        size = _product(buffer.shape)
    else:
        size = const(1, buffer.shape[0].dtype if buffer.shape else "int32")
        for dim, stride in zip(buffer.shape, buffer.strides):
            size = size + (dim - 1) * stride
    if not _is_zero(buffer.elem_offset):
        size = size + buffer.elem_offset
    return size


def flat_index(buffer: Buffer, indices) -> PrimExpr:
    """The flat element offset of `indices`; an innermost Ramp gives a Ramp over the offset.

    >>> from graphc import tir
    >>> B = tir.decl_buffer((2, 3), "float32", "B")
    >>> flat_index(B, (tir.const(1), tir.const(2))).value
    5
    """
    indices = [convert(i) for i in indices]
    if len(indices) != len(buffer.shape):
        raise TIRError(
            f"buffer {buffer.name} has {len(buffer.shape)} dimensions, indexed with {len(indices)}"
        )
    strides = _strides(buffer)
    ramps = [k for k, index in enumerate(indices) if isinstance(index, Ramp)]
    scalar_parts, vector = [], None
    for k, (index, stride) in enumerate(zip(indices, strides)):
        if len(ramps) == 1 and k == ramps[0]:
            vector = (index.base * stride, index.stride * stride, index.lanes)
        else:
            scalar_parts.append(index * stride)
    dtype = indices[0].dtype if indices else "int32"
    if vector is not None:
        dtype = vector[0].dtype
    offset = const(0, dtype.split("x")[0])
    for part in scalar_parts:
        offset = offset + part
    if not _is_zero(buffer.elem_offset):
        offset = offset + buffer.elem_offset
    if vector is not None:
        base, stride, lanes = vector
        return ramp(offset + base, stride, lanes)
    return offset


class _Flattener(StmtExprMutator):
    def __init__(self):
        self.flat: dict = {}

    def flatten(self, buffer: Buffer) -> Buffer:
        if is_flat(buffer):
            return buffer
        flat = self.flat.get(buffer)
        if flat is None:
            flat = buffer.replace(
                shape=(flat_size(buffer),), strides=(), elem_offset=None, axis_separators=()
            )
            self.flat[buffer] = flat
        return flat

    def visit_BufferLoad(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        if is_flat(op.buffer):
            return op.replace(indices=indices) if any(a is not b for a, b in zip(indices, op.indices)) else op
        return op.replace(buffer=self.flatten(op.buffer), indices=(flat_index(op.buffer, indices),))

    def visit_BufferStore(self, op):
        value = self.visit_expr(op.value)
        indices = tuple(self.visit_expr(i) for i in op.indices)
        if is_flat(op.buffer):
            changed = value is not op.value or any(a is not b for a, b in zip(indices, op.indices))
            return op.replace(value=value, indices=indices) if changed else op
        return op.replace(
            buffer=self.flatten(op.buffer), value=value, indices=(flat_index(op.buffer, indices),)
        )

    def visit_DeclBuffer(self, op):
        return op.replace(buffer=self.flatten(op.buffer), body=self.visit_stmt(op.body))

    def visit_Allocate(self, op: Allocate):
        body = self.visit_stmt(op.body)
        extents = op.extents
        if len(extents) != 1:
            extents = (_product([convert(e) for e in extents]),)
        return op.replace(extents=extents, condition=self.visit_expr(op.condition), body=body)

    def visit_BlockRealize(self, op):
        raise TIRError(
            f"FlattenBuffer found block {op.block.name_hint!r}; run ConvertBlocksToOpaque and "
            "LowerOpaqueBlock first"
        )


def flatten_buffer(func: PrimFunc) -> PrimFunc:
    """`func` with every buffer access flattened (parameter buffers stay N-D in buffer_map)."""
    return func.with_body(_Flattener().visit_stmt(func.body))


@prim_func_pass(opt_level=0, name="FlattenBuffer")
class FlattenBuffer:
    """Turn N-D buffer accesses into 1-D accesses of flat buffers sharing the same data."""

    def transform_function(self, func, mod, ctx):
        return flatten_buffer(func)


__all__ = ["FlattenBuffer", "flat_index", "flat_size", "flatten_buffer", "is_flat"]
