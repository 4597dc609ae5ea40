"""Shapes as tensors and tensors as shapes: `shape_to_tensor` and `tensor_to_shape`.

A model that computes with sizes (ONNX's `Shape -> Gather -> Concat -> Reshape`) needs
both directions: `shape_to_tensor` makes the int64 tensor of a (symbolic) shape, computed
by a kernel like any other operator; `tensor_to_shape` reads a 1-d integer tensor back as
a shape at run time (the VM builtin `vm.builtin.tensor_to_shape`), whose values a
`match_cast` then binds to symbolic variables.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> bb = relax.BlockBuilder()
>>> bb.normalize(shape_to_tensor(relax.ShapeExpr([n, 4]))).struct_info
R.Tensor((2,), dtype="int64")
>>> t = relax.Var("t", relax.TensorStructInfo((3,), "int64"))
>>> bb.normalize(tensor_to_shape(t)).struct_info
R.Shape(ndim=3)
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...tir.expr import IntImm
from ..expr import Call, ExternFunc
from ..struct_info import ShapeStructInfo, TensorStructInfo
from .infer import op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op


def _infer_shape_to_tensor(call, bb):
    shape = call.args[0].struct_info
    if not isinstance(shape, ShapeStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects shape to be a shape (R.Shape), got {shape}")
    if shape.ndim < 0:
        return TensorStructInfo(dtype="int64", ndim=1)
    return TensorStructInfo((shape.ndim,), "int64")


def _legalize_shape_to_tensor(bb, call):
    return bb.call_te(topi.shape_to_tensor, call.args[0], primfunc_name_hint="shape_to_tensor")


register_op("relax.shape_to_tensor", 1, _infer_shape_to_tensor, legalize=_legalize_shape_to_tensor,
            pattern=OpPatternKind.kInjective,
            description="The int64 tensor holding the values of a shape.")


def _infer_tensor_to_shape(call, bb):
    data = tensor_arg(call, 0, "data")
    if data.ndim != 1:
        raise TypeInferenceError(f"{op_label(call)} expects data to be a 1-d tensor, got {data}")
    if not data.is_unknown_dtype and not data.dtype.startswith("int"):
        raise TypeInferenceError(f"{op_label(call)} expects data to have a signed integer dtype, got {data}")
    dims = data.shape_values
    if dims is None or not isinstance(dims[0], IntImm):
        raise TypeInferenceError(f"{op_label(call)} expects data to have a static length, got {data}")
    return ShapeStructInfo(ndim=dims[0].value)


def _legalize_tensor_to_shape(bb, call):
    return Call(ExternFunc("vm.builtin.tensor_to_shape"), [call.args[0]], sinfo_args=[call.struct_info])


register_op("relax.tensor_to_shape", 1, _infer_tensor_to_shape, legalize=_legalize_tensor_to_shape,
            description="Read a 1-d integer tensor as a shape at run time.")


def shape_to_tensor(shape) -> Call:
    """The int64 tensor of `shape` (a ShapeExpr or a shape-valued expression)."""
    return Call(Op.get("relax.shape_to_tensor"), [shape])


def tensor_to_shape(data) -> Call:
    """The shape whose values are those of the 1-d integer tensor `data`."""
    return Call(Op.get("relax.tensor_to_shape"), [data])


__all__ = ["shape_to_tensor", "tensor_to_shape"]
