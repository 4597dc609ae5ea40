"""`where(condition, x1, x2)`: pick elementwise from `x1` where the bool `condition` holds, else `x2`.

All three broadcast together; `x1` and `x2` need the same dtype (TVM's rule).

>>> from graphc import relax
>>> c = relax.Var("c", relax.TensorStructInfo((2, 1), "bool"))
>>> x = relax.Var("x", relax.TensorStructInfo((3,), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.where(c, x, x)).struct_info
R.Tensor((2, 3), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ..expr import Call
from ..struct_info import TensorStructInfo
from .infer import analyzer_of, binary_dtype, broadcast_sinfo, op_label, tensor_arg
from .registry import Op, OpPatternKind
from .te_legalize import register_topi_op


def _infer_where(call, bb):
    cond = tensor_arg(call, 0, "condition")
    a, b = tensor_arg(call, 1, "x1"), tensor_arg(call, 2, "x2")
    if not cond.is_unknown_dtype and cond.dtype != "bool":
        raise TypeInferenceError(f"{op_label(call)} expects condition to be a bool tensor, got {cond}")
    dtype = binary_dtype(call, a, b)
    analyzer = analyzer_of(bb)
    values = broadcast_sinfo(call, a, b, dtype, analyzer)
    cond = (
        TensorStructInfo(cond.shape_values, dtype)
        if cond.shape_values is not None
        else TensorStructInfo(dtype=dtype, ndim=cond.ndim)
    )
    return broadcast_sinfo(call, cond, values, dtype, analyzer, names=("condition", "x1/x2"))


register_topi_op("relax.where", 3, _infer_where, topi.where, pattern=OpPatternKind.kBroadcast,
                 description="Select from x1 where condition, else from x2.")


def where(condition, x1, x2) -> Call:
    """`x1` where `condition` else `x2`, broadcasting all three."""
    return Call(Op.get("relax.where"), [condition, x1, x2])


__all__ = ["where"]
