"""TE tensors, the operations that produce them, and the `ProducerLoad` expression reading them.

A `Tensor` is output `value_index` of an operation: a `PlaceholderOp` (an input) or a
`ComputeOp` (a value per index given by an expression). `A[i, j]` or `A(i, j)` builds a
`ProducerLoad`, which `create_prim_func` turns into a `BufferLoad`.

>>> from graphc import te
>>> A = te.placeholder((4, 8), name="A")
>>> A.ndim, A.dtype, A.name, [int(d) for d in A.shape]
(2, 'float32', 'A', [4, 8])
>>> type(A[1, 2]).__name__
'ProducerLoad'
"""

from __future__ import annotations

from typing import Any

from ..errors import TIRError
from ..ir.dtype import DataType
from ..ir.node import Node, node
from ..tir.expr import IntImm, PrimExpr, Var, convert
from ..tir.functor import StmtExprVisitor


@node
class Tensor(Node):
    """Output `value_index` of `op`, with a static `shape` (a tuple of PrimExprs) and `dtype`."""

    shape: tuple
    dtype: str
    op: Any
    value_index: int = 0
    __hash__ = object.__hash__

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def name(self) -> str:
        """The op's name for a single-output op, `<op>_v<i>` for the outputs of a multi-output op."""
        return self.op.output_name(self.value_index)

    @property
    def axis(self) -> tuple:
        return self.op.axis

    def __getitem__(self, indices) -> ProducerLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return self(*indices)

    def __call__(self, *indices) -> ProducerLoad:
        if len(indices) == 1 and isinstance(indices[0], list | tuple):
            indices = tuple(indices[0])
        if len(indices) != self.ndim:
            raise TIRError(f"tensor {self.name} has {self.ndim} dimensions, indexed with {len(indices)}")
        indices = tuple(convert(i) for i in indices)
        for i in indices:
            if not DataType(i.dtype).is_integer:
                raise TIRError(
                    f"tensor {self.name} indexed with a {i.dtype} expression; indices must be integers"
                )
        return ProducerLoad(self, indices, self.dtype)

    def __repr__(self) -> str:
        dims = ", ".join(_dim_text(d) for d in self.shape)
        return f"Tensor(name={self.name}, shape=({dims}), dtype={self.dtype})"

    __str__ = __repr__


def _dim_text(d) -> str:
    # Plain text for the common dimensions, so a Tensor prints without the script printer.
    if isinstance(d, IntImm):
        return str(d.value)
    if isinstance(d, Var):
        return d.name
    return repr(d)


@node
class ProducerLoad(PrimExpr):
    """Read element `indices` of the TE tensor `producer`."""

    producer: Tensor
    indices: tuple
    dtype: str

    def __repr__(self) -> str:
        return f"{self.producer.name}[{', '.join(map(repr, self.indices))}]"


class Operation:
    """Base of TE operations: named producers of one or more tensors."""

    __slots__ = ("name", "tag", "attrs", "_outputs")
    num_outputs = 1

    def output(self, index: int) -> Tensor:
        """The tensor of output `index`."""
        if not 0 <= index < len(self._outputs):
            raise TIRError(f"operation {self.name} has {len(self._outputs)} outputs, asked for {index}")
        return self._outputs[index]

    @property
    def outputs(self) -> tuple:
        return self._outputs

    def output_name(self, index: int) -> str:
        return self.name if len(self._outputs) == 1 else f"{self.name}_v{index}"

    @property
    def input_tensors(self) -> list:
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class PlaceholderOp(Operation):
    """An input tensor, bound to a buffer parameter by `create_prim_func`."""

    __slots__ = ("shape", "dtype")

    def __init__(self, name: str, shape: tuple, dtype: str):
        self.name, self.tag, self.attrs = name, "", {}
        self.shape, self.dtype = shape, dtype
        self._outputs = (Tensor(shape, dtype, self, 0),)

    @property
    def axis(self) -> tuple:
        return ()


class ComputeOp(Operation):
    """`shape[...] -> body`: one value per index of the spatial `axis`, reduced over `reduce_axis`.

    `body` holds one expression per output; a reduction's outputs are `Reduce` nodes that
    share a combiner and differ in `value_index`. `visible` lists the outputs `te.compute`
    handed back (an argmax keeps its value output internal).
    """

    __slots__ = ("axis", "reduce_axis", "body", "visible")

    def __init__(self, name, tag, attrs, axis, body, shape, visible=None):
        from .reduce import Reduce

        self.name, self.tag, self.attrs = name, tag, dict(attrs or {})
        self.axis = tuple(axis)
        self.body = tuple(body)
        first = self.body[0]
        self.reduce_axis = tuple(first.axis) if isinstance(first, Reduce) else ()
        self.visible = tuple(range(len(self.body))) if visible is None else tuple(visible)
        self._outputs = tuple(Tensor(shape, e.dtype, self, i) for i, e in enumerate(self.body))

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    def output_name(self, index: int) -> str:
        if len(self.visible) == 1 and index == self.visible[0]:
            return self.name
        return f"{self.name}_v{index}"

    @property
    def input_tensors(self) -> list:
        """The tensors the body reads, in order of first appearance."""
        found: list = []
        collect = _TensorCollector(found)
        for expr in self.body:
            collect.visit_expr(expr)
        return found


class _TensorCollector(StmtExprVisitor):
    def __init__(self, found: list):
        self.found = found

    def visit_ProducerLoad(self, op: ProducerLoad):
        if not any(t is op.producer for t in self.found):
            self.found.append(op.producer)
        for i in op.indices:
            self.visit_expr(i)

    def visit_Reduce(self, op):
        for e in op.source:
            self.visit_expr(e)
        self.visit_expr(op.condition)
