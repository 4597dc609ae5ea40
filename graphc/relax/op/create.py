"""Tensor creation: full/zeros/ones (and their `_like` forms), `arange`, and `tril`/`triu`.

`full` takes its fill value as a 0-d tensor (a Python number becomes `relax.const`);
`arange` takes scalars (symbolic integers allowed); `tril`/`triu` take the diagonal `k`.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.zeros((n, 3), "float32")).struct_info
R.Tensor((n, 3), dtype="float32")
>>> bb.normalize(relax.op.full((2,), 1.5)).struct_info
R.Tensor((2,), dtype="float32")
>>> bb.normalize(relax.op.arange(1, 10, 2)).struct_info
R.Tensor((5,), dtype="int64")
"""

from __future__ import annotations

import math

from ... import topi
from ...errors import TypeInferenceError
from ...tir.arith import Analyzer
from ...tir.expr import IntImm, PrimExpr, floordiv
from ..expr import Call, Expr, PrimValue, ShapeExpr, const
from ..struct_info import UNKNOWN_DTYPE, PrimStructInfo, ShapeStructInfo, TensorStructInfo, canonical_dtype
from .infer import op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .te_legalize import call_topi


def _shape_arg(call) -> ShapeStructInfo:
    shape = call.args[0].struct_info
    if not isinstance(shape, ShapeStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects shape to be a shape (R.Shape), got {shape}")
    return shape


def _tensor_of(shape: ShapeStructInfo, dtype: str) -> TensorStructInfo:
    if shape.values is None:
        return TensorStructInfo(dtype=dtype, ndim=shape.ndim)
    return TensorStructInfo(shape.values, dtype)


def _fill_arg(call, index: int) -> TensorStructInfo:
    fill = tensor_arg(call, index, "fill_value")
    if fill.ndim not in (0, -1):
        raise TypeInferenceError(f"{op_label(call)} expects fill_value to be a 0-d tensor, got {fill}")
    return fill


def _infer_full(call, bb):
    shape, fill = _shape_arg(call), _fill_arg(call, 1)
    dtype = call.attrs.get("dtype", UNKNOWN_DTYPE)
    return _tensor_of(shape, fill.dtype if dtype == UNKNOWN_DTYPE else dtype)


def _infer_fill(call, bb):
    return _tensor_of(_shape_arg(call), call.attrs["dtype"])


def _infer_like(call, bb):
    x = tensor_arg(call, 0, "x")
    if len(call.args) == 2:
        _fill_arg(call, 1)
    dtype = call.attrs.get("dtype", UNKNOWN_DTYPE)
    dtype = x.dtype if dtype == UNKNOWN_DTYPE else dtype
    return (
        TensorStructInfo(x.shape_values, dtype)
        if x.shape_values is not None
        else TensorStructInfo(dtype=dtype, ndim=x.ndim)
    )


def _legalize_full(bb, call):
    dtype = call.struct_info.dtype
    return bb.call_te(topi.full, call.args[0], dtype, call.args[1], primfunc_name_hint="full")


def _legalize_fill(value, name):
    def legalize(bb, call):
        return bb.call_te(topi.full, call.args[0], call.attrs["dtype"], value, primfunc_name_hint=name)

    return legalize


def _legalize_like(value, name):
    def legalize(bb, call):
        fill = call.args[1] if value is None else value
        return bb.call_te(topi.full_like, call.args[0], fill, call.struct_info.dtype, primfunc_name_hint=name)

    return legalize


_DTYPE = {"dtype": "element dtype"}
_FILLS = {  # name: (number of inputs, struct info inference, legalization, description)
    "full": (2, _infer_full, _legalize_full, "A tensor of shape filled with fill_value."),
    "zeros": (1, _infer_fill, _legalize_fill(0, "zeros"), "A tensor of zeros."),
    "ones": (1, _infer_fill, _legalize_fill(1, "ones"), "A tensor of ones."),
    "full_like": (2, _infer_like, _legalize_like(None, "full"), "x's shape filled with fill_value."),
    "zeros_like": (1, _infer_like, _legalize_like(0, "zeros"), "Zeros of x's shape."),
    "ones_like": (1, _infer_like, _legalize_like(1, "ones"), "Ones of x's shape."),
}
for _name, (_inputs, _infer, _legalize, _what) in _FILLS.items():
    register_op(f"relax.{_name}", _inputs, _infer, legalize=_legalize, pattern=OpPatternKind.kElemWise,
                attrs=_DTYPE, description=_what)


def _shape(shape) -> Expr:
    return shape if isinstance(shape, Expr) else ShapeExpr(shape)


def _fill(value, dtype) -> Expr:
    return value if isinstance(value, Expr) else const(value, None if dtype is None else dtype)


def full(shape, fill_value, dtype: str | None = None) -> Call:
    """A tensor of `shape` whose elements are `fill_value` (a 0-d tensor or a number), in `dtype`."""
    return Call(
        Op.get("relax.full"), [_shape(shape), _fill(fill_value, dtype)], {"dtype": canonical_dtype(dtype)}
    )


def zeros(shape, dtype: str) -> Call:
    """A tensor of `shape` of zeros."""
    return Call(Op.get("relax.zeros"), [_shape(shape)], {"dtype": canonical_dtype(dtype)})


def ones(shape, dtype: str) -> Call:
    """A tensor of `shape` of ones."""
    return Call(Op.get("relax.ones"), [_shape(shape)], {"dtype": canonical_dtype(dtype)})


def full_like(x, fill_value, dtype: str | None = None) -> Call:
    """A tensor shaped like `x` filled with `fill_value`, in `dtype` (default: x's)."""
    return Call(Op.get("relax.full_like"), [x, _fill(fill_value, dtype)], {"dtype": canonical_dtype(dtype)})


def zeros_like(x, dtype: str | None = None) -> Call:
    """Zeros shaped like `x`."""
    return Call(Op.get("relax.zeros_like"), [x], {"dtype": canonical_dtype(dtype)})


def ones_like(x, dtype: str | None = None) -> Call:
    """Ones shaped like `x`."""
    return Call(Op.get("relax.ones_like"), [x], {"dtype": canonical_dtype(dtype)})


def _scalar(call, index: int, name: str) -> PrimExpr:
    sinfo = call.args[index].struct_info
    if not isinstance(sinfo, PrimStructInfo) or sinfo.value is None:
        raise TypeInferenceError(
            f"{op_label(call)} expects {name} to be a known scalar (R.Prim), got {sinfo}"
        )
    return sinfo.value


def _infer_arange(call, bb):
    start, end, step = (_scalar(call, i, n) for i, n in enumerate(("start", "end", "step")))
    dtype = call.attrs["dtype"]
    values = [getattr(v, "value", None) for v in (start, end, step)]
    if all(type(v).__name__ in ("IntImm", "FloatImm") for v in (start, end, step)):
        if values[2] == 0:
            raise TypeInferenceError(f"{op_label(call)} expects a non-zero step")
        length = IntImm("int64", max(0, math.ceil((values[1] - values[0]) / values[2])))
        return TensorStructInfo((length,), dtype)
    if not all(v.dtype.startswith("int") for v in (start, end, step)):
        return TensorStructInfo(dtype=dtype, ndim=1)
    length = Analyzer().simplify(floordiv(end - start + step - 1, step))
    return TensorStructInfo((length,), dtype)


def _legalize_arange(bb, call):
    def scalar(v):
        return v.value.value if type(v.value).__name__ in ("IntImm", "FloatImm") else v.value

    start, end, step = (scalar(a) for a in call.args)
    return bb.call_te(topi.arange, start, end, step, call.attrs["dtype"], primfunc_name_hint="arange")


register_op(
    "relax.arange",
    3,
    _infer_arange,
    legalize=_legalize_arange,
    pattern=OpPatternKind.kInjective,
    attrs=_DTYPE,
    description="start, start + step, ... below end.",
)


def arange(start, end=None, step=1, dtype: str | None = None) -> Call:
    """numpy's arange: `start, start + step, ...` below `end` (one argument: `0 .. start`)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = (
            "int64"
            if all(
                isinstance(v, int) or (isinstance(v, PrimExpr) and v.dtype.startswith("int"))
                for v in (start, end, step)
            )
            else "float32"
        )
    args = [v if isinstance(v, PrimValue) else PrimValue(v) for v in (start, end, step)]
    return Call(Op.get("relax.arange"), args, {"dtype": canonical_dtype(dtype)})


def _infer_trilu(call, bb):
    x = tensor_arg(call, 0, "x")
    if x.ndim != -1 and x.ndim < 2:
        raise TypeInferenceError(f"{op_label(call)} expects x to have at least 2 dimensions, got {x}")
    _scalar(call, 1, "k")
    return x


for _name in ("tril", "triu"):
    register_op(
        f"relax.{_name}",
        2,
        _infer_trilu,
        legalize=call_topi(lambda x, k, upper=_name == "triu": topi.trilu(x, k, upper), _name),
        pattern=OpPatternKind.kInjective,
        description=f"Zero the elements {'below' if _name == 'triu' else 'above'} diagonal k.",
    )


def tril(x, k: int = 0) -> Call:
    """`x` with the elements above diagonal `k` (of the last two axes) set to zero."""
    return Call(Op.get("relax.tril"), [x, k if isinstance(k, PrimValue) else PrimValue(k)])


def triu(x, k: int = 0) -> Call:
    """`x` with the elements below diagonal `k` (of the last two axes) set to zero."""
    return Call(Op.get("relax.triu"), [x, k if isinstance(k, PrimValue) else PrimValue(k)])


__all__ = ["arange", "full", "full_like", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]
