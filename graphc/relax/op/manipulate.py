"""Shape-only manipulation: permute_dims, reshape (one -1), expand_dims, squeeze, flatten, broadcast_to.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 2, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.permute_dims(x)).struct_info
R.Tensor((3, 2, n), dtype="float32")
>>> bb.normalize(relax.op.reshape(x, (-1, 3))).struct_info
R.Tensor((n * 2, 3), dtype="float32")
>>> bb.normalize(relax.op.expand_dims(x, [0])).struct_info
R.Tensor((1, n, 2, 3), dtype="float32")
>>> bb.normalize(relax.op.flatten(x)).struct_info
R.Tensor((n * 6,), dtype="float32")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.arith import Analyzer
from ...tir.expr import IntImm, floordiv
from ..expr import Call, Expr, ShapeExpr
from ..struct_info import ShapeStructInfo, TensorStructInfo, as_dim, prim_text
from .infer import analyzer_of, normalize_axis, op_label, provably_different, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .te_legalize import call_topi, register_topi_op


def _infer_permute_dims(call, bb):
    data = tensor_arg(call, 0, "x")
    axes = call.attrs.get("axes")
    if axes is None:
        if data.ndim == -1:
            return data
        axes = tuple(reversed(range(data.ndim)))
    else:
        if data.ndim == -1:
            return TensorStructInfo(dtype=data.dtype, ndim=len(axes))
        if len(axes) != data.ndim:
            raise TypeInferenceError(
                f"{op_label(call)} expects axes to list all {data.ndim} dimensions of x {data}, got "
                f"axes={list(axes)}")
        axes = tuple(normalize_axis(call, int(a), data.ndim, "axes") for a in axes)
        if sorted(axes) != list(range(data.ndim)):
            raise TypeInferenceError(
                f"{op_label(call)} expects axes to be a permutation of 0..{data.ndim - 1}, got {list(axes)}")
    dims = data.shape_values
    if dims is None:
        return TensorStructInfo(dtype=data.dtype, ndim=data.ndim, vdevice=data.vdevice)
    return TensorStructInfo(tuple(dims[a] for a in axes), data.dtype, vdevice=data.vdevice)


register_topi_op("relax.permute_dims", 1, _infer_permute_dims, topi.transpose, prim_name="transpose",
                 pattern=OpPatternKind.kInjective,
                 attrs={"axes": "the permutation (None reverses the dimensions)"},
                 description="Permute the dimensions of a tensor.")


def permute_dims(x, axes=None) -> Call:
    """`x` with dimensions permuted by `axes` (`None` reverses them, as numpy's transpose)."""
    return Call(Op.get("relax.permute_dims"), [x],
                {"axes": None if axes is None else tuple(int(a) for a in axes)})


def _product(dims):
    out = IntImm("int64", 1)
    for d in dims:
        out = out * d
    return out


def _infer_reshape(call, bb):
    data = tensor_arg(call, 0, "x")
    shape = call.args[1].struct_info
    if not isinstance(shape, ShapeStructInfo):
        raise TypeInferenceError(
            f"{op_label(call)} expects argument shape to be a shape (R.Shape), "
            f"got {shape}")
    if shape.values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=shape.ndim, vdevice=data.vdevice)
    if data.shape_values is not None:
        analyzer = analyzer_of(bb)
        old, new = analyzer.simplify(_product(data.shape_values)), analyzer.simplify(_product(shape.values))
        if provably_different(old, new, analyzer):
            raise TypeInferenceError(
                f"{op_label(call)} expects the new shape to hold as many elements as x {data} "
                f"({prim_text(old)}), "
                f"got shape {shape} ({prim_text(new)})")
    return TensorStructInfo(call.args[1] if isinstance(call.args[1], ShapeExpr) else shape.values,
                            data.dtype, vdevice=data.vdevice)


register_op("relax.reshape", 2, _infer_reshape, legalize=call_topi(topi.reshape, "reshape"),
            pattern=OpPatternKind.kInjective,
            description="Reshape x to `shape` (same number of elements).")


def reshape(x, shape) -> Call:
    """`x` reshaped to `shape` (a ShapeExpr or a tuple; one -1 is inferred from `x`'s shape)."""
    if not isinstance(shape, Expr):
        dims = [as_dim(d) for d in shape]
        holes = [i for i, d in enumerate(dims) if isinstance(d, IntImm) and d.value == -1]
        if len(holes) > 1:
            raise TypeInferenceError(f"'reshape' accepts at most one -1 in shape, got {list(shape)}")
        if holes:
            sinfo = x.struct_info_ if isinstance(x, Expr) else None
            if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None:
                raise TypeInferenceError(
                    f"'reshape' can infer a -1 in shape only from a known shape of x, got {sinfo}")
            known = [d for i, d in enumerate(dims) if i != holes[0]]
            total = _product(sinfo.shape_values)
            dims[holes[0]] = Analyzer().simplify(floordiv(total, _product(known)))
        shape = ShapeExpr(dims)
    return Call(Op.get("relax.reshape"), [x, shape])


def _distinct_axes(call, axes, ndim: int, arg_name: str = "axis") -> list[int]:
    out = [normalize_axis(call, int(a), ndim, arg_name) for a in axes]
    if len(set(out)) != len(out):
        raise TypeInferenceError(f"{op_label(call)} expects distinct {arg_name}, got {list(axes)}")
    return out


def _infer_expand_dims(call, bb):
    data = tensor_arg(call, 0, "x")
    axes = call.attrs["axis"]
    if data.ndim == -1:
        return TensorStructInfo(dtype=data.dtype, ndim=-1, vdevice=data.vdevice)
    ndim = data.ndim + len(axes)
    new = set(_distinct_axes(call, axes, ndim))
    if data.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=ndim, vdevice=data.vdevice)
    dims = iter(data.shape_values)
    return TensorStructInfo(tuple(IntImm("int64", 1) if k in new else next(dims) for k in range(ndim)),
                            data.dtype, vdevice=data.vdevice)


def _infer_squeeze(call, bb):
    data = tensor_arg(call, 0, "x")
    axis = call.attrs.get("axis")
    dims = data.shape_values
    if data.ndim == -1 or (axis is None and dims is None):
        return TensorStructInfo(dtype=data.dtype, ndim=-1, vdevice=data.vdevice)
    if axis is None:
        if any(not isinstance(d, IntImm) for d in dims):
            return TensorStructInfo(dtype=data.dtype, ndim=-1, vdevice=data.vdevice)
        axes = {k for k, d in enumerate(dims) if d.value == 1}
    else:
        axes = set(_distinct_axes(call, axis, data.ndim))
        for k in axes:
            if dims is not None and isinstance(dims[k], IntImm) and dims[k].value != 1:
                raise TypeInferenceError(
                    f"{op_label(call)} can only remove size-1 dimensions, but dimension {k} of x {data} is "
                    f"{dims[k].value}")
    if dims is None:
        return TensorStructInfo(dtype=data.dtype, ndim=data.ndim - len(axes), vdevice=data.vdevice)
    return TensorStructInfo(tuple(d for k, d in enumerate(dims) if k not in axes), data.dtype,
                            vdevice=data.vdevice)


def _infer_flatten(call, bb):
    data = tensor_arg(call, 0, "x")
    if data.shape_values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=1, vdevice=data.vdevice)
    total = analyzer_of(bb).simplify(_product(data.shape_values))
    return TensorStructInfo((total,), data.dtype, vdevice=data.vdevice)


def _infer_broadcast_to(call, bb):
    data = tensor_arg(call, 0, "x")
    shape = call.args[1].struct_info
    if not isinstance(shape, ShapeStructInfo):
        raise TypeInferenceError(
            f"{op_label(call)} expects argument shape to be a shape (R.Shape), got {shape}")
    if shape.values is None:
        return TensorStructInfo(dtype=data.dtype, ndim=shape.ndim, vdevice=data.vdevice)
    if data.ndim > len(shape.values):
        raise TypeInferenceError(
            f"{op_label(call)} cannot broadcast x {data} to the lower-rank shape {shape}")
    if data.shape_values is not None:
        analyzer = analyzer_of(bb)
        offset = len(shape.values) - data.ndim
        for k, d in enumerate(data.shape_values):
            target = shape.values[offset + k]
            if not (isinstance(d, IntImm) and d.value == 1) and provably_different(d, target, analyzer):
                raise TypeInferenceError(
                    f"{op_label(call)} cannot broadcast x {data} to shape {shape}: dimension {k} is "
                    f"{prim_text(d)}, target {prim_text(target)}")
    return TensorStructInfo(shape.values, data.dtype, vdevice=data.vdevice)


register_topi_op("relax.expand_dims", 1, _infer_expand_dims, topi.expand_dims,
                 pattern=OpPatternKind.kInjective, attrs={"axis": "positions of the new axes in the result"},
                 description="Insert size-1 dimensions.")
register_topi_op("relax.squeeze", 1, _infer_squeeze, topi.squeeze, pattern=OpPatternKind.kInjective,
                 attrs={"axis": "size-1 axes to drop (None: all)"}, description="Remove size-1 dimensions.")
register_op("relax.flatten", 1, _infer_flatten, legalize=call_topi(topi.flatten, "flatten"),
            pattern=OpPatternKind.kInjective, description="Reshape to one dimension.")
register_op("relax.broadcast_to", 2, _infer_broadcast_to,
            legalize=call_topi(topi.broadcast_to, "broadcast_to"),
            pattern=OpPatternKind.kBroadcast, description="Broadcast x to shape (numpy rules).")


def _axis_tuple(axis) -> tuple:
    return (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)


def expand_dims(x, axis) -> Call:
    """`x` with new size-1 dimensions at `axis` (an int or list of positions in the result)."""
    return Call(Op.get("relax.expand_dims"), [x], {"axis": _axis_tuple(axis)})


def squeeze(x, axis=None) -> Call:
    """`x` without its size-1 dimensions `axis` (None: all of them)."""
    return Call(Op.get("relax.squeeze"), [x], {"axis": None if axis is None else _axis_tuple(axis)})


def flatten(x) -> Call:
    """`x` as a 1-d tensor."""
    return Call(Op.get("relax.flatten"), [x])


def broadcast_to(x, shape) -> Call:
    """`x` broadcast to `shape` (a ShapeExpr or a tuple)."""
    return Call(Op.get("relax.broadcast_to"), [x, shape if isinstance(shape, Expr) else ShapeExpr(shape)])
