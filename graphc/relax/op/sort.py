"""Sorting: `sort`, `argsort` and `topk` along an axis (stable; NaN sorts above every number).

`argsort` and `topk` return integer positions in `dtype` (int32 by default, as in TVM); topk's
`ret_type` "both" returns the tuple (values, indices). Each legalizes to a merge-sort TIR
kernel from `topi.sort` (pattern: opaque).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 8), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.argsort(x, axis=0, descending=True)).struct_info
R.Tensor((n, 8), dtype="int32")
>>> bb.normalize(relax.op.topk(x, k=3)).struct_info
R.Tuple(R.Tensor((n, 3), dtype="float32"), R.Tensor((n, 3), dtype="int32"))
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.dtype import DataType
from ...topi.sort import argsort as _argsort_kernel
from ...topi.sort import sort as _sort_kernel
from ...topi.sort import topk as _topk_kernel
from ...topi.sort import topk_extent
from ..expr import Call
from ..struct_info import UNKNOWN_DTYPE, TensorStructInfo, TupleStructInfo, canonical_dtype
from .infer import normalize_axis, op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .scan import call_extern

_RET_TYPES = ("both", "values", "indices")


def _with_dtype(data: TensorStructInfo, dtype: str, dims=None) -> TensorStructInfo:
    dims = data.shape_values if dims is None else dims
    if dims is None:
        return TensorStructInfo(dtype=dtype, ndim=data.ndim, vdevice=data.vdevice)
    return TensorStructInfo(tuple(dims), dtype, vdevice=data.vdevice)


def _index_dtype(call) -> str:
    dtype = call.attrs.get("dtype", "int32")
    if dtype != UNKNOWN_DTYPE and not DataType(dtype).is_integer:
        raise TypeInferenceError(f"{op_label(call)} expects dtype to be an integer dtype, got {dtype}")
    return "int32" if dtype == UNKNOWN_DTYPE else dtype


def _axis(call, data: TensorStructInfo) -> int | None:
    if data.ndim == -1:
        return None
    if data.ndim == 0:
        raise TypeInferenceError(f"{op_label(call)} expects data to have at least one dimension, got {data}")
    return normalize_axis(call, call.attrs.get("axis", -1), data.ndim, "axis")


def _infer_sort(call, bb):
    data = tensor_arg(call, 0, "data")
    _axis(call, data)
    return data


def _infer_argsort(call, bb):
    data = tensor_arg(call, 0, "data")
    _axis(call, data)
    return _with_dtype(data, _index_dtype(call))


def _infer_topk(call, bb):
    data = tensor_arg(call, 0, "data")
    ret_type = call.attrs.get("ret_type", "both")
    if ret_type not in _RET_TYPES:
        raise TypeInferenceError(
            f"{op_label(call)} expects ret_type to be 'both', 'values' or 'indices', got {ret_type!r}"
        )
    axis, index_dtype = _axis(call, data), _index_dtype(call)
    dims = None
    if data.shape_values is not None:
        dims = list(data.shape_values)
        dims[axis] = topk_extent(dims[axis], int(call.attrs.get("k", 1)))
    values, indices = _with_dtype(data, data.dtype, dims), _with_dtype(data, index_dtype, dims)
    if ret_type == "both":
        return TupleStructInfo([values, indices])
    return values if ret_type == "values" else indices


def _legalize_sort(bb, call):
    a = call.attrs
    return call_extern(bb, _sort_kernel, call.args, "sort", axis=a["axis"], descending=a["descending"])


def _legalize_argsort(bb, call):
    a = call.attrs
    return call_extern(
        bb, _argsort_kernel, call.args, "argsort", axis=a["axis"], descending=a["descending"],
        dtype=_index_dtype(call),
    )  # fmt: skip


def _legalize_topk(bb, call):
    a = call.attrs
    return call_extern(
        bb, _topk_kernel, call.args, "topk", k=a["k"], axis=a["axis"], ret_type=a["ret_type"],
        largest=a["largest"], dtype=_index_dtype(call),
    )  # fmt: skip


_AXIS = {"axis": "the sorted axis", "descending": "largest first"}
register_op(
    "relax.sort",
    1,
    _infer_sort,
    legalize=_legalize_sort,
    pattern=OpPatternKind.kOpaque,
    attrs=_AXIS,
    description="Sort along an axis (stable).",
)
register_op(
    "relax.argsort",
    1,
    _infer_argsort,
    legalize=_legalize_argsort,
    pattern=OpPatternKind.kOpaque,
    attrs={**_AXIS, "dtype": "dtype of the positions"},
    description="The positions that sort the data along an axis (stable).",
)
register_op(
    "relax.topk",
    1,
    _infer_topk,
    legalize=_legalize_topk,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "k": "how many elements (< 1: all)",
        "axis": "the searched axis",
        "ret_type": "both, values or indices",
        "largest": "the largest (else the smallest) elements",
        "dtype": "dtype of the positions",
    },
    description="The k largest or smallest elements along an axis, sorted, and their positions.",
)


def sort(data, axis: int = -1, descending: bool = False) -> Call:
    """`data` sorted along `axis`, ascending unless `descending` (stable; NaN counts as largest)."""
    return Call(Op.get("relax.sort"), [data], {"axis": int(axis), "descending": bool(descending)})


def argsort(data, axis: int = -1, descending: bool = False, dtype: str = "int32") -> Call:
    """The positions along `axis` that sort `data` (stable), as `dtype` integers."""
    attrs = {"axis": int(axis), "descending": bool(descending), "dtype": canonical_dtype(dtype)}
    return Call(Op.get("relax.argsort"), [data], attrs)


def topk(
    data, k: int = 1, axis: int = -1, ret_type: str = "both", largest: bool = True, dtype: str = "int32"
) -> Call:
    """The `k` largest (or smallest, `largest=False`) elements of `data` along `axis`, sorted.

    `ret_type` "both" gives the tuple (values, indices); "values" or "indices" just one.
    """
    attrs = {
        "k": int(k),
        "axis": int(axis),
        "ret_type": str(ret_type),
        "largest": bool(largest),
        "dtype": canonical_dtype(dtype),
    }
    return Call(Op.get("relax.topk"), [data], attrs)


__all__ = ["argsort", "sort", "topk"]
