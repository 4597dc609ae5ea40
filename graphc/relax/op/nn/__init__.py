"""Neural-network operators (`relax.op.nn`): activations so far.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.nn.relu(x)).struct_info
R.Tensor((2, 3), dtype="float32")
"""

from __future__ import annotations

from ...expr import Call
from ..infer import tensor_arg
from ..registry import Op, OpPatternKind, register_op


def _infer_unary(call, bb):
    return tensor_arg(call, 0, "data")


register_op("relax.nn.relu", 1, _infer_unary, pattern=OpPatternKind.kElemWise,
            description="max(data, 0) elementwise.")


def relu(data) -> Call:
    """`max(data, 0)` elementwise."""
    return Call(Op.get("relax.nn.relu"), [data])


__all__ = ["relu"]
