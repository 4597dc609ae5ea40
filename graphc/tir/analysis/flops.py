"""How much work a tensor program does: floating-point operations and the bytes of its arguments.

`estimate_flops` counts the floating-point arithmetic of every store (add, subtract, multiply,
divide, min, max, and one per math call such as `exp`), times the trip counts of the loops
around it. A block's `init` is not counted (it runs once per output, not per reduction step).
Loops whose extent is not a constant make the count unknown (None). `argument_bytes` is the
size of the buffers a PrimFunc takes, the traffic it cannot avoid.

>>> from graphc import te, tir
>>> A = te.placeholder((64, 32), "float32", name="A")
>>> B = te.placeholder((32, 16), "float32", name="B")
>>> k = te.reduce_axis((0, 32), "k")
>>> C = te.compute((64, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> func = te.create_prim_func([A, B, C])
>>> estimate_flops(func) == 2 * 64 * 16 * 32, argument_bytes(func) == 4 * (64 * 32 + 32 * 16 + 64 * 16)
(True, True)
"""

from __future__ import annotations

from ...ir.dtype import DataType
from .. import expr as tir_expr
from ..functor import ExprVisitor, StmtVisitor

_ARITHMETIC = (tir_expr.Add, tir_expr.Sub, tir_expr.Mul, tir_expr.Div, tir_expr.Min, tir_expr.Max)


class _Unknown(Exception):
    """A loop with a trip count that is not a constant."""


def _lanes_if_float(dtype: str) -> int:
    t = DataType(dtype)
    return t.lanes if t.is_float else 0


class _ArithmeticCounter(ExprVisitor):
    def __init__(self):
        self.count = 0

    def visit_BinaryOp(self, op):  # noqa: N802 - the visitor's naming
        if isinstance(op, _ARITHMETIC):
            self.count += _lanes_if_float(op.dtype)
        super().visit_BinaryOp(op)

    def visit_Call(self, op):  # noqa: N802
        self.count += _lanes_if_float(op.dtype)
        super().visit_Call(op)


class _FlopCounter(StmtVisitor):
    def __init__(self):
        self.trips = 1
        self.flops = 0

    def visit_For(self, op):  # noqa: N802
        if not isinstance(op.extent, tir_expr.IntImm):
            raise _Unknown
        outer = self.trips
        self.trips *= op.extent.value
        self.visit_stmt(op.body)
        self.trips = outer

    def visit_While(self, op):  # noqa: N802
        raise _Unknown

    def visit_Block(self, op):  # noqa: N802 - the init runs once per output: not counted
        self.visit_stmt(op.body)

    def visit_BufferStore(self, op):  # noqa: N802
        counter = _ArithmeticCounter()
        counter.visit_expr(op.value)
        self.flops += counter.count * self.trips


def estimate_flops(func) -> int | None:
    """The floating-point operations one call of the PrimFunc `func` performs; None when a
    loop's trip count is not a constant."""
    counter = _FlopCounter()
    try:
        counter.visit_stmt(func.body)
    except _Unknown:
        return None
    return counter.flops


def argument_bytes(func) -> int | None:
    """The bytes of the buffers `func` takes (read or written once each); None for a symbolic shape."""
    total = 0
    for buffer in func.buffer_map.values():
        size = DataType(buffer.dtype).bits // 8 or 1
        for dim in buffer.shape:
            if not isinstance(dim, tir_expr.IntImm):
                return None
            size *= dim.value
        total += size
    return total


__all__ = ["argument_bytes", "estimate_flops"]
