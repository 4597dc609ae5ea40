"""Indexing: `strided_slice` (numpy slicing, bounds constant or symbolic) and `take` (gather along an axis).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 10), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.strided_slice(x, axes=[1], begin=[1], end=[8], strides=[3])).struct_info
R.Tensor((n, 3), dtype="float32")
>>> i = relax.Var("i", relax.TensorStructInfo((2, 3), "int64"))
>>> bb.normalize(relax.op.take(x, i, axis=1)).struct_info
R.Tensor((n, 2, 3), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.expr import IntImm, PrimExpr, cast
from ..expr import Call, PrimValue, ShapeExpr
from ..struct_info import TensorStructInfo
from .infer import analyzer_of, normalize_axis, op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .te_legalize import register_topi_op


def _infer_strided_slice(call, bb):
    data = tensor_arg(call, 0, "x")
    axes, begin, end = call.attrs["axes"], call.attrs["begin"], call.attrs["end"]
    strides = call.attrs.get("strides") or (1,) * len(axes)
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise TypeInferenceError(
            f"{op_label(call)} expects axes, begin, end and strides of one length, got {len(axes)}, "
            f"{len(begin)}, {len(end)} and {len(strides)}"
        )
    if any(isinstance(s, int) and s == 0 for s in strides):
        raise TypeInferenceError(f"{op_label(call)} expects non-zero strides, got {list(strides)}")
    if data.ndim == -1:
        return data
    norm = [normalize_axis(call, a, data.ndim, "axes") for a in axes]
    if len(set(norm)) != len(norm):
        raise TypeInferenceError(f"{op_label(call)} expects distinct axes, got {list(axes)}")
    if data.shape_values is None:
        return data
    dims = list(data.shape_values)
    for a, b, e, s in zip(norm, begin, end, strides):
        try:
            dims[a] = topi.slice_extent(dims[a], b, e, s)
        except ValueError as err:
            raise TypeInferenceError(f"{op_label(call)}: {err}") from None
        if not isinstance(dims[a], IntImm):
            dims[a] = analyzer_of(bb).simplify(dims[a])
    return TensorStructInfo(tuple(dims), data.dtype, vdevice=data.vdevice)


def _infer_take(call, bb):
    data, indices = tensor_arg(call, 0, "x"), tensor_arg(call, 1, "indices")
    if not indices.is_unknown_dtype and not indices.dtype.startswith(("int", "uint")):
        raise TypeInferenceError(f"{op_label(call)} expects integer indices, got {indices}")
    axis = call.attrs.get("axis")
    if data.ndim == -1 or indices.ndim == -1:
        return TensorStructInfo(dtype=data.dtype, ndim=-1)
    if axis is None:
        ndim = indices.ndim
        if indices.shape_values is None:
            return TensorStructInfo(dtype=data.dtype, ndim=ndim)
        return TensorStructInfo(indices.shape_values, data.dtype)
    axis = normalize_axis(call, axis, data.ndim, "axis")
    ndim = data.ndim - 1 + indices.ndim
    if data.shape_values is None or indices.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=ndim)
    d = data.shape_values
    return TensorStructInfo(tuple(d[:axis]) + tuple(indices.shape_values) + tuple(d[axis + 1 :]), data.dtype)


register_topi_op("relax.strided_slice", 1, _infer_strided_slice, topi.strided_slice,
                 pattern=OpPatternKind.kInjective,
                 attrs={"axes": "sliced axes", "begin": "first indices", "end": "end indices (exclusive)",
                        "strides": "steps (None: 1)"},
                 description="numpy slicing x[begin:end:stride] on the given axes.")
register_topi_op("relax.take", 2, _infer_take, topi.take, pattern=OpPatternKind.kInjective,
                 attrs={"axis": "the axis indexed (None: flattened x)",
                        "mode": "raise (IndexError outside [-n, n), negatives from the end), nonnegative "
                                "(IndexError outside [0, n)), clip, wrap, or fast (unchecked)"},
                 description="Gather elements of x at indices along an axis.")


def _infer_slice_window(call, bb):
    data = tensor_arg(call, 0, "x")
    axes = call.attrs["axes"]
    bounds = []
    for index, name in ((1, "begin"), (2, "size"), (3, "strides")):
        arg = call.args[index]
        if not isinstance(arg, ShapeExpr) or len(arg.values) != len(axes):
            raise TypeInferenceError(f"{op_label(call)} expects {name} to be a shape of {len(axes)} "
                                     f"value(s), "
                                     f"got {arg.struct_info}")
        bounds.append(arg.values)
    if data.ndim == -1 or data.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=data.ndim)
    dims = list(data.shape_values)
    norm = [normalize_axis(call, a, data.ndim, "axes") for a in axes]
    if len(set(norm)) != len(norm):
        raise TypeInferenceError(f"{op_label(call)} expects distinct axes, got {list(axes)}")
    for a, size in zip(norm, bounds[1]):
        dims[a] = size
    return TensorStructInfo(tuple(dims), data.dtype, vdevice=data.vdevice)


def _legalize_slice_window(bb, call):
    return bb.call_te(topi.slice_window, *call.args, axes=call.attrs["axes"],
                      primfunc_name_hint="slice_window")


register_op(
    "relax.slice_window",
    4,
    _infer_slice_window,
    legalize=_legalize_slice_window,
    pattern=OpPatternKind.kInjective,
    attrs={"axes": "sliced axes"},
    description="size elements from begin, strides apart, on the given axes; the bounds are symbolic "
                "sizes (R.Shape) the caller keeps in range (topi.dynamic_slice_bounds clamps numpy's way).",
)


def slice_window(x, axes, begin, size, strides) -> Call:
    """`size` elements of `x` from `begin`, `strides` apart, along `axes` (lists of ints or
    symbolic PrimExprs, in range: clamp them with `topi.dynamic_slice_bounds`)."""
    return Call(Op.get("relax.slice_window"),
                [x, ShapeExpr(list(begin)), ShapeExpr(list(size)), ShapeExpr(list(strides))],
                {"axes": tuple(int(a) for a in axes)})


def strided_slice(x, axes, begin, end, strides=None) -> Call:
    """`x[begin:end:strides]` along `axes`, with numpy's clamping.

    `begin`, `end` and `strides` hold ints (a negative one counts from the end) or symbolic
    int64 values (`tir.Var`s, PrimExprs over them, or `R.prim_value`s): a symbolic bound is
    clamped into [0, n] and a symbolic stride counts as at least 1, so the slice never leaves
    `x`, whatever the values are when the model runs.
    """
    return Call(
        Op.get("relax.strided_slice"),
        [x],
        {
            "axes": tuple(int(a) for a in axes),
            "begin": tuple(_bound(b) for b in begin),
            "end": tuple(_bound(e) for e in end),
            "strides": None if strides is None else tuple(_bound(s) for s in strides),
        },
    )


def _bound(value):
    """An int, or an int64 PrimExpr for a symbolic slice bound or stride."""
    if isinstance(value, PrimValue):
        value = value.value
    if isinstance(value, IntImm):
        return int(value.value)
    if isinstance(value, PrimExpr):
        if not value.dtype.startswith(("int", "uint")):
            raise TypeInferenceError(f"'strided_slice' expects integer bounds, got {value} ({value.dtype})")
        return value if value.dtype == "int64" else cast(value, "int64")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise TypeInferenceError(f"'strided_slice' expects int or symbolic bounds, got {value!r}") from None


def take(x, indices, axis: int | None = None, mode: str = "raise") -> Call:
    """Elements of `x` at the integer `indices` along `axis` (None: of the flattened `x`).

    `mode` says what an index outside [0, n) does: "raise" (the default, numpy's: a negative
    index counts from the end once, anything else outside raises IndexError when the model
    runs), "nonnegative" (torch's embedding and index_select: IndexError outside [0, n)),
    "clip" or "wrap" (TVM's), or "fast": the indices are trusted, unchecked. "fast" reads
    out of bounds on a bad index; graphc's frontends and passes never choose it.
    """
    if mode not in topi.INDEX_MODES:
        raise TypeInferenceError(f"'take' expects mode to be one of {', '.join(topi.INDEX_MODES)}, "
                                 f"got {mode!r}")
    return Call(
        Op.get("relax.take"), [x, indices], {"axis": None if axis is None else int(axis), "mode": mode}
    )


__all__ = ["slice_window", "strided_slice", "take"]
