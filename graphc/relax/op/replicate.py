"""Reordering and replicating elements: `flip` (reverse an axis), `tile` and `repeat` (numpy's).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.tile(x, (2, 1, 2))).struct_info
R.Tensor((2, n, 6), dtype="float32")
>>> bb.normalize(relax.op.repeat(x, 2, axis=0)).struct_info
R.Tensor((n * 2, 3), dtype="float32")
>>> bb.normalize(relax.op.repeat(x, 2)).struct_info
R.Tensor((n * 6,), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.expr import IntImm
from ..expr import Call
from ..struct_info import TensorStructInfo
from .infer import analyzer_of, normalize_axis, op_label, tensor_arg
from .registry import Op, OpPatternKind
from .te_legalize import register_topi_op


def _infer_flip(call, bb):
    data = tensor_arg(call, 0, "data")
    if data.ndim != -1:
        normalize_axis(call, call.attrs["axis"], data.ndim, "axis")
    return data


def _infer_tile(call, bb):
    data = tensor_arg(call, 0, "data")
    reps = call.attrs["repeats"]
    if any(r < 0 for r in reps):
        raise TypeInferenceError(f"{op_label(call)} expects non-negative repeats, got {list(reps)}")
    if data.ndim == -1:
        return TensorStructInfo(dtype=data.dtype, ndim=-1)
    ndim = max(data.ndim, len(reps))
    if data.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=ndim)
    dims = [IntImm("int64", 1)] * (ndim - data.ndim) + list(data.shape_values)
    reps = [1] * (ndim - len(reps)) + list(reps)
    analyzer = analyzer_of(bb)
    return TensorStructInfo(tuple(analyzer.simplify(d * r) for d, r in zip(dims, reps)), data.dtype)


def _infer_repeat(call, bb):
    data = tensor_arg(call, 0, "data")
    repeats, axis = call.attrs["repeats"], call.attrs.get("axis")
    if repeats < 0:
        raise TypeInferenceError(f"{op_label(call)} expects non-negative repeats, got {repeats}")
    if data.ndim == -1:
        return TensorStructInfo(dtype=data.dtype, ndim=1 if axis is None else -1)
    if axis is not None:
        axis = normalize_axis(call, axis, data.ndim, "axis")
    if data.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=1 if axis is None else data.ndim)
    analyzer = analyzer_of(bb)
    if axis is None:
        total = IntImm("int64", repeats)
        for d in data.shape_values:
            total = total * d
        return TensorStructInfo((analyzer.simplify(total),), data.dtype)
    dims = list(data.shape_values)
    dims[axis] = analyzer.simplify(dims[axis] * repeats)
    return TensorStructInfo(tuple(dims), data.dtype)


register_topi_op("relax.flip", 1, _infer_flip, topi.flip, pattern=OpPatternKind.kInjective,
                 attrs={"axis": "the axis reversed"},
                 description="Reverse the order of elements along an axis.")
register_topi_op("relax.tile", 1, _infer_tile, topi.tile, pattern=OpPatternKind.kInjective,
                 attrs={"repeats": "copies along each dimension"}, rename={"repeats": "reps"},
                 description="Repeat the whole tensor along each dimension (numpy's tile).")
register_topi_op("relax.repeat", 1, _infer_repeat, topi.repeat, pattern=OpPatternKind.kInjective,
                 attrs={"repeats": "copies of each element", "axis": "the axis (None: flattened)"},
                 description="Repeat each element along an axis (numpy's repeat).")


def flip(data, axis: int) -> Call:
    """`data` reversed along `axis`."""
    return Call(Op.get("relax.flip"), [data], {"axis": int(axis)})


def tile(data, repeats) -> Call:
    """`data` repeated `repeats[k]` times along each dimension (an int: the last one)."""
    reps = (int(repeats),) if isinstance(repeats, int) else tuple(int(r) for r in repeats)
    return Call(Op.get("relax.tile"), [data], {"repeats": reps})


def repeat(data, repeats: int, axis: int | None = None) -> Call:
    """Each element of `data` repeated `repeats` times along `axis` (None: of the flattened data)."""
    return Call(
        Op.get("relax.repeat"), [data], {"repeats": int(repeats), "axis": None if axis is None else int(axis)}
    )


__all__ = ["flip", "repeat", "tile"]
