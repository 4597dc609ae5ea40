"""Explicit memory: `relax.builtin.alloc_tensor` and the `relax.memory.*` storage operators.

These appear only after `CallTIRRewrite` (which allocates the outputs of `call_tir` with
`builtin.alloc_tensor`) and `StaticPlanBlockMemory` (which carves tensors out of reusable
storage tokens). Allocation counts as pure, as in TVM; the kills are impure.

>>> from graphc import relax
>>> bb = relax.BlockBuilder()
>>> storage = relax.Var("s", relax.ObjectStructInfo())
>>> bb.normalize(alloc_tensor(storage, 0, (2, 3), "float32")).struct_info
R.Tensor((2, 3), dtype="float32")
>>> alloc_storage((24,), 0, "global", "float32")
R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("float32"))
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ..expr import Call, DataTypeImm, Expr, PrimValue, ShapeExpr, StringImm
from ..struct_info import ObjectStructInfo, ShapeStructInfo, StructInfo, TensorStructInfo, TupleStructInfo
from .infer import op_label
from .registry import Op, register_op


def void_struct_info() -> TupleStructInfo:
    """The struct info of a call that returns nothing: the empty tuple (TVM's void)."""
    return TupleStructInfo([])


def shape_of_arg(call, index: int, arg_name: str) -> ShapeStructInfo:
    sinfo = call.args[index].struct_info
    if not isinstance(sinfo, ShapeStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects argument {arg_name} to be a shape (R.Shape), "
                                 f"got {sinfo}")
    return sinfo


def dtype_of_arg(call, index: int) -> str:
    arg = call.args[index]
    if not isinstance(arg, DataTypeImm):
        raise TypeInferenceError(f"{op_label(call)} expects argument dtype to be a data type "
                                 f"(R.dtype(\"float32\")), got {arg!r}")
    return arg.value


def tensor_of_shape_arg(call, shape_index: int, dtype_index: int) -> TensorStructInfo:
    """A tensor whose shape is argument `shape_index` and dtype argument `dtype_index`."""
    shape = shape_of_arg(call, shape_index, "shape")
    dtype = dtype_of_arg(call, dtype_index)
    arg = call.args[shape_index]
    if isinstance(arg, ShapeExpr):
        return TensorStructInfo(arg.values, dtype)
    if shape.values is not None:
        return TensorStructInfo(shape.values, dtype)
    return TensorStructInfo(dtype=dtype, ndim=shape.ndim)


def _infer_builtin_alloc_tensor(call, bb) -> StructInfo:
    return tensor_of_shape_arg(call, 0, 1)


# The struct info of allocating storage, of a tensor in storage and of a kill: `relax.vm.*` has
# the same operators one step closer to the VM, and infers them with these.


def infer_alloc_storage(call, bb) -> StructInfo:
    """`alloc_storage(size, ...)`: an object; `size` must be a shape."""
    shape_of_arg(call, 0, "size")
    return ObjectStructInfo()


def infer_storage_tensor(call, bb) -> StructInfo:
    """`alloc_tensor(storage, offset, shape, dtype)`: a tensor of that shape and dtype."""
    return tensor_of_shape_arg(call, 2, 3)


def infer_void(call, bb) -> StructInfo:
    """A call that returns nothing."""
    return void_struct_info()


register_op("relax.builtin.alloc_tensor", 4, _infer_builtin_alloc_tensor,
            description="Allocate a tensor (shape, dtype, runtime_device_index, storage_scope).")
register_op("relax.memory.alloc_storage", 4, infer_alloc_storage,
            description="Allocate storage (size in bytes, virtual_device_index, storage_scope, dtype).")
register_op("relax.memory.alloc_tensor", 4, infer_storage_tensor,
            description="A tensor in storage (storage, offset, shape, dtype).")
register_op("relax.memory.kill_storage", 1, infer_void, purity=False,
            description="Release storage allocated by memory.alloc_storage.")
register_op("relax.memory.kill_tensor", 1, infer_void, purity=False,
            description="Release a tensor allocated by memory.alloc_tensor.")


def as_shape(value) -> Expr:
    """A shape argument: an Expr as is, else a ShapeExpr of the given dimensions."""
    return value if isinstance(value, Expr) else ShapeExpr(value)


def as_prim(value) -> Expr:
    return value if isinstance(value, Expr) else PrimValue(value)


def as_str(value) -> Expr:
    return value if isinstance(value, Expr) else StringImm(value)


def as_dtype(value) -> Expr:
    return value if isinstance(value, Expr) else DataTypeImm(value)


def alloc_storage(size, virtual_device_index=0, storage_scope="global", dtype="uint8") -> Call:
    """`R.memory.alloc_storage(size, virtual_device_index, storage_scope, dtype)`; size in bytes."""
    return Call(Op.get("relax.memory.alloc_storage"),
                [as_shape(size), as_prim(virtual_device_index), as_str(storage_scope), as_dtype(dtype)])


def alloc_tensor(storage, offset, shape, dtype) -> Call:
    """`R.memory.alloc_tensor(storage, offset, shape, dtype)`: a tensor at byte `offset` of `storage`."""
    return Call(Op.get("relax.memory.alloc_tensor"),
                [storage, as_prim(offset), as_shape(shape), as_dtype(dtype)])


def kill_storage(storage) -> Call:
    """`R.memory.kill_storage(storage)`."""
    return Call(Op.get("relax.memory.kill_storage"), [storage])


def kill_tensor(tensor) -> Call:
    """`R.memory.kill_tensor(tensor)`."""
    return Call(Op.get("relax.memory.kill_tensor"), [tensor])


__all__ = ["alloc_storage", "alloc_tensor", "kill_storage", "kill_tensor"]

# `relax.op.builtin` (the builder of builtin.alloc_tensor) is loaded with this module, so the
# package exposes it as soon as the operators are registered.
from . import builtin as _builtin  # noqa: E402, F401
