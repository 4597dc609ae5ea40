"""DeadCodeElimination: drop unused pure bindings and functions no entry function reaches.

A binding is dead when nothing live uses its var (transitively, up to the function's
result) and its value calls nothing impure; dataflow blocks hold only pure bindings, so
everything unused there goes. A `match_cast` that defines symbolic variables is kept (later
struct info may mention them). Functions are removed when no entry function reaches them:
the entry functions are those named in `entry_functions` plus every externally visible one
(a `global_symbol` attribute; private functions have none). As in TVM, nothing is removed
when some function refers to a GlobalVar the module does not hold.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         unused = bb.emit(relax.op.exp(x))
...         gv = bb.emit_output(relax.op.nn.relu(x))
...     _ = bb.emit_func_output(gv)
>>> after = DeadCodeElimination()(bb.get())
>>> [str(b.value) for b in after["main"].body.blocks[0].bindings]
['R.nn.relu(x)']
"""

from __future__ import annotations

from ...ir.module import GlobalVar, IRModule
from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..analysis import all_global_vars, free_vars
from ..expr_functor import ExprMutator, ExprVisitor
from ..op.registry import Op
from ..struct_info import FuncStructInfo, defined_tir_vars, tir_vars_in_struct_info

__all__ = ["DeadCodeElimination"]


# --- purity ---------------------------------------------------------------------------------


def _is_impure_call(call: relax_expr.Call, mod: IRModule | None) -> bool:
    op = call.op
    if isinstance(op, Op):
        return not op.info.purity
    if isinstance(op, GlobalVar):
        func = mod[op] if mod is not None and op in mod else None
        return not (isinstance(func, relax_expr.Function) and func.is_pure)
    if isinstance(op, relax_expr.ExternFunc):
        return True  # a packed runtime function may do anything
    sinfo = op.struct_info_ if isinstance(op, relax_expr.Expr) else None
    return not (isinstance(sinfo, FuncStructInfo) and sinfo.purity)


class _ImpureFinder(ExprVisitor):
    def __init__(self, mod):
        self.mod, self.found = mod, False

    def visit_Call(self, call):
        if _is_impure_call(call, self.mod):
            self.found = True
        super().visit_Call(call)

    def visit_Function(self, func):
        pass  # defining a function runs nothing


def contains_impure_call(expr, mod: IRModule | None = None) -> bool:
    """Whether evaluating `expr` may call an impure operator or function (nested function
    bodies are not evaluated, so they do not count)."""
    finder = _ImpureFinder(mod)
    finder.visit_expr(expr)
    return finder.found


# --- unused bindings ------------------------------------------------------------------------


class _BindingCollector(ExprVisitor):
    """Every binding of the function (nested scopes included) and the vars SeqExpr bodies use."""

    def __init__(self):
        self.bindings: dict = {}
        self.roots: set = set()
        self.param_symbols: set = set()

    def visit_Function(self, func):
        for p in func.params:
            self.param_symbols.update(defined_tir_vars(p.struct_info))
        super().visit_Function(func)

    def visit_SeqExpr(self, expr):
        super().visit_SeqExpr(expr)
        self.roots.update(free_vars(expr.body))

    def visit_binding(self, binding):
        self.bindings[binding.var] = binding
        super().visit_binding(binding)


def _dead_bindings(func: relax_expr.Function, mod: IRModule | None) -> set:
    collector = _BindingCollector()
    collector.visit_expr(func)
    live: set = set(collector.roots)
    for var, binding in collector.bindings.items():
        if _must_keep(binding, mod, collector.param_symbols):
            live.add(var)
    work = list(live)
    while work:
        binding = collector.bindings.get(work.pop())
        if binding is None:
            continue
        deps = free_vars(binding.value)
        shape = getattr(binding.var.struct_info_, "shape", None)
        if isinstance(shape, relax_expr.Var):
            deps.append(shape)
        for dep in deps:
            if dep not in live:
                live.add(dep)
                work.append(dep)
    return {var for var in collector.bindings if var not in live}


def _must_keep(binding, mod, param_symbols: set) -> bool:
    if isinstance(binding, relax_expr.MatchCast):
        # it may define symbolic vars that later struct info relies on
        if any(v not in param_symbols for v in tir_vars_in_struct_info(binding.struct_info)):
            return True
    return contains_impure_call(binding.value, mod)


class _Remover(ExprMutator):
    def __init__(self, dead: set, mod):
        super().__init__(mod)
        self.dead = dead

    def visit_binding(self, binding):
        if binding.var not in self.dead:
            super().visit_binding(binding)


def remove_all_unused(func: relax_expr.Function, mod: IRModule | None = None) -> relax_expr.Function:
    """`func` without its dead bindings (the same object when there are none; TVM's
    `RemoveAllUnused`). `mod` resolves calls of module functions for purity."""
    dead = _dead_bindings(func, mod)
    while dead:
        # removing bindings inside a branch can free vars the branch used: go to a fixpoint
        func = _Remover(dead, mod).visit_expr(func)
        dead = _dead_bindings(func, mod)
    return func


# --- unused functions -----------------------------------------------------------------------


def is_externally_visible(func) -> bool:
    """Functions with a `global_symbol` attribute (and extern functions) are callable from outside."""
    if isinstance(func, relax_expr.ExternFunc):
        return True
    attrs = getattr(func, "attrs", None) or {}
    return attrs.get("global_symbol") is not None


def _remove_unreachable(mod: IRModule, entries: set) -> IRModule:
    callees = {gv: all_global_vars(f) if isinstance(f, relax_expr.Function) else [] for gv,
               f in mod.functions.items()}
    reachable, work = set(entries), list(entries)
    while work:
        gv = work.pop()
        for callee in callees.get(gv, ()):
            if callee.name_hint not in mod:
                return mod  # a call leaves the module: we cannot see everything, keep all (TVM)
            callee = mod.get_global_var(callee.name_hint)
            if callee not in reachable:
                reachable.add(callee)
                work.append(callee)
    dead = [gv for gv in mod.functions if gv not in reachable]
    if not dead:
        return mod
    out = mod.copy()
    for gv in dead:
        del out[gv]
    return out


@module_pass(opt_level=1, name="DeadCodeElimination")
class DeadCodeElimination:
    """Remove unused pure bindings and the functions no entry function reaches.

    `entry_functions` names functions to keep besides the externally visible ones.
    """

    def __init__(self, entry_functions=None):
        if isinstance(entry_functions, str):
            entry_functions = [entry_functions]
        self.entry_functions = list(entry_functions or ())

    def transform_module(self, mod, ctx):
        entries = set()
        for name in self.entry_functions:
            if name not in mod:
                names = ", ".join(gv.name_hint for gv in mod.get_global_vars()) or "none"
                raise ValueError(f"DeadCodeElimination: entry function {name!r} is not in the module "
                                 f"(it has: {names})")
            entries.add(mod.get_global_var(name))
        entries.update(gv for gv, func in mod.functions.items() if is_externally_visible(func))
        mod = _remove_unreachable(mod, entries)
        changed = False
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function):
                new = remove_all_unused(func, mod)
                if new is not func:
                    if not changed:
                        mod, changed = mod.copy(), True
                    mod[gv] = new
        return _remove_unreachable(mod, entries)
