"""BindParams: replace parameters of a Relax function by constants (weights known at compile time).

`params` maps parameter names (or the parameter Vars themselves) to numpy arrays, graphc
tensors, anything with `.numpy()`, or Relax expressions. Bound parameters disappear from
the function's signature and their uses read the constants. Each value must match its
parameter's dtype, rank and static dimensions; symbolic dimensions (`"n"`) take the
constant's sizes everywhere in the function (shapes, struct info, `call_tir` outputs), and
one symbolic variable bound to two different sizes is an error. The function is found by
its `global_symbol` or, for private functions, by its name.

>>> import numpy as np
>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 2), "float32"))
>>> w = relax.Var("w", relax.TensorStructInfo((n, 2), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x, w]):
...     _ = bb.emit_func_output(bb.emit(relax.op.add(x, w)))
>>> main = BindParams("main", {"w": np.ones((3, 2), "float32")})(bb.get())["main"]
>>> main.params, main.params[0].struct_info
((x,), R.Tensor((3, 2), dtype="float32"))
"""

from __future__ import annotations

import numpy as np

from ...ir.transform import module_pass
from ...tir.arith import Analyzer
from ...tir.expr import IntImm, PrimExpr
from ...tir.expr import Var as TIRVar
from ...tir.functor import substitute
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..struct_info import (
    FuncStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
    is_base_of,
)

__all__ = ["BindParams"]


def _subst(expr: PrimExpr, vmap: dict, analyzer: Analyzer) -> PrimExpr:
    new = substitute(expr, vmap)
    return expr if new is expr else analyzer.simplify(new)


def bind_symbolic_struct_info(sinfo: StructInfo, vmap: dict, analyzer: Analyzer | None = None) -> StructInfo:
    """`sinfo` with the symbolic vars of `vmap` replaced (the same object when none occurs)."""
    if not vmap or sinfo is None:
        return sinfo
    analyzer = analyzer or Analyzer()

    def dims(values):
        new = tuple(_subst(v, vmap, analyzer) for v in values)
        return values if all(a is b for a, b in zip(new, values)) else new

    if isinstance(sinfo, TensorStructInfo):
        values = sinfo.shape_values
        if values is None or dims(values) is values:
            return sinfo
        return TensorStructInfo(dims(values), sinfo.dtype, sinfo.ndim, sinfo.vdevice)
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is None or dims(sinfo.values) is sinfo.values:
            return sinfo
        return ShapeStructInfo(dims(sinfo.values))
    if isinstance(sinfo, PrimStructInfo):
        if sinfo.value is None:
            return sinfo
        value = _subst(sinfo.value, vmap, analyzer)
        return sinfo if value is sinfo.value else PrimStructInfo(sinfo.dtype, value)
    if isinstance(sinfo, TupleStructInfo):
        fields = [bind_symbolic_struct_info(f, vmap, analyzer) for f in sinfo.fields]
        return sinfo if all(a is b for a, b in zip(fields, sinfo.fields)) else TupleStructInfo(fields)
    if isinstance(sinfo, FuncStructInfo) and sinfo.params is not None:
        params = [bind_symbolic_struct_info(p, vmap, analyzer) for p in sinfo.params]
        ret = bind_symbolic_struct_info(sinfo.ret, vmap, analyzer)
        if ret is sinfo.ret and all(a is b for a, b in zip(params, sinfo.params)):
            return sinfo
        return FuncStructInfo(params, ret, sinfo.purity)
    return sinfo


class SymbolicBinder(ExprMutator):
    """Replaces the Relax vars of `values` by their values and the symbolic vars of `tir_map` by
    theirs, everywhere (shapes, struct info, call_tir outputs, match_cast targets)."""

    def __init__(self, mod, values: dict, tir_map: dict):
        super().__init__(mod)
        self.values, self.tir_map = values, tir_map
        self.analyzer = Analyzer()

    def sinfo(self, sinfo):
        return bind_symbolic_struct_info(sinfo, self.tir_map, self.analyzer)

    def visit_Var(self, var):
        if var in self.values:
            return self.values[var]
        return super().visit_Var(var)

    def visit_ShapeExpr(self, expr):
        values = tuple(_subst(v, self.tir_map, self.analyzer) for v in expr.values)
        return expr if all(a is b for a, b in zip(values, expr.values)) else relax_expr.ShapeExpr(values)

    def visit_PrimValue(self, expr):
        value = _subst(expr.value, self.tir_map, self.analyzer)
        return expr if value is expr.value else relax_expr.PrimValue(value)

    def visit_Call(self, call):
        new = super().visit_Call(call)
        sinfo_args = tuple(self.sinfo(s) for s in call.sinfo_args)
        if all(a is b for a, b in zip(sinfo_args, call.sinfo_args)):
            return new
        return relax_expr.Call(new.op, new.args, new.attrs, sinfo_args)

    def visit_var_def(self, var):
        var = super().visit_var_def(var)
        sinfo = self.sinfo(var.struct_info)
        if sinfo is var.struct_info:
            return var
        new = type(var)(var.name_hint, sinfo)
        self.var_remap[var] = new
        return new

    def visit_match_cast(self, binding):
        sinfo = self.sinfo(binding.struct_info)
        if sinfo is binding.struct_info:
            return super().visit_match_cast(binding)
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        if not (relax_expr.is_leaf(value) or isinstance(value, relax_expr.Tuple)):
            value = self.builder.emit(value)
        self.builder.emit_normalized(relax_expr.MatchCast(var, value, sinfo))

    def bind(self, func: relax_expr.Function) -> relax_expr.Function:
        params = tuple(self.visit_var_def(p) for p in func.params if p not in self.values)
        body = self.visit_with_new_scope(func.body)
        ret = self.sinfo(func.ret_struct_info)
        if ret is not None and not is_base_of(ret, body.struct_info, self.builder.analyzer):
            ret = None
        attrs = func.attrs
        num_input = attrs.get("num_input")
        if isinstance(num_input, int):  # bound inputs are no longer inputs
            bound_inputs = sum(1 for p in func.params[:num_input] if p in self.values)
            if bound_inputs:
                attrs = dict(attrs, num_input=num_input - bound_inputs)
        return relax_expr.Function(params, body, ret, func.is_pure, attrs)


def _as_value(value, param: relax_expr.Var):
    if isinstance(value, relax_expr.Expr):
        return value
    if isinstance(value, np.ndarray | np.generic):
        return relax_expr.Constant(np.asarray(value))
    if hasattr(value, "numpy") and hasattr(value, "shape") and hasattr(value, "dtype"):
        from ...runtime import Tensor

        if isinstance(value, Tensor):
            return relax_expr.Constant(value)
        if hasattr(value, "detach"):  # a torch tensor: no autograd graph, on the CPU
            value = value.detach().cpu()
        return relax_expr.Constant(np.require(value.numpy(), requirements="C"))
    raise TypeError(f"BindParams: parameter {param.name_hint!r} is bound to a {type(value).__name__}; "
                    "expected a numpy array, a graphc tensor or a Relax expression")


def _match(param: relax_expr.Var, value: relax_expr.Expr, tir_map: dict, where: str) -> None:
    """Check `value` against `param`'s struct info, recording symbolic sizes in `tir_map`."""
    expected, actual = param.struct_info, value.struct_info
    label = f"BindParams: parameter {param.name_hint!r} of {where}"
    if not isinstance(expected, TensorStructInfo) or not isinstance(actual, TensorStructInfo):
        if not is_base_of(expected, actual):
            raise ValueError(f"{label} expects {expected}, got {actual}")
        return
    if not expected.is_unknown_dtype and expected.dtype != actual.dtype:
        raise ValueError(f"{label} expects dtype {expected.dtype}, got a value of dtype {actual.dtype}")
    if expected.ndim != -1 and expected.ndim != actual.ndim:
        raise ValueError(f"{label} expects a tensor of rank {expected.ndim} ({expected}), got rank "
                         f"{actual.ndim} ({actual})")
    dims, sizes = expected.shape_values, actual.shape_values
    if dims is None or sizes is None:
        return
    for axis, (dim, size) in enumerate(zip(dims, sizes)):
        if isinstance(dim, TIRVar):
            known = tir_map.setdefault(dim, size)
            if isinstance(known, IntImm) and isinstance(size, IntImm) and known.value != size.value:
                raise ValueError(f"{label}: symbolic dimension {dim.name} is {known.value} from an earlier "
                                 f"parameter but {size.value} here (axis {axis}, value shape "
                                 f"{tuple(int(s) for s in sizes)})")
    analyzer = Analyzer()
    for axis, (dim, size) in enumerate(zip(dims, sizes)):
        dim = _subst(dim, tir_map, analyzer)
        if isinstance(dim, IntImm) and isinstance(size, IntImm) and dim.value != size.value:
            raise ValueError(f"{label} expects shape {expected}, got a value of shape "
                             f"{tuple(int(s) for s in sizes)} (axis {axis}: {dim.value} != {size.value})")


def _find_function(mod, func_name: str):
    for gv, func in mod.items():
        if not isinstance(func, relax_expr.Function):
            continue
        symbol = func.attrs.get("global_symbol")
        if symbol == func_name or (symbol is None and gv.name_hint == func_name):
            return gv, func
    names = ", ".join(gv.name_hint for gv, f in mod.items() if isinstance(f, relax_expr.Function)) or "none"
    raise ValueError(f"BindParams: the module has no Relax function {func_name!r} "
                     f"(its Relax functions: {names})")


@module_pass(opt_level=0, name="BindParams")
class BindParams:
    """Bind parameters of the Relax function `func_name` to constants (see the module docstring)."""

    def __init__(self, func_name: str, params: dict):
        self.func_name = func_name
        self.params = dict(params)

    def transform_module(self, mod, ctx):
        gv, func = _find_function(mod, self.func_name)
        by_name: dict = {}
        for p in func.params:
            by_name.setdefault(p.name_hint, []).append(p)
        values: dict = {}
        for key, value in self.params.items():
            if isinstance(key, relax_expr.Var):
                if key not in func.params:
                    raise ValueError(f"BindParams: {key.name_hint!r} is not a parameter of function "
                                     f"{self.func_name!r}")
                param = key
            else:
                found = by_name.get(key)
                if not found:
                    names = ", ".join(p.name_hint for p in func.params)
                    raise ValueError(f"BindParams: function {self.func_name!r} has no parameter named "
                                     f"{key!r} (its parameters: {names})")
                if len(found) > 1:
                    raise ValueError(f"BindParams: function {self.func_name!r} has {len(found)} parameters "
                                     f"named {key!r}; pass the Var itself to say which")
                param = found[0]
            if param in values:
                raise ValueError(f"BindParams: parameter {param.name_hint!r} is bound twice")
            values[param] = _as_value(value, param)
        if not values:
            return mod
        tir_map: dict = {}
        for param, value in values.items():
            _match(param, value, tir_map, f"function {self.func_name!r}")
        mod[gv] = SymbolicBinder(mod, values, tir_map).bind(func)
        return mod
