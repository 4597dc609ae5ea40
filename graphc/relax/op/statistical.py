"""Reductions over axes: sum, mean, max, min, prod, variance, std; argmax and argmin.

`axis` is None (all axes), an int or a list; `keepdims` keeps reduced axes with size 1.
argmax/argmin take one axis (or None: the flattened tensor) and return int64 indices.
Each legalizes to the `topi` reduction of the same name (pattern: CommReduce).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 3, 4), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.sum(x, axis=[1, -1])).struct_info
R.Tensor((n,), dtype="float32")
>>> bb.normalize(relax.op.mean(x, axis=1, keepdims=True)).struct_info
R.Tensor((n, 1, 4), dtype="float32")
>>> bb.normalize(relax.op.argmax(x, axis=0)).struct_info
R.Tensor((3, 4), dtype="int64")
>>> bb.normalize(relax.op.max(x, axis=[3]))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'max' expects axis in [-3, 3) for a 3-d tensor, got 3
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.expr import IntImm
from ..expr import Call, ShapeExpr
from ..struct_info import TensorStructInfo
from .infer import analyzer_of, normalize_axis, op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .te_legalize import register_topi_op

_ATTRS = {"axis": "axes to reduce (None: all)", "keepdims": "keep reduced axes with size 1"}


def _reduced(call, x: TensorStructInfo, axis, keepdims: bool, dtype: str) -> TensorStructInfo:
    if x.ndim == -1:
        return TensorStructInfo(dtype=dtype, ndim=-1 if axis is not None or keepdims else 0)
    axes = range(x.ndim) if axis is None else [normalize_axis(call, int(a), x.ndim, "axis") for a in axis]
    axes = set(axes)
    if len(axes) != (x.ndim if axis is None else len(axis)):
        raise TypeInferenceError(f"{op_label(call)} expects distinct axes, got axis={list(axis)}")
    out_ndim = x.ndim if keepdims else x.ndim - len(axes)
    dims = x.shape_values
    if dims is None:
        return TensorStructInfo(dtype=dtype, ndim=out_ndim, vdevice=x.vdevice)
    one = IntImm("int64", 1)
    out = (
        [one if k in axes else d for k, d in enumerate(dims)]
        if keepdims
        else [d for k, d in enumerate(dims) if k not in axes]
    )
    return TensorStructInfo(tuple(out), dtype, vdevice=x.vdevice)


def _infer_reduce(call, bb):
    x = tensor_arg(call, 0, "x")
    return _reduced(call, x, call.attrs.get("axis"), bool(call.attrs.get("keepdims")), x.dtype)


def _infer_arg(call, bb):
    x = tensor_arg(call, 0, "x")
    axis = call.attrs.get("axis")
    return _reduced(call, x, None if axis is None else [axis], bool(call.attrs.get("keepdims")), "int64")


_REDUCE = ("sum", "mean", "max", "min", "prod", "variance", "std")
for _name in _REDUCE:
    register_topi_op(f"relax.{_name}", 1, _infer_reduce, getattr(topi, _name),
                     pattern=OpPatternKind.kCommReduce, attrs=_ATTRS, description=f"The {_name} over axis.")
for _name in ("argmax", "argmin"):
    register_topi_op(f"relax.{_name}", 1, _infer_arg, getattr(topi, _name), pattern=OpPatternKind.kCommReduce,
                     attrs=_ATTRS,
                     description=f"The int64 index of the {_name[3:]} along axis (None: flattened).")


def _axes(axis):
    if axis is None:
        return None
    return (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)


def _make(name: str):
    op_name = f"relax.{name}"

    def build(x, axis=None, keepdims: bool = False) -> Call:
        return Call(Op.get(op_name), [x], {"axis": _axes(axis), "keepdims": bool(keepdims)})

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"The {name} of `x` over `axis` (None: all axes), keeping them if `keepdims`."
    return build


sum, mean, max, min, prod, variance, std = (_make(n) for n in _REDUCE)  # noqa: A001


def _make_arg(name: str):
    op_name = f"relax.{name}"

    def build(x, axis: int | None = None, keepdims: bool = False) -> Call:
        return Call(
            Op.get(op_name), [x], {"axis": None if axis is None else int(axis), "keepdims": bool(keepdims)}
        )

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"The int64 index of the {name[3:]} of `x` along `axis` (None: flattened)."
    return build


argmax, argmin = _make_arg("argmax"), _make_arg("argmin")

_DYNAMIC_KINDS = ("sum", "prod", "max", "min")


def _infer_dynamic_reduce(call, bb):
    x = tensor_arg(call, 0, "x")
    mask = call.args[1]
    if not isinstance(mask, ShapeExpr):
        raise TypeInferenceError(f"{op_label(call)} expects mask to be a shape (R.shape([...])), "
                                 f"got {mask!r}")
    kind = call.attrs["kind"]
    if kind not in _DYNAMIC_KINDS:
        raise TypeInferenceError(f"{op_label(call)} expects kind in {_DYNAMIC_KINDS}, got {kind!r}")
    if x.ndim != -1 and len(mask.values) != x.ndim:
        raise TypeInferenceError(f"{op_label(call)} expects one mask value per axis of x {x}, got "
                                 f"{len(mask.values)}")
    if x.shape_values is None:
        return TensorStructInfo(dtype=x.dtype, ndim=x.ndim)
    analyzer = analyzer_of(bb)
    dims = tuple(analyzer.simplify(d - m * (d - 1)) for d, m in zip(x.shape_values, mask.values))
    return TensorStructInfo(dims, x.dtype, vdevice=x.vdevice)


def _legalize_dynamic_reduce(bb, call):
    return bb.call_te(topi.dynamic_reduce, call.args[0], call.args[1], kind=call.attrs["kind"],
                      primfunc_name_hint=f"dynamic_{call.attrs['kind']}")


register_op("relax.dynamic_reduce", 2, _infer_dynamic_reduce, legalize=_legalize_dynamic_reduce,
            pattern=OpPatternKind.kCommReduce,
            attrs={"kind": "sum, prod, max or min"},
            description="Reduce x over the axes whose mask value (a run-time 0 or 1) is 1, keeping them "
                        "with size 1.")


def dynamic_reduce(x, mask, kind: str = "sum") -> Call:
    """`kind` of `x` over the axes k with `mask[k] == 1` (0/1 ints or symbolic PrimExprs),
    reduced axes kept with size 1."""
    return Call(Op.get("relax.dynamic_reduce"), [x, ShapeExpr(list(mask))], {"kind": kind})


__all__ = [*_REDUCE, "argmax", "argmin", "dynamic_reduce"]
