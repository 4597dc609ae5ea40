"""`matmul`: numpy matmul semantics (1-d operands promoted then squeezed, batch dims broadcast).

>>> from graphc import relax, tir
>>> b = tir.Var("b", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((b, 1, 3, 4), "float16"))
>>> w = relax.Var("w", relax.TensorStructInfo((5, 4, 6), "float16"))
>>> relax.BlockBuilder().normalize(relax.op.matmul(x, w, out_dtype="float32")).struct_info
R.Tensor((b, 5, 3, 6), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ..expr import Call
from ..struct_info import UNKNOWN_DTYPE, TensorStructInfo, prim_text
from .infer import (
    analyzer_of,
    attr_dtype,
    binary_dtype,
    broadcast_dims,
    op_label,
    provably_different,
    tensor_arg,
)
from .registry import Op, OpPatternKind, register_op
from .te_legalize import call_topi


def _infer_matmul(call, bb):
    a, b = tensor_arg(call, 0, "x1"), tensor_arg(call, 1, "x2")
    out_dtype = attr_dtype(call, "out_dtype")
    if out_dtype == UNKNOWN_DTYPE:
        out_dtype = binary_dtype(call, a, b)
    for sinfo, name in ((a, "x1"), (b, "x2")):
        if sinfo.ndim == 0:
            raise TypeInferenceError(
                f"{op_label(call)} expects {name} to have at least 1 "
                f"dimension, got {sinfo}")
    if a.ndim == -1 or b.ndim == -1:
        return TensorStructInfo(dtype=out_dtype, ndim=-1)
    ndim = max(a.ndim, b.ndim, 2) - (a.ndim == 1) - (b.ndim == 1)
    da, db = a.shape_values, b.shape_values
    if da is None or db is None:
        return TensorStructInfo(dtype=out_dtype, ndim=ndim)
    da = ((1,) + da) if len(da) == 1 else da
    db = (db + (1,)) if len(db) == 1 else db
    analyzer = analyzer_of(bb)
    k1, k2 = da[-1], db[-2]
    if provably_different(k1, k2, analyzer):
        raise TypeInferenceError(
            f"{op_label(call)} expects the reduction dimensions to match: x1 {a} has {_text(k1)} columns "
            f"but x2 {b} has {_text(k2)} rows")
    batch_a, batch_b = TensorStructInfo(da[:-2], a.dtype), TensorStructInfo(db[:-2], b.dtype)
    batch = broadcast_dims(call, batch_a, batch_b, analyzer)
    if batch is None:
        return TensorStructInfo(dtype=out_dtype, ndim=ndim)
    out = list(batch)
    if a.ndim != 1:
        out.append(da[-2])
    if b.ndim != 1:
        out.append(db[-1])
    return TensorStructInfo(tuple(out), out_dtype)


def _text(d) -> str:
    return prim_text(d)


def _out_dtype(call) -> dict:
    dtype = call.attrs.get("out_dtype")
    return {"out_dtype": None if dtype in (None, UNKNOWN_DTYPE) else dtype}


register_op("relax.matmul", 2, _infer_matmul, legalize=call_topi(topi.matmul, "matmul", _out_dtype),
            pattern=OpPatternKind.kOutEWiseFusable,
            attrs={"out_dtype": "result dtype; void (the default) means the operands' dtype"},
            description="Matrix product with numpy matmul semantics.")


def matmul(x1, x2, out_dtype: str | None = None) -> Call:
    """`x1 @ x2` (numpy matmul), accumulating and returning `out_dtype` when given."""
    return Call(Op.get("relax.matmul"), [x1, x2], {"out_dtype": out_dtype or UNKNOWN_DTYPE})
