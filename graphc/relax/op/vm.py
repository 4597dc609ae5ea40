"""`relax.vm.*` and `relax.call_builtin_with_ctx`: the operators the VM code generator consumes.

`VMBuiltinLower` turns the `relax.memory.*` operators into these; each maps one to one onto
a VM builtin (`vm.builtin.alloc_storage`, `vm.builtin.alloc_tensor`, ...). Allocations are
pure, as in TVM; `kill_object`, `call_tir_dyn` and `call_builtin_with_ctx` are not.

>>> from graphc import relax
>>> from graphc.ir import GlobalVar
>>> s = alloc_storage((64,), 0, "float32", "global")
>>> s
R.vm.alloc_storage(R.shape([64]), R.prim_value(0), R.dtype("float32"), R.str("global"))
>>> relax.BlockBuilder().normalize(s).struct_info
R.Object
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> relax.BlockBuilder().normalize(call_tir_dyn(GlobalVar("f"), [x, relax.ShapeExpr([2])])).struct_info
R.Tuple()
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.module import GlobalVar
from ..expr import Call, Expr, ExternFunc, Tuple
from ..struct_info import ObjectStructInfo, StructInfo, TupleStructInfo
from .infer import op_label
from .memory import (
    as_dtype,
    as_prim,
    as_shape,
    as_str,
    infer_alloc_storage,
    infer_storage_tensor,
    infer_void,
    void_struct_info,
)
from .registry import Op, register_op


def _infer_call_tir_dyn(call, bb) -> StructInfo:
    if not isinstance(call.args[0], GlobalVar | ExternFunc):
        raise TypeInferenceError(f"{op_label(call)} expects argument func to be a GlobalVar or an "
                                 f"ExternFunc, got {call.args[0]!r}")
    if not isinstance(call.args[1].struct_info, TupleStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects argument args to be a tuple, got "
                                 f"{call.args[1].struct_info}")
    return void_struct_info()


def _infer_call_builtin_with_ctx(call, bb) -> StructInfo:
    return call.sinfo_args[0] if call.sinfo_args else ObjectStructInfo()


register_op("relax.vm.alloc_storage", 4, infer_alloc_storage,
            description="Allocate VM storage (size in bytes, runtime_device_index, dtype, storage_scope).")
register_op("relax.vm.alloc_tensor", 4, infer_storage_tensor,
            description="A tensor in VM storage (storage, offset, shape, dtype).")
register_op("relax.vm.kill_object", 1, infer_void, purity=False,
            description="Release the register holding a storage or a tensor.")
register_op("relax.vm.call_tir_dyn", 2, _infer_call_tir_dyn, purity=False,
            description="Call a PrimFunc on (args..., outputs..., shape): the shape's values are passed "
                        "as scalar integers.")
register_op("relax.call_builtin_with_ctx", 2, _infer_call_builtin_with_ctx, purity=False,
            description="Call a VM builtin with the VM context as a hidden first argument.")


def alloc_storage(size, runtime_device_index=0, dtype="uint8", storage_scope="global") -> Call:
    """`R.vm.alloc_storage(size, runtime_device_index, dtype, storage_scope)`; size in bytes."""
    return Call(Op.get("relax.vm.alloc_storage"),
                [as_shape(size), as_prim(runtime_device_index), as_dtype(dtype), as_str(storage_scope)])


def alloc_tensor(storage, offset, shape, dtype) -> Call:
    """`R.vm.alloc_tensor(storage, offset, shape, dtype)`: a tensor at byte `offset` of `storage`."""
    return Call(Op.get("relax.vm.alloc_tensor"), [storage, as_prim(offset), as_shape(shape), as_dtype(dtype)])


def kill_object(obj) -> Call:
    """`R.vm.kill_object(obj)`: drop the VM's reference to `obj`."""
    return Call(Op.get("relax.vm.kill_object"), [obj])


def call_tir_dyn(func, args) -> Call:
    """`R.vm.call_tir_dyn(cls.f, (x, out, R.shape([n])))`: a trailing shape passes scalar ints."""
    if not isinstance(args, Expr):
        args = Tuple(list(args))
    return Call(Op.get("relax.vm.call_tir_dyn"), [func, args])


def call_builtin_with_ctx(func, args, sinfo_args=()) -> Call:
    """`R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(2),), sinfo_args=...)`."""
    if isinstance(func, str):
        func = ExternFunc(func)
    if not isinstance(args, Expr):
        args = Tuple(list(args))
    elif not isinstance(args, Tuple):
        args = Tuple([args])
    return Call(Op.get("relax.call_builtin_with_ctx"), [func, args], sinfo_args=sinfo_args)


__all__ = ["alloc_storage", "alloc_tensor", "call_builtin_with_ctx", "call_tir_dyn", "kill_object"]
