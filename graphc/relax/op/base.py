"""`call_tir`: call a TensorIR function in destination-passing style, with declared outputs.

`call_tir(gvar, args, out_sinfo, tir_vars=None)` allocates the outputs described by
`out_sinfo`, passes them after `args` to the PrimFunc `gvar`, and returns them (a tuple when
there are several). Its struct info is `out_sinfo`.

>>> from graphc import relax
>>> from graphc.ir import GlobalVar
>>> x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
>>> call = relax.op.call_tir(GlobalVar("f"), [x], relax.TensorStructInfo((4,), "float32"))
>>> relax.BlockBuilder().normalize(call).struct_info
R.Tensor((4,), dtype="float32")
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.module import GlobalVar
from ...tir.expr import PrimExpr
from ..expr import Call, Expr, PrimValue, ShapeExpr, Tuple
from ..struct_info import ShapeStructInfo, StructInfo, TensorStructInfo, TupleStructInfo
from .infer import op_label
from .registry import Op, OpPatternKind, register_op


def _infer_call_tir(call, bb) -> StructInfo:
    if len(call.args) not in (2, 3):
        raise TypeInferenceError(
            f"{op_label(call)} expects (gvar, args) or (gvar, args, tir_vars), got {len(call.args)} "
            f"arguments")
    if not isinstance(call.args[0], GlobalVar):
        raise TypeInferenceError(
            f"{op_label(call)} expects argument gvar to be a GlobalVar, got "
            f"{call.args[0]!r}")
    args_sinfo = call.args[1].struct_info
    if not isinstance(args_sinfo, TupleStructInfo):
        raise TypeInferenceError(f"{op_label(call)} expects argument args to be a tuple, got {args_sinfo}")
    if len(call.args) == 3 and not isinstance(call.args[2].struct_info, ShapeStructInfo):
        raise TypeInferenceError(
            f"{op_label(call)} expects argument tir_vars to be a shape, got {call.args[2].struct_info}")
    if len(call.sinfo_args) != 1:
        raise TypeInferenceError(
            f"{op_label(call)} expects exactly one sinfo_args entry (the output struct info), "
            f"got {len(call.sinfo_args)}")
    return call.sinfo_args[0]


register_op("relax.call_tir", -1, _infer_call_tir, pattern=OpPatternKind.kOpaque,
            description="Call a PrimFunc in destination-passing style; outputs described by sinfo_args.")


def call_tir(gvar: GlobalVar, args, out_sinfo=None, tir_vars=None, *, out_ty=None) -> Call:
    """`R.call_tir(gvar, args, out_sinfo, tir_vars)`; a list `out_sinfo` means a tuple of outputs.

    `out_ty` is TVM's newest name for `out_sinfo`. A scalar argument (a TIR expression such as
    a symbolic size) is passed as an `R.prim_value`.
    """
    if out_sinfo is None:
        out_sinfo = out_ty
    if isinstance(args, Expr) and not isinstance(args, Tuple):
        args = Tuple([args])
    elif not isinstance(args, Tuple):
        args = Tuple([PrimValue(a) if isinstance(a, PrimExpr) else a for a in args])
    if isinstance(out_sinfo, list | tuple):
        out_sinfo = out_sinfo[0] if len(out_sinfo) == 1 else TupleStructInfo(out_sinfo)
    if not isinstance(out_sinfo, TensorStructInfo | TupleStructInfo):
        raise TypeInferenceError(f"'call_tir' expects out_sinfo to be tensor struct info, got {out_sinfo!r}")
    call_args = [gvar, args]
    if tir_vars is not None:
        call_args.append(tir_vars if isinstance(tir_vars, Expr) else ShapeExpr(tir_vars))
    return Call(Op.get("relax.call_tir"), call_args, sinfo_args=[out_sinfo])


def _infer_call_tir_inplace(call, bb) -> StructInfo:
    sinfo = _infer_call_tir(call, bb)
    indices = call.attrs.get("inplace_indices") or ()
    n_args = len(call.args[1].struct_info.fields)
    outs = sinfo.fields if isinstance(sinfo, TupleStructInfo) else (sinfo,)
    if len(indices) != len(outs):
        raise TypeInferenceError(f"{op_label(call)} expects one inplace index per output ({len(outs)}), got "
                                 f"{list(indices)}")
    used = set()
    for i, (index, out) in enumerate(zip(indices, outs)):
        if index == -1:
            continue
        if not 0 <= index < n_args:
            raise TypeInferenceError(f"{op_label(call)}: inplace index {index} is out of range for "
                                     f"{n_args} argument(s)")
        if index in used:
            raise TypeInferenceError(f"{op_label(call)}: argument {index} is used in place twice")
        used.add(index)
        arg = call.args[1].struct_info.fields[index]
        if not isinstance(arg, TensorStructInfo) or (arg.dtype != out.dtype and not arg.is_unknown_dtype):
            raise TypeInferenceError(f"{op_label(call)}: output {i} is computed in place in argument "
                                     f"{index}, "
                                     f"so both must be tensors of one dtype; got {arg} and {out}")
    return sinfo


register_op("relax.call_tir_inplace", -1, _infer_call_tir_inplace, pattern=OpPatternKind.kOpaque,
            attrs={"inplace_indices": "for each output, the argument it overwrites (-1: a new tensor)"},
            description="Call a PrimFunc that writes some outputs into its arguments.")


def call_tir_inplace(gvar: GlobalVar, args, inplace_indices, out_sinfo, tir_vars=None) -> Call:
    """`R.call_tir_inplace(gvar, args, inplace_indices, out_sinfo)`: output i overwrites argument
    `inplace_indices[i]` (-1: a freshly allocated output passed after the arguments)."""
    call = call_tir(gvar, args, out_sinfo, tir_vars)
    indices = [inplace_indices] if isinstance(inplace_indices, int) else list(inplace_indices)
    return Call(Op.get("relax.call_tir_inplace"), call.args, {"inplace_indices": tuple(indices)},
                call.sinfo_args)
