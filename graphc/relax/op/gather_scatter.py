"""Indexed reads and writes: `gather_elements`, `gather_nd`, `scatter_elements`, `scatter_nd`, `one_hot`.

Indices are integer tensors; negative indices count from the end of the indexed axis (numpy,
torch and TVM). Gathers and one_hot legalize to TE computes (pattern: injective); scatters
copy `data` and apply `updates` in a TIR kernel (pattern: opaque), combining them by
`reduction`. `one_hot` takes its on/off values as scalars (`R.prim_value`), as TVM does.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 4), "float32"))
>>> i = relax.Var("i", relax.TensorStructInfo((2, 4), "int64"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.gather_elements(x, i, axis=0)).struct_info
R.Tensor((2, 4), dtype="float32")
>>> bb.normalize(relax.op.scatter_elements(x, i, i, reduction="add"))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'scatter_elements' expects updates to have data's dtype float32, ...
>>> on, off = tir.const(1.0, "float32"), tir.const(0.0, "float32")
>>> bb.normalize(relax.op.one_hot(i, on, off, depth=5, axis=1)).struct_info
R.Tensor((2, 5, 4), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...ir.dtype import DataType
from ...tir.expr import IntImm, PrimExpr
from ..expr import Call, PrimValue
from ..struct_info import PrimStructInfo, TensorStructInfo
from .infer import analyzer_of, normalize_axis, op_label, provably_different, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .scan import call_extern
from .te_legalize import register_topi_op


def _indices_arg(call, index: int = 1) -> TensorStructInfo:
    indices = tensor_arg(call, index, "indices")
    if not indices.is_unknown_dtype and not DataType(indices.dtype).is_integer:
        raise TypeInferenceError(f"{op_label(call)} expects indices to be an integer tensor, got {indices}")
    return indices


def _same_dtype(call, data: TensorStructInfo, updates: TensorStructInfo) -> None:
    if not data.is_unknown_dtype and not updates.is_unknown_dtype and data.dtype != updates.dtype:
        raise TypeInferenceError(
            f"{op_label(call)} expects updates to have data's dtype {data.dtype}, got updates {updates} "
            f"and data {data}; cast one with relax.op.astype"
        )


def _like(sinfo: TensorStructInfo, dtype: str, dims=None, ndim=None) -> TensorStructInfo:
    """A tensor of `dims` (or, when unknown, of `ndim` dimensions) with `sinfo`'s device."""
    if dims is not None:
        return TensorStructInfo(tuple(dims), dtype, vdevice=sinfo.vdevice)
    return TensorStructInfo(dtype=dtype, ndim=-1 if ndim is None else ndim, vdevice=sinfo.vdevice)


def _provably_larger(a: PrimExpr, b: PrimExpr, analyzer) -> bool:
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value > b.value
    return analyzer.can_prove(a > b)


# -- gather_elements ---------------------------------------------------------------------------


def _infer_gather_elements(call, bb):
    data, indices = tensor_arg(call, 0, "data"), _indices_arg(call)
    if data.ndim == -1 or indices.ndim == -1:
        return _like(data, data.dtype, ndim=max(data.ndim, indices.ndim))
    axis = normalize_axis(call, call.attrs["axis"], data.ndim, "axis")
    if data.ndim != indices.ndim:
        raise TypeInferenceError(
            f"{op_label(call)} expects data and indices of one rank, got data {data} and indices {indices}"
        )
    if data.shape_values is not None and indices.shape_values is not None:
        analyzer = analyzer_of(bb)
        for k, (d, i) in enumerate(zip(data.shape_values, indices.shape_values)):
            if k != axis and _provably_larger(i, d, analyzer):
                raise TypeInferenceError(
                    f"{op_label(call)} expects indices no larger than data on every axis but {axis}, got "
                    f"indices {indices} and data {data} (dimension {k})"
                )
    return _like(data, data.dtype, indices.shape_values, indices.ndim)


register_topi_op("relax.gather_elements", 2, _infer_gather_elements, topi.gather_elements,
                 pattern=OpPatternKind.kInjective, attrs={"axis": "the axis indexed"},
                 description="out[i] = data[i with i[axis] = indices[i]] "
                             "(ONNX GatherElements, torch.gather).")


def gather_elements(data, indices, axis: int = 0) -> Call:
    """`out[i] = data[i with i[axis] replaced by indices[i]]`, shaped like `indices`."""
    return Call(Op.get("relax.gather_elements"), [data, indices], {"axis": int(axis)})


# -- gather_nd ---------------------------------------------------------------------------------


def _infer_gather_nd(call, bb):
    data, indices = tensor_arg(call, 0, "data"), _indices_arg(call)
    batch_dims = call.attrs["batch_dims"]
    if batch_dims < 0:
        raise TypeInferenceError(f"{op_label(call)} expects batch_dims >= 0, got {batch_dims}")
    if data.ndim == -1 or indices.ndim == -1:
        return _like(data, data.dtype)
    if indices.ndim < 1 or batch_dims > indices.ndim - 1 or batch_dims > data.ndim:
        raise TypeInferenceError(
            f"{op_label(call)} expects batch_dims ({batch_dims}) at most data's rank and below indices' "
            f"rank, got data {data} and indices {indices}"
        )
    shape = indices.shape_values
    if shape is None or not isinstance(shape[-1], IntImm):
        return _like(data, data.dtype)
    depth = shape[-1].value
    if depth > data.ndim - batch_dims:
        raise TypeInferenceError(
            f"{op_label(call)} expects the last dimension of indices ({depth}) to be at most data's rank "
            f"minus batch_dims ({data.ndim - batch_dims}), got data {data} and indices {indices}"
        )
    ndim = indices.ndim - 1 + data.ndim - batch_dims - depth
    if data.shape_values is None:
        return _like(data, data.dtype, ndim=ndim)
    analyzer = analyzer_of(bb)
    for k in range(batch_dims):
        if provably_different(data.shape_values[k], shape[k], analyzer):
            raise TypeInferenceError(
                f"{op_label(call)} expects data and indices to agree on the {batch_dims} batch dimensions, "
                f"got data {data} and indices {indices}"
            )
    return _like(data, data.dtype, tuple(shape[:-1]) + tuple(data.shape_values[batch_dims + depth :]))


register_topi_op("relax.gather_nd", 2, _infer_gather_nd, topi.gather_nd, pattern=OpPatternKind.kInjective,
                 attrs={"batch_dims": "leading axes shared by data and indices"},
                 description="Gather slices of data at the positions in the last axis of indices "
                             "(ONNX GatherND).")


def gather_nd(data, indices, batch_dims: int = 0) -> Call:
    """Slices of `data` at the positions held in the last axis of `indices` (ONNX's GatherND)."""
    return Call(Op.get("relax.gather_nd"), [data, indices], {"batch_dims": int(batch_dims)})


# -- scatter_elements / scatter_nd ----------------------------------------------------------------


def _reduction(call) -> str:
    op = call.op.name.removeprefix("relax.")
    reduction = call.attrs["reduction"]
    choices = topi.SCATTER_REDUCTIONS[op]
    if reduction not in choices:
        raise TypeInferenceError(
            f"{op_label(call)} expects reduction to be one of {', '.join(choices)}, got {reduction!r}"
        )
    return reduction


def _scatter_args(call) -> tuple[TensorStructInfo, TensorStructInfo, TensorStructInfo]:
    """data, indices and updates of a scatter, checked for kind, dtype and reduction."""
    data, indices = tensor_arg(call, 0, "data"), _indices_arg(call)
    updates = tensor_arg(call, 2, "updates")
    _reduction(call)
    _same_dtype(call, data, updates)
    return data, indices, updates


def _infer_scatter_elements(call, bb):
    data, indices, updates = _scatter_args(call)
    if data.ndim == -1:
        return data
    axis = normalize_axis(call, call.attrs["axis"], data.ndim, "axis")
    for name, sinfo in (("indices", indices), ("updates", updates)):
        if sinfo.ndim not in (-1, data.ndim):
            raise TypeInferenceError(
                f"{op_label(call)} expects {name} to have data's rank {data.ndim}, got {name} {sinfo} "
                f"and data {data}"
            )
    analyzer = analyzer_of(bb)
    if indices.shape_values is not None and updates.shape_values is not None:
        pairs = zip(indices.shape_values, updates.shape_values)
        if any(provably_different(a, b, analyzer) for a, b in pairs):
            raise TypeInferenceError(
                f"{op_label(call)} expects indices and updates of one shape, got indices {indices} and "
                f"updates {updates}"
            )
    if indices.shape_values is not None and data.shape_values is not None:
        for k, (i, d) in enumerate(zip(indices.shape_values, data.shape_values)):
            if k != axis and _provably_larger(i, d, analyzer):
                raise TypeInferenceError(
                    f"{op_label(call)} expects indices no larger than data on every axis but {axis}, got "
                    f"indices {indices} and data {data} (dimension {k})"
                )
    return data


def _infer_scatter_nd(call, bb):
    data, indices, updates = _scatter_args(call)
    if indices.ndim == 0:
        raise TypeInferenceError(
            f"{op_label(call)} expects indices to have at least one dimension, got {indices}"
        )
    shape = indices.shape_values
    if data.ndim == -1 or shape is None:
        return data
    if not isinstance(shape[-1], IntImm):
        raise TypeInferenceError(
            f"{op_label(call)} expects the last dimension of indices to be a constant, got indices {indices}"
        )
    depth = shape[-1].value
    if depth > data.ndim:
        raise TypeInferenceError(
            f"{op_label(call)} expects the last dimension of indices ({depth}) to be at most data's rank, "
            f"got indices {indices} and data {data}"
        )
    expected = None if data.shape_values is None else tuple(shape[:-1]) + tuple(data.shape_values[depth:])
    rank = indices.ndim - 1 + data.ndim - depth
    analyzer = analyzer_of(bb)
    bad = updates.ndim not in (-1, rank)
    if not bad and expected is not None and updates.shape_values is not None:
        bad = any(provably_different(a, b, analyzer) for a, b in zip(expected, updates.shape_values))
    if bad:
        want = _like(updates, updates.dtype, expected, rank)
        raise TypeInferenceError(
            f"{op_label(call)} expects updates shaped indices.shape[:-1] + data.shape[{depth}:], that is "
            f"{want}, got updates {updates} (data {data}, indices {indices})"
        )
    return data


def _legalize_scatter(kernel, name, *keys):
    def legalize(bb, call):
        return call_extern(bb, kernel, call.args, name, **{k: call.attrs[k] for k in keys})

    legalize.__name__ = f"legalize_{name}"
    return legalize


register_op(
    "relax.scatter_elements",
    3,
    _infer_scatter_elements,
    legalize=_legalize_scatter(topi.scatter_elements, "scatter_elements", "axis", "reduction"),
    pattern=OpPatternKind.kOpaque,
    attrs={"axis": "the axis indexed", "reduction": "update, add, mul, mean, max or min"},
    description="Copy data, then out[i with i[axis] = indices[i]] (op)= updates[i] (ONNX ScatterElements).",
)
register_op(
    "relax.scatter_nd",
    3,
    _infer_scatter_nd,
    legalize=_legalize_scatter(topi.scatter_nd, "scatter_nd", "reduction"),
    pattern=OpPatternKind.kOpaque,
    attrs={"reduction": "update, add, mul, max or min"},
    description="Copy data, then out[indices[p]] (op)= updates[p] (ONNX ScatterND).",
)


def scatter_elements(data, indices, updates, axis: int = 0, reduction: str = "update") -> Call:
    """A copy of `data` with `updates[i]` combined into element `i with i[axis] = indices[i]`.

    `reduction`: update (the last update wins), add, mul, mean (of the element and all its
    updates, as torch's scatter_reduce with include_self), max or min.
    """
    return Call(
        Op.get("relax.scatter_elements"),
        [data, indices, updates],
        {"axis": int(axis), "reduction": str(reduction)},
    )


def scatter_nd(data, indices, updates, reduction: str = "update") -> Call:
    """A copy of `data` with `updates[p]` combined into `data[indices[p]]` (ONNX's ScatterND).

    `reduction`: update (the last update wins), add, mul, max or min.
    """
    return Call(Op.get("relax.scatter_nd"), [data, indices, updates], {"reduction": str(reduction)})


# -- one_hot -----------------------------------------------------------------------------------


def _scalar_arg(call, index: int, name: str) -> PrimStructInfo:
    sinfo = call.args[index].struct_info
    if not isinstance(sinfo, PrimStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects {name} to be a scalar (R.Prim), got {sinfo}")
    return sinfo


def _infer_one_hot(call, bb):
    indices = _indices_arg(call, 0)
    on, off = _scalar_arg(call, 1, "on_value"), _scalar_arg(call, 2, "off_value")
    if on.dtype != off.dtype:
        raise TypeInferenceError(
            f"{op_label(call)} expects on_value and off_value of one dtype, got {on.dtype} ({on}) and "
            f"{off.dtype} ({off})"
        )
    depth, axis = call.attrs["depth"], call.attrs["axis"]
    if depth <= 0:
        raise TypeInferenceError(f"{op_label(call)} expects a positive depth, got {depth}")
    if indices.ndim == -1:
        return _like(indices, on.dtype)
    axis = normalize_axis(call, axis, indices.ndim + 1, "axis")
    if indices.shape_values is None:
        return _like(indices, on.dtype, ndim=indices.ndim + 1)
    dims = list(indices.shape_values)
    dims.insert(axis, IntImm("int64", depth))
    return _like(indices, on.dtype, dims)


register_topi_op("relax.one_hot", 3, _infer_one_hot, topi.one_hot, pattern=OpPatternKind.kInjective,
                 attrs={"depth": "length of the new axis", "axis": "position of the new axis"},
                 description="on_value where a new axis equals indices, else off_value.")


def one_hot(indices, on_value, off_value, depth: int, axis: int = -1) -> Call:
    """A new axis `axis` of length `depth` holding `on_value` where it equals `indices`, else
    `off_value` (scalars: PrimValues, PrimExprs or numbers). Indices outside [0, depth) match
    nothing."""

    def scalar(v):
        return v if isinstance(v, PrimValue) else PrimValue(v)

    return Call(
        Op.get("relax.one_hot"),
        [indices, scalar(on_value), scalar(off_value)],
        {"depth": int(depth), "axis": int(axis)},
    )


__all__ = ["gather_elements", "gather_nd", "one_hot", "scatter_elements", "scatter_nd"]
