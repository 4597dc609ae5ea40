"""Variable collections: free, bound, used and all Relax vars, global vars, free symbolic vars.

Results are lists in order of first appearance (deterministic for passes that name things).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("f", [x]):
...     _ = bb.emit_func_output(bb.emit(relax.op.nn.relu(x)))
>>> f = bb.get()["f"]
>>> [v.name_hint for v in bound_vars(f)], free_vars(f), [v.name_hint for v in all_vars(f)]
(['x', 'gv'], [], ['x', 'gv'])
>>> [v.name_hint for v in used_vars(f)]
['x', 'gv']
"""

from __future__ import annotations

from ...ir.module import GlobalVar
from ..expr_functor import ExprVisitor
from ..struct_info import defined_tir_vars, tir_vars_in_expr, tir_vars_in_struct_info


class _VarCollector(ExprVisitor):
    def __init__(self):
        self.bound: dict = {}
        self.used: dict = {}
        self.globals: dict = {}
        self.tir_used: dict = {}
        self.tir_defined: dict = {}

    def visit_Function(self, func):
        for param in func.params:
            for v in defined_tir_vars(param.struct_info):
                self.tir_defined.setdefault(v, None)
        if func.ret_struct_info is not None:
            for v in tir_vars_in_struct_info(func.ret_struct_info):
                self.tir_used.setdefault(v, None)
        super().visit_Function(func)

    def visit_var_def(self, var):
        self.bound.setdefault(var, None)
        for v in tir_vars_in_struct_info(var.struct_info_) if var.struct_info_ is not None else ():
            self.tir_used.setdefault(v, None)

    def visit_Var(self, var):
        self.used.setdefault(var, None)

    def visit_GlobalVar(self, gv):
        self.globals.setdefault(gv, None)

    def visit_prim_expr(self, expr):
        for v in tir_vars_in_expr(expr):
            self.tir_used.setdefault(v, None)

    def visit_match_cast(self, binding):
        super().visit_match_cast(binding)
        for v in defined_tir_vars(binding.struct_info):
            self.tir_defined.setdefault(v, None)
        for v in tir_vars_in_struct_info(binding.struct_info):
            self.tir_used.setdefault(v, None)

    def visit_Call(self, call):
        super().visit_Call(call)
        for sinfo in call.sinfo_args:
            for v in tir_vars_in_struct_info(sinfo):
                self.tir_used.setdefault(v, None)


def _collect(expr) -> _VarCollector:
    collector = _VarCollector()
    collector.visit_expr(expr)
    return collector


class _UsedVars(ExprVisitor):
    def __init__(self, skip_call):
        self.used: dict = {}
        self.skip_call = skip_call

    def visit_Var(self, var):
        self.used[var] = None

    def visit_Call(self, call):
        if self.skip_call is None or not self.skip_call(call):
            super().visit_Call(call)


def used_vars(expr, skip_call=None) -> list:
    """Relax vars `expr` reads, defined inside it or not, in order of first use.

    Calls for which `skip_call(call)` is true are not looked into (e.g. a kill is not a use).

    >>> from graphc import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
    >>> [v.name_hint for v in used_vars(relax.op.add(x, x))]
    ['x']
    >>> used_vars(relax.op.add(x, x), skip_call=lambda call: True)
    []
    """
    collector = _UsedVars(skip_call)
    collector.visit_expr(expr)
    return list(collector.used)


def free_vars(expr) -> list:
    """Relax vars used in `expr` but not defined inside it."""
    c = _collect(expr)
    return [v for v in c.used if v not in c.bound]


def bound_vars(expr) -> list:
    """Relax vars defined inside `expr` (parameters and binding vars)."""
    return list(_collect(expr).bound)


def all_vars(expr) -> list:
    """Every Relax var defined or used in `expr`."""
    c = _collect(expr)
    return list(dict.fromkeys(list(c.bound) + list(c.used)))


def all_global_vars(expr) -> list:
    """Every GlobalVar `expr` refers to (called functions, call_tir targets)."""
    return [gv for gv in _collect(expr).globals if isinstance(gv, GlobalVar)]


def free_symbolic_vars(expr) -> list:
    """Symbolic tir.Vars `expr` uses (in shapes, scalars, struct info) without defining them.

    Parameters' bare dimensions and match_cast targets define symbolic vars (TVM's rule).
    """
    c = _collect(expr)
    return [v for v in c.tir_used if v not in c.tir_defined]
