"""Tensor manipulation: `permute_dims` (axes=None reverses) and `reshape` (with one -1).

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 2, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.permute_dims(x)).struct_info
R.Tensor((3, 2, n), dtype="float32")
>>> bb.normalize(relax.op.reshape(x, (-1, 3))).struct_info
R.Tensor((n * 2, 3), dtype="float32")
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...tir.arith import Analyzer
from ...tir.expr import IntImm, floordiv
from ..expr import Call, Expr, ShapeExpr
from ..struct_info import ShapeStructInfo, TensorStructInfo, as_dim, prim_text
from .infer import analyzer_of, normalize_axis, op_label, provably_different, tensor_arg
from .registry import Op, OpPatternKind, register_op


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


register_op("relax.permute_dims", 1, _infer_permute_dims, pattern=OpPatternKind.kInjective,
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


register_op("relax.reshape", 2, _infer_reshape, pattern=OpPatternKind.kInjective,
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
