"""Helpers shared by struct-info inference rules: argument checks, broadcasting, dtypes.

Every error names the operator, the argument, what was expected and what was found:

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> y = relax.Var("y", relax.TensorStructInfo((4, 3), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.add(x, y))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'add' cannot broadcast x1 ... dimension 0 is 2 in x1 and 4 in x2
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...tir.arith import Analyzer
from ...tir.expr import IntImm, PrimExpr
from ..struct_info import UNKNOWN_DTYPE, TensorStructInfo, canonical_dtype, prim_text


def op_label(call) -> str:
    """The operator's short quoted name used in messages, e.g. `'nn.relu'`."""
    return f"'{call.op.name.removeprefix('relax.')}'"


def analyzer_of(bb) -> Analyzer:
    return bb.analyzer if bb is not None and hasattr(bb, "analyzer") else Analyzer()


def tensor_arg(call, index: int, arg_name: str) -> TensorStructInfo:
    """The struct info of argument `index`, which must be a tensor."""
    sinfo = call.args[index].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        raise TypeInferenceError(
            f"{op_label(call)} expects argument {arg_name} to be a tensor (R.Tensor), got {sinfo}"
        )
    return sinfo


def fail(call, message: str):
    raise TypeInferenceError(f"{op_label(call)} {message}")


def is_const(d, value: int | None = None) -> bool:
    return isinstance(d, IntImm) and (value is None or d.value == value)


def provably_different(a: PrimExpr, b: PrimExpr, analyzer: Analyzer) -> bool:
    """The two dimensions can be shown to differ (constants that differ, or a proof)."""
    if is_const(a) and is_const(b):
        return a.value != b.value
    return analyzer.can_prove(a != b)


def binary_dtype(call, a: TensorStructInfo, b: TensorStructInfo, names=("x1", "x2")) -> str:
    """The common dtype of two operands; unknown if either is unknown; mismatch is an error."""
    if a.is_unknown_dtype or b.is_unknown_dtype:
        return UNKNOWN_DTYPE
    if a.dtype != b.dtype:
        raise TypeInferenceError(
            f"{op_label(call)} expects equal dtypes, got {a.dtype} and {b.dtype}: "
            f"{names[0]} is {a}, {names[1]} is {b}; cast one with relax.op.astype"
        )
    return a.dtype


def broadcast_dims(call, a: TensorStructInfo, b: TensorStructInfo, analyzer: Analyzer,
                   names=("x1", "x2")) -> tuple | None:
    """numpy broadcasting of two known shapes; None when a symbolic pair cannot be decided."""
    da, db = a.shape_values, b.shape_values
    out: list = []
    unknown = False
    for i in range(1, max(len(da), len(db)) + 1):
        x = da[-i] if i <= len(da) else None
        y = db[-i] if i <= len(db) else None
        if y is None or (x is not None and is_const(y, 1)):
            out.append(x)
        elif x is None or is_const(x, 1):
            out.append(y)
        elif x is y or analyzer.can_prove_equal(x, y):
            out.append(x)
        elif provably_different(x, y, analyzer):
            ax, ay = len(da) - i, len(db) - i
            raise TypeInferenceError(
                f"{op_label(call)} cannot broadcast {names[0]} {a} with {names[1]} {b}: "
                f"dimension {ax} is {_dim(x)} in {names[0]} and {_dim(y)} in {names[1]}"
                + ("" if ax == ay else f" (dimension {ay} of {names[1]})")
            )
        else:
            unknown = True  # symbolic dims that may or may not be equal: TVM keeps only the rank
    return None if unknown else tuple(reversed(out))


def _dim(d) -> str:
    return prim_text(d)


def broadcast_sinfo(call, a: TensorStructInfo, b: TensorStructInfo, dtype: str, analyzer: Analyzer,
                    names=("x1", "x2")) -> TensorStructInfo:
    """The result of an elementwise binary op on `a` and `b` with result `dtype`."""
    if a.ndim == -1 or b.ndim == -1:
        return TensorStructInfo(dtype=dtype, ndim=-1)
    ndim = max(a.ndim, b.ndim)
    if a.shape_values is None or b.shape_values is None:
        return TensorStructInfo(dtype=dtype, ndim=ndim)
    dims = broadcast_dims(call, a, b, analyzer, names)
    return TensorStructInfo(dims, dtype) if dims is not None else TensorStructInfo(dtype=dtype, ndim=ndim)


def attr_dtype(call, key: str) -> str:
    return canonical_dtype(call.attrs.get(key))


def normalize_axis(call, axis: int, ndim: int, arg_name: str) -> int:
    """`axis` in [0, ndim), accepting negative axes; out of range is an error."""
    if not -ndim <= axis < ndim:
        raise TypeInferenceError(
            f"{op_label(call)} expects {arg_name} in [{-ndim}, {ndim}) for a {ndim}-d tensor, got {axis}"
        )
    return axis % ndim
