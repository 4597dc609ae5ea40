"""Joining and cutting tensors: `concat` and `stack` of a tuple of tensors, `split` into a tuple.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 4), "float32"))
>>> y = relax.Var("y", relax.TensorStructInfo((n, 2), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.concat([x, y], axis=1)).struct_info
R.Tensor((n, 6), dtype="float32")
>>> bb.normalize(relax.op.split(x, 2, axis=1)).struct_info
R.Tuple(R.Tensor((n, 2), dtype="float32"), R.Tensor((n, 2), dtype="float32"))
>>> bb.normalize(relax.op.stack([x, x], axis=1)).struct_info
R.Tensor((n, 2, 4), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.expr import IntImm
from ..expr import Call, Tuple
from ..struct_info import TensorStructInfo, TupleStructInfo, prim_text
from .infer import analyzer_of, normalize_axis, op_label, provably_different, tensor_arg
from .registry import Op, OpPatternKind
from .te_legalize import register_topi_op


def _tensor_fields(call) -> list[TensorStructInfo]:
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, TupleStructInfo) or not sinfo.fields:
        raise TypeInferenceError(
            f"{op_label(call)} expects tensors to be a non-empty tuple of tensors, got {sinfo}"
        )
    for k, f in enumerate(sinfo.fields):
        if not isinstance(f, TensorStructInfo):
            raise TypeInferenceError(f"{op_label(call)} expects tensors[{k}] to be a tensor, got {f}")
    dtypes = {f.dtype for f in sinfo.fields if not f.is_unknown_dtype}
    if len(dtypes) > 1:
        raise TypeInferenceError(
            f"{op_label(call)} expects tensors of one dtype, got {sorted(dtypes)} in {sinfo}"
        )
    ndims = {f.ndim for f in sinfo.fields if f.ndim != -1}
    if len(ndims) > 1:
        raise TypeInferenceError(
            f"{op_label(call)} expects tensors of one rank, got ranks {sorted(ndims)} in {sinfo}"
        )
    return list(sinfo.fields)


def _joined(call, bb, fields, skip_axis: int | None):
    """Common dims of `fields` (checked equal except at `skip_axis`), or None if unknown."""
    if any(f.shape_values is None for f in fields):
        return None
    analyzer = analyzer_of(bb)
    first = fields[0].shape_values
    for k, f in enumerate(fields[1:], start=1):
        for j, (a, b) in enumerate(zip(first, f.shape_values)):
            if j != skip_axis and provably_different(a, b, analyzer):
                raise TypeInferenceError(
                    f"{op_label(call)} expects dimension {j} of every tensor to match, but tensors[0] has "
                    f"{prim_text(a)} and tensors[{k}] has {prim_text(b)}"
                )
    return first


def _joined_fields(call):
    """The tuple's tensors, their dtype ("void" if none is known) and rank (-1 if none is known)."""
    fields = _tensor_fields(call)
    dtype = next((f.dtype for f in fields if not f.is_unknown_dtype), "void")
    ndim = next((f.ndim for f in fields if f.ndim != -1), -1)
    return fields, dtype, ndim


def _infer_concat(call, bb):
    fields, dtype, ndim = _joined_fields(call)
    if ndim == -1:
        return TensorStructInfo(dtype=dtype, ndim=-1)
    if ndim == 0:
        raise TypeInferenceError(f"{op_label(call)} cannot join 0-d tensors; use stack")
    axis = normalize_axis(call, call.attrs["axis"], ndim, "axis")
    dims = _joined(call, bb, fields, axis)
    if dims is None:
        return TensorStructInfo(dtype=dtype, ndim=ndim)
    total = IntImm("int64", 0)
    for f in fields:
        total = total + f.shape_values[axis]
    out = list(dims)
    out[axis] = analyzer_of(bb).simplify(total)
    return TensorStructInfo(tuple(out), dtype)


def _infer_stack(call, bb):
    fields, dtype, ndim = _joined_fields(call)
    if ndim == -1:
        return TensorStructInfo(dtype=dtype, ndim=-1)
    axis = normalize_axis(call, call.attrs["axis"], ndim + 1, "axis")
    dims = _joined(call, bb, fields, None)
    if dims is None:
        return TensorStructInfo(dtype=dtype, ndim=ndim + 1)
    out = list(dims)
    out.insert(axis, IntImm("int64", len(fields)))
    return TensorStructInfo(tuple(out), dtype)


def _infer_split(call, bb):
    data = tensor_arg(call, 0, "x")
    spec = call.attrs["indices_or_sections"]
    count = spec if isinstance(spec, int) else len(spec) + 1
    if isinstance(spec, int) and spec <= 0:
        raise TypeInferenceError(f"{op_label(call)} expects a positive number of sections, got {spec}")
    if data.ndim == -1:
        return TupleStructInfo([TensorStructInfo(dtype=data.dtype, ndim=-1)] * count)
    axis = normalize_axis(call, call.attrs["axis"], data.ndim, "axis")
    if data.shape_values is None:
        return TupleStructInfo([TensorStructInfo(dtype=data.dtype, ndim=data.ndim)] * count)
    dim = data.shape_values[axis]
    if isinstance(spec, int) and isinstance(dim, IntImm) and dim.value % spec:
        raise TypeInferenceError(
            f"{op_label(call)} cannot split dimension {axis} of x {data} ({dim.value}) "
            f"into {spec} equal sections"
        )
    shapes = [t.shape for t in _split_shapes(data, spec, axis)]
    return TupleStructInfo([TensorStructInfo(tuple(s), data.dtype) for s in shapes])


def _split_shapes(data, spec, axis):
    from ... import te

    return topi.split(te.placeholder(data.shape_values, data.dtype), spec, axis)


register_topi_op("relax.concat", 1, _infer_concat, topi.concatenate, prim_name="concatenate",
                 pattern=OpPatternKind.kInjective, attrs={"axis": "the axis joined along"},
                 description="Join a tuple of tensors along an existing axis.")
register_topi_op("relax.stack", 1, _infer_stack, topi.stack, pattern=OpPatternKind.kInjective,
                 attrs={"axis": "position of the new axis"},
                 description="Join a tuple of same-shaped tensors along a new axis.")
register_topi_op("relax.split", 1, _infer_split, topi.split, pattern=OpPatternKind.kInjective,
                 attrs={"indices_or_sections": "a number of equal sections or the cut indices",
                        "axis": "the axis cut"},
                 description="Cut a tensor along an axis into a tuple of tensors.")


def _tuple(tensors):
    return tensors if not isinstance(tensors, list | tuple) else Tuple(list(tensors))


def concat(tensors, axis: int = 0) -> Call:
    """The tensors (a tuple or list) joined along `axis`."""
    return Call(Op.get("relax.concat"), [_tuple(tensors)], {"axis": int(axis)})


def stack(tensors, axis: int = 0) -> Call:
    """The same-shaped tensors joined along a new dimension `axis`."""
    return Call(Op.get("relax.stack"), [_tuple(tensors)], {"axis": int(axis)})


def split(x, indices_or_sections, axis: int = 0) -> Call:
    """A tuple of pieces of `x` along `axis`: equal sections (an int) or cut at the indices (a list)."""
    spec = (
        indices_or_sections
        if isinstance(indices_or_sections, int)
        else tuple(int(i) for i in indices_or_sections)
    )
    return Call(Op.get("relax.split"), [x], {"indices_or_sections": spec, "axis": int(axis)})


__all__ = ["concat", "split", "stack"]
