"""`well_formed`: check the invariants every Relax pass must preserve.

Checked: every var is defined before use and only once; dataflow vars are bound only in
dataflow blocks and used only inside theirs; dataflow blocks hold no `If`; calls are in
A-normal form (arguments are leaves or tuples of leaves); every expression has struct info;
symbolic vars are defined (a bare dimension of a parameter, or a match_cast target) before
use; GlobalVars name functions of the module.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> lv = relax.DataflowVar("lv", x.struct_info)
>>> body = relax.SeqExpr([relax.DataflowBlock([relax.VarBinding(lv, x)])], lv)
>>> body = relax.BlockBuilder().normalize(body)
>>> well_formed(relax.Function([x], body, x.struct_info))
False
>>> WellFormedChecker().check(relax.Function([x], body, x.struct_info))
["dataflow var 'lv' used outside its dataflow block (in the body of a SeqExpr)"]
"""

from __future__ import annotations

from ...errors import VerifyError
from ...ir.module import GlobalVar, IRModule
from ..expr import (
    Call,
    DataflowBlock,
    DataflowVar,
    Expr,
    Function,
    If,
    MatchCast,
    SeqExpr,
    Tuple,
    Var,
    is_leaf,
)
from ..expr_functor import ExprVisitor
from ..struct_info import defined_tir_vars, tir_vars_in_expr, tir_vars_in_struct_info


class WellFormedChecker(ExprVisitor):
    """Collects a message for every violation; `check(mod_or_func)` returns them."""

    def __init__(self, mod: IRModule | None = None, check_struct_info: bool = True):
        self.mod = mod
        self.check_struct_info = check_struct_info
        self.errors: list[str] = []
        self.defined: set = set()
        self.visible: list[set] = [set()]
        self.dataflow_scope: set | None = None
        self.tir_defined: set = set()
        self.where = ""

    def check(self, node) -> list[str]:
        if isinstance(node, IRModule):
            self.mod = node
            for gv, func in node.items():
                if isinstance(func, Function):
                    self.where = f"function {gv.name_hint!r}"
                    self._reset()
                    self.visit_expr(func)
        else:
            self._reset()
            self.visit_expr(node)
        return self.errors

    def _reset(self) -> None:
        self.defined, self.visible, self.dataflow_scope, self.tir_defined = set(), [set()], None, set()

    def error(self, message: str) -> None:
        self.errors.append(message + (f" in {self.where}" if self.where else ""))

    # -- expressions -------------------------------------------------------------------------
    def visit_expr(self, expr) -> None:
        if self.check_struct_info and isinstance(expr, Expr) and expr.struct_info_ is None:
            self.error(f"{type(expr).__name__} {expr!r} has no struct info")
        super().visit_expr(expr)

    def visit_Var(self, var: Var) -> None:
        if not any(var in scope for scope in self.visible):
            kind = "dataflow var" if isinstance(var, DataflowVar) else "var"
            if isinstance(var, DataflowVar) and var in self.defined:
                self.error(
                    f"dataflow var {var.name_hint!r} used outside its dataflow block "
                    f"({self._context})")
            else:
                self.error(f"{kind} {var.name_hint!r} is used before it is defined ({self._context})")

    def visit_GlobalVar(self, gv: GlobalVar) -> None:
        if self.mod is not None and gv.name_hint not in self.mod:
            self.error(f"GlobalVar {gv.name_hint!r} names no function of the module")

    def visit_prim_expr(self, expr) -> None:
        self._check_symbols(tir_vars_in_expr(expr), "a shape or scalar value")

    def visit_Call(self, call: Call) -> None:
        for arg in call.args:
            if not _normal_arg(arg):
                self.error(f"call {call!r} is not in A-normal form: argument {type(arg).__name__} "
                           f"{arg!r} must be bound to a var first")
        for sinfo in call.sinfo_args:
            self._check_symbols(tir_vars_in_struct_info(sinfo), f"the sinfo_args of {call!r}")
        self._context = f"in {call!r}"
        super().visit_Call(call)

    def visit_SeqExpr(self, expr: SeqExpr) -> None:
        self.visible.append(set())
        for block in expr.blocks:
            self.visit_block(block)
        self._context = "in the body of a SeqExpr"
        if not _normal_arg(expr.body):
            self.error(f"the body of a SeqExpr must be a leaf or a tuple of leaves, got {expr.body!r}")
        self.visit_expr(expr.body)
        self.visible.pop()

    def visit_Function(self, func: Function) -> None:
        saved = self.tir_defined
        self.tir_defined = set(saved)
        self.visible.append(set())
        for param in func.params:
            for v in defined_tir_vars(param.struct_info):
                self.tir_defined.add(v)
        for param in func.params:
            self._check_symbols(tir_vars_in_struct_info(param.struct_info), f"parameter {param.name_hint!r}")
            self.visit_var_def(param)
        if func.ret_struct_info is not None:
            self._check_symbols(tir_vars_in_struct_info(func.ret_struct_info), "the return struct info")
        self.visit_expr(func.body)
        self.visible.pop()
        self.tir_defined = saved

    _context = ""

    # -- blocks and bindings -------------------------------------------------------------------
    def visit_dataflow_block(self, block: DataflowBlock) -> None:
        self.dataflow_scope = set()
        self.visible.append(self.dataflow_scope)
        for binding in block.bindings:
            if isinstance(binding.value, If):
                self.error(f"dataflow block binds {binding.var.name_hint!r} to an If; "
                           "control flow is not allowed in dataflow blocks")
            self.visit_binding(binding)
        self.visible.pop()
        self.dataflow_scope = None

    def visit_var_binding(self, binding) -> None:
        self._context = f"in the binding of {binding.var.name_hint!r}"
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_match_cast(self, binding: MatchCast) -> None:
        self._context = f"in the binding of {binding.var.name_hint!r}"
        self.visit_expr(binding.value)
        for v in defined_tir_vars(binding.struct_info):
            self.tir_defined.add(v)
        self._check_symbols(tir_vars_in_struct_info(binding.struct_info), f"match_cast "
                                                                          f"{binding.var.name_hint!r}")
        self.visit_var_def(binding.var)

    def visit_var_def(self, var: Var) -> None:
        if var in self.defined:
            self.error(f"var {var.name_hint!r} is defined more than once")
        if var.struct_info_ is None:
            self.error(f"var {var.name_hint!r} has no struct info")
        else:
            self._check_symbols(tir_vars_in_struct_info(var.struct_info), f"the struct info of "
                                                                          f"{var.name_hint!r}")
        self.defined.add(var)
        if isinstance(var, DataflowVar):
            if self.dataflow_scope is None:
                self.error(f"dataflow var {var.name_hint!r} is bound outside a dataflow block")
                self.visible[-1].add(var)
            else:
                self.dataflow_scope.add(var)
        else:
            # Non-dataflow vars bound in a dataflow block are visible after it (R.output).
            scope = self.visible[-2] if self.dataflow_scope is not None else self.visible[-1]
            scope.add(var)

    def _check_symbols(self, tir_vars, where: str) -> None:
        for v in tir_vars:
            if v not in self.tir_defined:
                self.error(f"symbolic var {v.name!r} is used in {where} before it is defined "
                           "(define it as a bare dimension of a parameter or with match_cast)")


def _normal_arg(arg) -> bool:
    if isinstance(arg, Tuple):
        return all(_normal_arg(f) for f in arg.fields)
    return is_leaf(arg)


def well_formed(obj, check_struct_info: bool = True) -> bool:
    """True when the module (its Relax functions) or the function satisfies every invariant."""
    return not WellFormedChecker(check_struct_info=check_struct_info).check(obj)


def verify_well_formed(obj, check_struct_info: bool = True) -> None:
    """Raise VerifyError listing every violation, if any."""
    errors = WellFormedChecker(check_struct_info=check_struct_info).check(obj)
    if errors:
        raise VerifyError("Relax IR is not well formed:\n  " + "\n  ".join(errors))
