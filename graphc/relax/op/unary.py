"""Elementwise unary operators: math, rounding, predicates, logical/bitwise not, clip.

Struct info follows TVM: the result has the argument's shape; transcendental functions
require a float dtype; `isnan`/`isinf`/`isfinite`/`logical_not` return bool. Each op
legalizes to the matching `topi` compute in a PrimFunc named `tir_<op>` (TVM's names).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.exp(x)).struct_info
R.Tensor((n, 3), dtype="float32")
>>> bb.normalize(relax.op.isnan(x)).struct_info
R.Tensor((n, 3), dtype="bool")
>>> i = relax.Var("i", relax.TensorStructInfo((3,), "int32"))
>>> bb.normalize(relax.op.exp(i))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'exp' requires x to have a float dtype, got R.Tensor((3,), dtype="int32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ..expr import Call, PrimValue
from ..struct_info import PrimStructInfo, TensorStructInfo
from .infer import op_label, tensor_arg
from .registry import Op, OpPatternKind
from .te_legalize import register_topi_op


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _with_dtype(sinfo: TensorStructInfo, dtype: str) -> TensorStructInfo:
    if sinfo.shape_values is not None:
        return TensorStructInfo(sinfo.shape_values, dtype, vdevice=sinfo.vdevice)
    return TensorStructInfo(dtype=dtype, ndim=sinfo.ndim, vdevice=sinfo.vdevice)


def _infer(kind: str):
    def infer(call, bb):
        x = tensor_arg(call, 0, "x")
        if x.is_unknown_dtype:
            return _with_dtype(x, "bool") if kind == "bool" else x
        if kind == "float" and not _is_float(x.dtype):
            raise TypeInferenceError(f"{op_label(call)} requires x to have a float dtype, got {x}")
        if kind == "int" and not x.dtype.startswith(("int", "uint", "bool")):
            raise TypeInferenceError(f"{op_label(call)} requires x to have an integer dtype, got {x}")
        return _with_dtype(x, "bool") if kind == "bool" else x

    return infer


_UNARY = {  # name: (result kind, topi compute)
    "abs": ("same", topi.abs),
    "negative": ("same", topi.negative),
    "exp": ("float", topi.exp),
    "log": ("float", topi.log),
    "sqrt": ("float", topi.sqrt),
    "rsqrt": ("float", topi.rsqrt),
    "sin": ("float", topi.sin),
    "cos": ("float", topi.cos),
    "tan": ("float", topi.tan),
    "tanh": ("float", topi.tanh),
    "sigmoid": ("float", topi.sigmoid),
    "erf": ("float", topi.erf),
    "asin": ("float", topi.asin),
    "acos": ("float", topi.acos),
    "atan": ("float", topi.atan),
    "sinh": ("float", topi.sinh),
    "cosh": ("float", topi.cosh),
    "asinh": ("float", topi.asinh),
    "acosh": ("float", topi.acosh),
    "atanh": ("float", topi.atanh),
    "trunc": ("same", topi.trunc),
    "floor": ("same", topi.floor),
    "ceil": ("same", topi.ceil),
    "round": ("same", topi.round),
    "sign": ("same", topi.sign),
    "square": ("same", topi.square),
    "isnan": ("bool", topi.isnan),
    "isinf": ("bool", topi.isinf),
    "isfinite": ("bool", topi.isfinite),
    "logical_not": ("bool", topi.logical_not),
    "bitwise_not": ("int", topi.bitwise_not),
}


def _make(name: str):
    op_name = f"relax.{name}"

    def build(x) -> Call:
        return Call(Op.get(op_name), [x])

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Elementwise `{name}` of tensor `x`."
    return build


# Each operator's builder has the operator's name (TVM's names: `abs` and `round` shadow the
# Python builtins here, as they do in TVM's relax.op).
for _name, (_kind, _fn) in _UNARY.items():
    register_topi_op(f"relax.{_name}", 1, _infer(_kind), _fn, prim_name=f"tir_{_name}",
                     pattern=OpPatternKind.kElemWise, description=f"Elementwise {_name}.",
                     float_only=_kind == "float")
    globals()[_name] = _make(_name)


def _infer_clip(call, bb):
    x = tensor_arg(call, 0, "x")
    for index, name in ((1, "min"), (2, "max")):
        if not isinstance(call.args[index].struct_info, PrimStructInfo):
            raise TypeInferenceError(
                f"{op_label(call)} expects {name} to be a scalar (R.Prim), got {call.args[index].struct_info}"
            )
    return x


register_topi_op("relax.clip", 3, _infer_clip, topi.clip, prim_name="tir_clip",
                 pattern=OpPatternKind.kElemWise, description="Clamp x to [min, max] elementwise.")


def clip(x, min, max) -> Call:  # noqa: A002 - TVM's names
    """`x` clamped to `[min, max]` (scalars: Python numbers or PrimValues)."""
    lo = min if isinstance(min, PrimValue) else PrimValue(min)
    hi = max if isinstance(max, PrimValue) else PrimValue(max)
    return Call(Op.get("relax.clip"), [x, lo, hi])


__all__ = [*_UNARY, "clip"]
