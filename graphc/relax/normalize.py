"""The Normalizer: A-normal form and struct-info inference, the core of the BlockBuilder.

Normal form (TVM's): a call's arguments are leaves (vars, constants, shapes, ...) or tuples
of leaves, every other sub-expression is bound to a variable first, and every expression
carries struct info. `Normalizer.normalize` rebuilds only what changed and returns the
expression itself when it was already normal. Nested expressions are bound through
`_emit_value`, which the BlockBuilder implements.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("f", [x]):
...     y = bb.emit(relax.op.add(relax.op.multiply(x, x), x))
...     _ = bb.emit_func_output(y)
>>> [str(b.value) for b in bb.get()["f"].body.blocks[0].bindings]
['R.multiply(x, x)', 'R.add(gv, x)']
"""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..ir.dispatch import rule_table
from ..ir.module import GlobalVar
from ..tir.arith import Analyzer
from ..tir.function import PrimFunc
from . import expr as relax_expr
from .op.registry import Op, infer_struct_info
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
    erase_to_well_defined,
    struct_info_lca,
    tir_vars_in_struct_info,
)


class Normalizer:
    """Normalizes expressions; subclasses provide `_emit_value`, `mod` and scopes."""

    analyzer: Analyzer

    # -- hooks the BlockBuilder implements ---------------------------------------------------
    def _emit_value(self, expr: relax_expr.Expr) -> relax_expr.Var:
        raise TypeInferenceError(
            f"normalizing {expr!r} needs a binding block to bind sub-expressions to; "
            "use it inside `with bb.function(...)` (or begin_binding_block())"
        )

    def _normalize_scoped(self, expr: relax_expr.Expr) -> relax_expr.SeqExpr:
        """Normalize `expr` in a fresh scope whose bindings become a SeqExpr of their own."""
        raise NotImplementedError

    def _global_struct_info(self, gv: GlobalVar) -> StructInfo:
        return FuncStructInfo.opaque_func()

    # -- entry points ----------------------------------------------------------------------
    def normalize(self, expr) -> relax_expr.Expr:
        """`expr` in A-normal form with struct info everywhere (bindings go to the open block)."""
        if isinstance(expr, list | tuple):
            expr = relax_expr.Tuple(expr)
        if isinstance(expr, GlobalVar | Op):
            return expr
        method = _NORMALIZERS[type(expr)]
        if method is None:
            raise TypeInferenceError(
                f"cannot normalize {type(expr).__name__} {expr!r}: not a Relax "
                f"expression")
        return method(self, expr)

    def normalize_arg(self, expr) -> relax_expr.Expr:
        """A call argument: a leaf, or a tuple of normalized arguments; anything else is bound."""
        expr = self.normalize(expr)
        if relax_expr.is_leaf(expr) or isinstance(expr, relax_expr.Tuple):
            return expr
        return self._emit_value(expr)

    # -- per node kind ---------------------------------------------------------------------
    def _leaf(self, expr: relax_expr.Expr) -> relax_expr.Expr:
        if expr.struct_info_ is None:
            raise TypeInferenceError(
                f"{type(expr).__name__} {expr!r} has no struct info; give Vars "
                f"one at creation")
        return expr

    def _tuple(self, expr: relax_expr.Tuple) -> relax_expr.Tuple:
        fields = tuple(self.normalize_arg(f) for f in expr.fields)
        if all(a is b for a, b in zip(fields, expr.fields)) and expr.struct_info_ is not None:
            return expr
        return relax_expr.Tuple(fields)

    def _tuple_get_item(self, expr: relax_expr.TupleGetItem) -> relax_expr.TupleGetItem:
        value = self.normalize_arg(expr.tuple_value)
        new = expr.replace(tuple_value=value)
        if new.struct_info_ is None:
            sinfo = value.struct_info
            if not isinstance(sinfo, TupleStructInfo):
                if isinstance(sinfo, ObjectStructInfo):
                    relax_expr.set_struct_info(new, ObjectStructInfo())
                    return new
                raise TypeInferenceError(
                    f"TupleGetItem expects a tuple, got {value!r} of struct "
                    f"info {sinfo}")
            if not 0 <= expr.index < len(sinfo.fields):
                raise TypeInferenceError(
                    f"TupleGetItem index {expr.index} out of range for a tuple of {len(sinfo.fields)} fields "
                    f"({sinfo})")
            relax_expr.set_struct_info(new, sinfo.fields[expr.index])
        return new

    def _call(self, call: relax_expr.Call) -> relax_expr.Call:
        op = call.op if isinstance(call.op, Op | GlobalVar) else self.normalize_arg(call.op)
        args = tuple(self.normalize_arg(a) for a in call.args)
        same = op is call.op and all(a is b for a, b in zip(args, call.args))
        new = call if same else relax_expr.Call(op, args, call.attrs, call.sinfo_args)
        if new.struct_info_ is None:
            relax_expr.set_struct_info(new, self._infer_call(new))
        return new

    def _infer_call(self, call: relax_expr.Call) -> StructInfo:
        if isinstance(call.op, Op):
            return infer_struct_info(call, self)
        if call.sinfo_args:
            return call.sinfo_args[0]
        callee = self._global_struct_info(call.op) if isinstance(call.op, GlobalVar) else call.op.struct_info
        if not isinstance(callee, FuncStructInfo):
            raise TypeInferenceError(
                f"calling {call.op!r}, which is not a function: its struct "
                f"info is {callee}")
        return derive_call_ret_struct_info(callee, call, self.analyzer, self._global_struct_info)

    def _if(self, expr: relax_expr.If) -> relax_expr.If:
        cond = self.normalize_arg(expr.cond)
        sinfo = cond.struct_info
        if not (isinstance(sinfo, PrimStructInfo) and sinfo.dtype == "bool") and not (
                isinstance(sinfo, TensorStructInfo) and sinfo.dtype == "bool" and sinfo.ndim in (0, -1)):
            raise TypeInferenceError(
                f"If expects a boolean scalar condition, got {cond!r} of "
                f"struct info {sinfo}")
        true_branch = self._normalize_scoped(expr.true_branch)
        false_branch = self._normalize_scoped(expr.false_branch)
        new = expr.replace(cond=cond, true_branch=true_branch, false_branch=false_branch)
        if new.struct_info_ is None:
            relax_expr.set_struct_info(new, struct_info_lca(true_branch.struct_info,
                                                            false_branch.struct_info))
        return new

    def _seq(self, expr: relax_expr.SeqExpr) -> relax_expr.SeqExpr:
        return self._normalize_scoped(expr)

    def _function(self, func: relax_expr.Function) -> relax_expr.Function:
        body = self._normalize_scoped(func.body)
        new = func.replace(body=body)
        if new.struct_info_ is None:
            new = relax_expr.Function(new.params, body, None, new.is_pure, new.attrs)
        return new


_NORMALIZERS = rule_table({
    relax_expr.Var: Normalizer._leaf, relax_expr.LeafExpr: Normalizer._leaf,
    relax_expr.Tuple: Normalizer._tuple,
    relax_expr.TupleGetItem: Normalizer._tuple_get_item, relax_expr.Call: Normalizer._call,
    relax_expr.If: Normalizer._if,
    relax_expr.SeqExpr: Normalizer._seq, relax_expr.Function: Normalizer._function,
})


def derive_call_ret_struct_info(func_sinfo: FuncStructInfo, call: relax_expr.Call, analyzer: Analyzer,
                                global_struct_info=None) -> StructInfo:
    """The callee's return struct info with its symbolic vars bound from the arguments' shapes.

    Parameters `(n,)` called with `(8,)` map `n -> 8`; return dims that mention vars the
    arguments do not determine are erased (the result keeps its rank). A function passed as
    an argument (a GlobalVar) has the struct info `global_struct_info(gv)` gives (default:
    an opaque function).
    """
    if func_sinfo.params is None:
        return func_sinfo.ret
    if len(func_sinfo.params) != len(call.args):
        raise TypeInferenceError(
            f"calling {call.op!r} with {len(call.args)} argument(s); the function takes "
            f"{len(func_sinfo.params)}")
    vmap: dict = {}
    for i, (param, arg) in enumerate(zip(func_sinfo.params, call.args)):
        if isinstance(arg, GlobalVar):
            arg_sinfo = global_struct_info(arg) if global_struct_info else FuncStructInfo.opaque_func()
        else:
            arg_sinfo = arg.struct_info
        _match(param, arg_sinfo, vmap, call, i)
    free = tir_vars_in_struct_info(func_sinfo.ret)
    if not free:
        return func_sinfo.ret
    return erase_to_well_defined(func_sinfo.ret, vmap)


def _match(param: StructInfo, arg: StructInfo, vmap: dict, call: relax_expr.Call, index: int) -> None:
    from ..tir.expr import Var as TIRVar
    from .struct_info import is_base_of

    if isinstance(param, TensorStructInfo | ShapeStructInfo) and type(arg) is type(param):
        pdims = param.shape_values if isinstance(param, TensorStructInfo) else param.values
        adims = arg.shape_values if isinstance(arg, TensorStructInfo) else arg.values
        if pdims is not None and adims is not None and len(pdims) == len(adims):
            for p, a in zip(pdims, adims):
                if isinstance(p, TIRVar) and p not in vmap:
                    vmap[p] = a
        if isinstance(param, TensorStructInfo) and not param.is_unknown_dtype and \
                not arg.is_unknown_dtype and param.dtype != arg.dtype:
            raise TypeInferenceError(
                f"calling {call.op!r}: argument {index} expects {param}, got {arg}")
        return
    if isinstance(param, TupleStructInfo) and isinstance(arg, TupleStructInfo):
        for p, a in zip(param.fields, arg.fields):
            _match(p, a, vmap, call, index)
        return
    if not is_base_of(param, arg) and not is_base_of(arg, param):
        raise TypeInferenceError(f"calling {call.op!r}: argument {index} expects {param}, got {arg}")


def global_struct_info(func) -> StructInfo:
    """The struct info a GlobalVar bound to `func` has: a Relax function's own, or opaque."""
    if isinstance(func, relax_expr.Function):
        return func.struct_info
    if isinstance(func, PrimFunc):
        return FuncStructInfo.opaque_func(ObjectStructInfo(), purity=False)
    return ObjectStructInfo()
