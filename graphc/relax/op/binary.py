"""Elementwise binary arithmetic with numpy broadcasting: add, subtract, multiply, divide.

Shapes broadcast right-aligned; symbolic dimensions are compared with the arithmetic
analyzer (a pair that cannot be decided keeps only the rank, as TVM does).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 1), "float32"))
>>> y = relax.Var("y", relax.TensorStructInfo((4,), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.multiply(x, y)).struct_info
R.Tensor((n, 4), dtype="float32")
"""

from __future__ import annotations

from ..expr import Call
from .infer import analyzer_of, binary_dtype, broadcast_sinfo, tensor_arg
from .registry import Op, OpPatternKind, register_op


def _infer_binary(call, bb):
    a, b = tensor_arg(call, 0, "x1"), tensor_arg(call, 1, "x2")
    dtype = binary_dtype(call, a, b)
    return broadcast_sinfo(call, a, b, dtype, analyzer_of(bb))


for _name in ("add", "subtract", "multiply", "divide"):
    register_op(f"relax.{_name}", 2, _infer_binary, pattern=OpPatternKind.kBroadcast,
                description=f"Elementwise {_name} with numpy broadcasting.")


def add(x1, x2) -> Call:
    """`x1 + x2`, broadcasting."""
    return Call(Op.get("relax.add"), [x1, x2])


def subtract(x1, x2) -> Call:
    """`x1 - x2`, broadcasting."""
    return Call(Op.get("relax.subtract"), [x1, x2])


def multiply(x1, x2) -> Call:
    """`x1 * x2`, broadcasting."""
    return Call(Op.get("relax.multiply"), [x1, x2])


def divide(x1, x2) -> Call:
    """`x1 / x2`, broadcasting."""
    return Call(Op.get("relax.divide"), [x1, x2])
