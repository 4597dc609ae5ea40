"""Calls into the runtime and the operators the VM runs itself (TVM's `relax/op/base.py` family).

- `call_pure_packed(func, *args, sinfo_args)`: call the global function `func`
  (`graphc.register_func`) and trust it to be pure; `call_packed` (an `ExternFunc` callee)
  is its impure twin.
- `call_inplace_packed(func, *args, inplace_indices, sinfo_args)`: a packed call whose results
  are the arguments at `inplace_indices`, updated in place.
- `call_dps_packed(func, args, out_sinfo)`: destination passing, like `call_tir`: the outputs
  are allocated and passed after the inputs (`CallTIRRewrite` makes that explicit).
- `assert_op(condition, format_args, format)`, `print(*values, format)`: impure, return nothing.
- `shape_of(x)`: the shape of a tensor as a Relax value; `null_value()`: an empty object.
- `shape_to_tensor(shape)`: a shape as a 1-d int64 tensor; `tensor_to_shape(t)`: the values of
  a 1-d integer tensor as a shape (data-dependent: the shape is known when the function runs).
  The VM runs both (`vm.builtin.shape_to_tensor` / `vm.builtin.tensor_to_shape`);
  `FoldConstant` folds them when the shape's values or the tensor are constants.
- `builtin.stop_lift_params(x)`: `x`, marking where parameter lifting stops (legalized away).

>>> from graphc import relax, tir
>>> x = relax.Var("x", relax.TensorStructInfo((tir.Var("n", "int64"), 4), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(shape_of(x)).struct_info
R.Shape([n, 4])
>>> call_pure_packed("my.kernel", x, sinfo_args=x.struct_info)
R.call_pure_packed("my.kernel", x, sinfo_args=R.Tensor((n, 4), dtype="float32"))
"""

from __future__ import annotations

import builtins

from ...errors import TypeInferenceError
from ...ir.module import GlobalVar
from ...tir.expr import IntImm, PrimExpr
from ..expr import Call, Expr, ExternFunc, PrimValue, StringImm, Tuple
from ..struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from .infer import op_label
from .memory import as_shape, void_struct_info
from .registry import Op, OpPatternKind, register_op

# --- packed calls -------------------------------------------------------------------------------


def _callee(call) -> Expr:
    func = call.args[0]
    if not isinstance(func, ExternFunc) and not isinstance(func.struct_info_, FuncStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects its first argument to name a global function "
                                 f"(a string or R.ExternFunc), got {func!r}")
    return func


def _infer_packed(call, bb) -> StructInfo:
    _callee(call)
    if not call.sinfo_args:
        return ObjectStructInfo()
    sinfo = call.sinfo_args[0] if len(call.sinfo_args) == 1 else TupleStructInfo(call.sinfo_args)
    return sinfo


def _infer_inplace_packed(call, bb) -> StructInfo:
    _callee(call)
    indices = call.attrs.get("inplace_indices") or ()
    n_args = len(call.args) - 1
    for i in indices:
        if not 0 <= i < n_args:
            raise TypeInferenceError(f"{op_label(call)}: inplace index {i} is out of range for "
                                     f"{n_args} argument(s)")
    return _infer_packed(call, bb)


def _infer_call_dps_packed(call, bb) -> StructInfo:
    _callee(call)
    if len(call.args) != 2 or not isinstance(call.args[1].struct_info, TupleStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects (func, args) with args a tuple")
    if len(call.sinfo_args) != 1:
        raise TypeInferenceError(f"{op_label(call)} expects exactly one out_sinfo")
    return call.sinfo_args[0]


register_op("relax.call_pure_packed", -1, _infer_packed,
            description="Call a registered global function that is known to be pure.")
register_op("relax.call_inplace_packed", -1, _infer_inplace_packed, attrs={
    "inplace_indices": "the arguments the function updates in place and returns"},
    description="Call a registered global function that updates some arguments in place.")
register_op("relax.call_dps_packed", 2, _infer_call_dps_packed,
            description="Call a registered global function in destination-passing style.")


def _sinfo_list(sinfo_args) -> list:
    if sinfo_args is None:
        return []
    if isinstance(sinfo_args, StructInfo):
        return [sinfo_args]
    return list(sinfo_args)


def _func(func) -> Expr:
    return func if isinstance(func, Expr) else ExternFunc(func)


def _arg(value) -> Expr:
    """A packed call argument: Exprs and GlobalVars (a function of the module, passed as a value)
    as they are; numbers, strings and PrimExprs as Relax values."""
    if isinstance(value, Expr | GlobalVar):
        return value
    if isinstance(value, builtins.str):
        return StringImm(value)
    if isinstance(value, bool | int | float | PrimExpr):
        return PrimValue(value)
    if isinstance(value, list | tuple):
        return Tuple([_arg(v) for v in value])
    raise TypeInferenceError(f"cannot pass {value!r} ({type(value).__name__}) to a packed function")


def call_pure_packed(func, *args, sinfo_args=None) -> Call:
    """`R.call_pure_packed("name", *args, sinfo_args=...)`: a pure call of a registered function."""
    return Call(Op.get("relax.call_pure_packed"), [_func(func), *[_arg(a) for a in args]],
                sinfo_args=_sinfo_list(sinfo_args))


def call_inplace_packed(func, *args, inplace_indices, sinfo_args=None) -> Call:
    """`R.call_inplace_packed("name", *args, inplace_indices=[0], sinfo_args=...)`."""
    indices = [inplace_indices] if isinstance(inplace_indices, int) else list(inplace_indices)
    return Call(Op.get("relax.call_inplace_packed"), [_func(func), *[_arg(a) for a in args]],
                {"inplace_indices": tuple(indices)}, _sinfo_list(sinfo_args))


def call_dps_packed(func, args, out_sinfo) -> Call:
    """`R.call_dps_packed("name", (x,), out_sinfo=R.Tensor(...))`: the outputs are passed after `args`."""
    if isinstance(args, Expr) and not isinstance(args, Tuple):
        args = Tuple([args])
    elif not isinstance(args, Tuple):
        args = Tuple([_arg(a) for a in args])
    if isinstance(out_sinfo, list | tuple):
        out_sinfo = out_sinfo[0] if len(out_sinfo) == 1 else TupleStructInfo(list(out_sinfo))
    return Call(Op.get("relax.call_dps_packed"), [_func(func), args], sinfo_args=[out_sinfo])


# --- runtime operators --------------------------------------------------------------------------


def _condition(call) -> None:
    sinfo = call.args[0].struct_info
    ok = (isinstance(sinfo, PrimStructInfo) and sinfo.dtype == "bool") or (
        isinstance(sinfo, TensorStructInfo) and sinfo.dtype in ("bool", "void") and sinfo.ndim in (0, -1))
    if not ok:
        raise TypeInferenceError(f"{op_label(call)} expects a boolean scalar condition (R.Prim('bool') or a "
                                 f"0-d bool tensor), got {sinfo}")


def _infer_assert(call, bb) -> StructInfo:
    if len(call.args) < 2 or not isinstance(call.args[1], StringImm):
        raise TypeInferenceError(f"{op_label(call)} expects (condition, format, *values)")
    _condition(call)
    return void_struct_info()


def _infer_print(call, bb) -> StructInfo:
    if not call.args or not isinstance(call.args[0], StringImm):
        raise TypeInferenceError(f"{op_label(call)} expects (format, *values)")
    return void_struct_info()


def _infer_shape_of(call, bb) -> StructInfo:
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects argument x to be a tensor, got {sinfo}")
    if sinfo.shape_values is not None:
        return ShapeStructInfo(list(sinfo.shape_values))
    return ShapeStructInfo(ndim=sinfo.ndim)


def _infer_shape_to_tensor(call, bb) -> StructInfo:
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, ShapeStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects argument input to be a shape (R.Shape), "
                                 f"got {sinfo}")
    if sinfo.ndim < 0:
        return TensorStructInfo(dtype="int64", ndim=1)
    return TensorStructInfo((sinfo.ndim,), "int64")


def _infer_tensor_to_shape(call, bb) -> StructInfo:
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects argument input to be a tensor, got {sinfo}")
    if sinfo.ndim not in (-1, 1) or not (sinfo.is_unknown_dtype or sinfo.dtype.startswith(("int", "uint"))):
        raise TypeInferenceError(f"{op_label(call)} expects a 1-d integer tensor, got {sinfo}")
    dims = sinfo.shape_values
    if dims is None or not isinstance(dims[0], IntImm):
        return ShapeStructInfo(ndim=-1)
    return ShapeStructInfo(ndim=int(dims[0]))


def _infer_null(call, bb) -> StructInfo:
    return ObjectStructInfo()


def _infer_same(call, bb) -> StructInfo:
    return call.args[0].struct_info


register_op("relax.assert_op", -1, _infer_assert, purity=False,
            description="Raise an error with a formatted message when the condition is false.")
register_op("relax.print", -1, _infer_print, purity=False, description="Print formatted values.")
register_op("relax.shape_of", 1, _infer_shape_of, description="The shape of a tensor as a Relax value.")
register_op("relax.shape_to_tensor", 1, _infer_shape_to_tensor,
            description="A shape as a 1-d int64 tensor (the VM's vm.builtin.shape_to_tensor).")
register_op("relax.tensor_to_shape", 1, _infer_tensor_to_shape,
            description="The values of a 1-d integer tensor as a shape (vm.builtin.tensor_to_shape).")
register_op("relax.tensor_to_values", 1, _infer_tensor_to_shape,
            description="The values of a 1-d integer tensor as symbolic values (R.Shape) that may be "
                        "negative: indices and offsets, not sizes (vm.builtin.tensor_to_values).")
register_op("relax.null_value", 0, _infer_null, description="An empty object.")
register_op("relax.builtin.stop_lift_params", 1, _infer_same, legalize=lambda bb, call: call.args[0],
            pattern=OpPatternKind.kOpaque, description="Identity that stops parameter lifting.")


def _condition_expr(condition) -> Expr:
    if isinstance(condition, Expr):
        return condition
    return PrimValue(condition)


def assert_op(condition, format_args=None, format="") -> Call:  # noqa: A002 - TVM's name
    """`R.assert_op(cond, values, format="...")`: fail with the formatted values when `cond` is false."""
    if format_args is None:
        format_args = []
    elif isinstance(format_args, Expr):
        format_args = [format_args]
    fmt = format if isinstance(format, StringImm) else StringImm(format)
    return Call(Op.get("relax.assert_op"), [_condition_expr(condition), fmt, *[_arg(a) for a in format_args]])


def print(*values, format="") -> Call:  # noqa: A001,A002 - TVM's names
    """`R.print(*values, format="x: {}")`: print the values when the function runs."""
    fmt = format if isinstance(format, StringImm) else StringImm(format)
    return Call(Op.get("relax.print"), [fmt, *[_arg(v) for v in values]])


def shape_of(x) -> Call:
    """`R.shape_of(x)`: the shape of tensor `x`."""
    return Call(Op.get("relax.shape_of"), [x])


def shape_to_tensor(expr) -> Call:
    """`R.shape_to_tensor(shape)`: the values of `shape` as a 1-d int64 tensor."""
    return Call(Op.get("relax.shape_to_tensor"), [as_shape(expr)])


def tensor_to_shape(expr) -> Call:
    """`R.tensor_to_shape(t)`: the values of the 1-d integer tensor `t` as a shape."""
    return Call(Op.get("relax.tensor_to_shape"), [expr])


def tensor_to_values(expr) -> Call:
    """The values of the 1-d integer tensor `expr` as an R.Shape whose entries may be negative
    (slice starts, pads, axes read at run time); `tensor_to_shape` checks them as sizes."""
    return Call(Op.get("relax.tensor_to_values"), [expr])


def null_value() -> Call:
    """`R.null_value()`: an empty object."""
    return Call(Op.get("relax.null_value"), [])


__all__ = ["assert_op", "call_dps_packed", "call_inplace_packed", "call_pure_packed", "null_value",
           "print", "shape_of", "shape_to_tensor", "tensor_to_shape", "tensor_to_values"]
