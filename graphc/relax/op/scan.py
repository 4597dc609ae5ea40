"""Scans: `cumsum` and `cumprod` along an axis (None: of the flattened tensor), and `call_extern`.

`dtype` sets the accumulation and result dtype (default: the input's); `exclusive` shifts the
running result by one, starting from 0 (or 1). Both legalize to TIR kernels (`topi.cumsum`),
through `call_extern`, the `call_te` of kernels that TE cannot express; pattern: opaque.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 3), "int32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.cumsum(x, axis=1, dtype="int64")).struct_info
R.Tensor((n, 3), dtype="int64")
>>> bb.normalize(relax.op.cumprod(x)).struct_info
R.Tensor((n * 3,), dtype="int32")
"""

from __future__ import annotations

from ... import te
from ...errors import TypeInferenceError
from ...tir.expr import IntImm
from ...topi import scan as _kernels
from ..expr import Call, Constant, Tuple
from ..expr import Var as RelaxVar
from ..struct_info import UNKNOWN_DTYPE, TensorStructInfo, canonical_dtype
from .base import call_tir
from .infer import normalize_axis, tensor_arg
from .registry import Op, OpPatternKind, register_op


def call_extern(bb, fn, args, name: str, **kwargs) -> Call:
    """`call_tir` of the PrimFunc `fn(*placeholders, **kwargs)` (a `topi.scan.extern_func`).

    Like `bb.call_te`, but `fn` returns the PrimFunc itself: its parameters are the inputs,
    the outputs (whose shapes give `out_sinfo`), then the symbolic sizes passed as scalars.
    """
    placeholders = []
    for arg in args:
        sinfo = arg.struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None or sinfo.is_unknown_dtype:
            raise TypeInferenceError(
                f"call_extern: argument {arg!r} needs a known shape and dtype, got {sinfo}"
            )
        label = arg.name_hint if isinstance(arg, RelaxVar) else "const" if isinstance(arg, Constant) else \
            "rxplaceholder"
        placeholders.append(te.placeholder(sinfo.shape_values, sinfo.dtype, name=label))
    func = fn(*placeholders, **kwargs)
    scalars = [p for p in func.params if p not in func.buffer_map]
    outputs = [func.buffer_map[p] for p in func.params[len(args) :] if p in func.buffer_map]
    out_sinfo = [TensorStructInfo(tuple(_int64(d) for d in b.shape), b.dtype) for b in outputs]
    gvar = bb.add_func(func.without_attr("global_symbol"), name)
    return call_tir(gvar, Tuple(list(args)), out_sinfo, tir_vars=scalars or None)


def _int64(d):
    return IntImm("int64", d.value) if isinstance(d, IntImm) else d


def _infer_scan(call, bb):
    data = tensor_arg(call, 0, "data")
    axis, dtype = call.attrs.get("axis"), call.attrs.get("dtype", UNKNOWN_DTYPE)
    dtype = data.dtype if dtype == UNKNOWN_DTYPE else dtype
    if axis is None:
        if data.shape_values is None:
            return TensorStructInfo(dtype=dtype, ndim=1, vdevice=data.vdevice)
        return TensorStructInfo((_kernels.num_elements(data.shape_values),), dtype, vdevice=data.vdevice)
    if data.ndim != -1:
        normalize_axis(call, axis, data.ndim, "axis")
    if data.shape_values is None:
        return TensorStructInfo(dtype=dtype, ndim=data.ndim, vdevice=data.vdevice)
    return TensorStructInfo(data.shape_values, dtype, vdevice=data.vdevice)


def _legalize_scan(fn, name):
    def legalize(bb, call):
        a = call.attrs
        dtype = None if a.get("dtype", UNKNOWN_DTYPE) == UNKNOWN_DTYPE else a["dtype"]
        return call_extern(
            bb, fn, call.args, name, axis=a.get("axis"), dtype=dtype, exclusive=bool(a.get("exclusive"))
        )

    legalize.__name__ = f"legalize_{name}"
    return legalize


_ATTRS = {
    "axis": "the scanned axis (None: the flattened tensor)",
    "dtype": "accumulation and result dtype (void: the input's)",
    "exclusive": "element k combines the elements before k only",
}
for _name in ("cumsum", "cumprod"):
    register_op(
        f"relax.{_name}",
        1,
        _infer_scan,
        legalize=_legalize_scan(getattr(_kernels, _name), _name),
        pattern=OpPatternKind.kOpaque,
        attrs=_ATTRS,
        description=f"Running {'sums' if _name == 'cumsum' else 'products'} along an axis.",
    )


def _scan_call(name: str, data, axis, dtype, exclusive) -> Call:
    if exclusive is not None and not isinstance(exclusive, bool | int):
        raise TypeInferenceError(f"'{name}' expects exclusive to be a bool, got {exclusive!r}")
    attrs = {
        "axis": None if axis is None else int(axis),
        "dtype": canonical_dtype(dtype),
        "exclusive": bool(exclusive),
    }
    return Call(Op.get(f"relax.{name}"), [data], attrs)


def cumsum(data, axis: int | None = None, dtype: str | None = None, exclusive: bool = False) -> Call:
    """Running sums of `data` along `axis` (None: flattened), in `dtype` (default: data's)."""
    return _scan_call("cumsum", data, axis, dtype, exclusive)


def cumprod(data, axis: int | None = None, dtype: str | None = None, exclusive: bool = False) -> Call:
    """Running products of `data` along `axis` (None: flattened), in `dtype` (default: data's)."""
    return _scan_call("cumprod", data, axis, dtype, exclusive)


__all__ = ["cumprod", "cumsum"]
