"""`astype`: convert a tensor's elements to another dtype (legalized to `topi.cast`).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.astype(x, "int32")).struct_info
R.Tensor((2, 3), dtype="int32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ..expr import Call
from ..struct_info import UNKNOWN_DTYPE, TensorStructInfo, canonical_dtype
from .infer import op_label, tensor_arg
from .registry import Op, OpPatternKind
from .te_legalize import register_topi_op


def _infer_astype(call, bb):
    x = tensor_arg(call, 0, "x")
    dtype = call.attrs["dtype"]
    if dtype == UNKNOWN_DTYPE:
        raise TypeInferenceError(f"{op_label(call)} expects a target dtype, got none")
    if x.shape_values is not None:
        return TensorStructInfo(x.shape_values, dtype, vdevice=x.vdevice)
    return TensorStructInfo(dtype=dtype, ndim=x.ndim, vdevice=x.vdevice)


register_topi_op("relax.astype", 1, _infer_astype, topi.cast, prim_name="cast",
                 pattern=OpPatternKind.kElemWise, attrs={"dtype": "the target dtype"},
                 description="Convert elements to dtype.")


def astype(x, dtype: str) -> Call:
    """`x` with its elements converted to `dtype`."""
    return Call(Op.get("relax.astype"), [x], {"dtype": canonical_dtype(dtype)})


__all__ = ["astype"]
