"""CanonicalizeBindings: remove trivial bindings so that each value is bound once, directly.

Rewrites, as TVM's pass does:

- `y = x` (and `y = R.match_cast(x, S)` when `S` is exactly `x`'s struct info, and `y = t[i]`
  when `t` is bound to a tuple whose field `i` is a var) removes `y`; uses of `y` read `x`;
- an output var bound to a dataflow var (`gv = lv; R.output(gv)`) takes over `lv`'s binding
  (`gv = <value of lv>`), so no dataflow var has to escape;
- a non-dataflow var bound in a dataflow block but used only inside it becomes a dataflow var;
- uses of vars bound to constants read the constant;
- a symbolic var that a `match_cast` defines from a value whose size is known
  (`R.match_cast(x, R.Tensor(("n",)))` with `x: R.Tensor((4,))`) is replaced by that size
  after it, which makes the cast itself trivial (TVM's CanonicalizeTIRVariables step).

Bindings left unused stay (DeadCodeElimination removes them).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         lv = bb.emit(relax.op.exp(x))
...         lv1 = bb.emit(lv)
...         gv = bb.emit_output(lv1)
...     _ = bb.emit_func_output(gv)
>>> after = CanonicalizeBindings()(bb.get())["main"]
>>> [(b.var.name_hint, str(b.value)) for b in after.body.blocks[0].bindings], after.body.body
([('gv', 'R.exp(x)')], gv)
"""

from __future__ import annotations

from ...ir.transform import module_pass
from ...tir.expr import IntImm
from ...tir.expr import Var as TIRVar
from .. import expr as relax_expr
from ..expr_functor import ExprMutator, ExprVisitor
from ..struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo
from .bind_params import SymbolicBinder
from .eliminate_common_subexpr import identity_key

__all__ = ["CanonicalizeBindings"]


def _infer_symbols(cast, actual, known: dict, where: str) -> None:
    """Record in `known` what the bare symbolic dims of `cast` are in `actual` (a value's info)."""
    if isinstance(cast, TupleStructInfo) and isinstance(actual, TupleStructInfo):
        for c, a in zip(cast.fields, actual.fields):
            _infer_symbols(c, a, known, where)
        return
    if isinstance(cast, TensorStructInfo) and isinstance(actual, TensorStructInfo):
        dims, values = cast.shape_values, actual.shape_values
    elif isinstance(cast, ShapeStructInfo) and isinstance(actual, ShapeStructInfo):
        dims, values = cast.values, actual.values
    else:
        return
    if dims is None or values is None or len(dims) != len(values):
        return
    for dim, value in zip(dims, values):
        if not isinstance(dim, TIRVar) or value is dim:
            continue
        old = known.setdefault(dim, value)
        if isinstance(old, IntImm) and isinstance(value, IntImm) and old.value != value.value:
            raise ValueError(f"CanonicalizeBindings: match_casts disagree: {where} implies that "
                             f"{dim.name} is {value.value}, an earlier one that it is {old.value}")


class _SymbolicCanonicalizer(SymbolicBinder):
    """Replaces symbolic vars defined by match_casts of values of known size by that size."""

    def __init__(self, mod):
        super().__init__(mod, {}, {})

    def visit_match_cast(self, binding):
        value = self.visit_expr(binding.value)
        _infer_symbols(binding.struct_info, value.struct_info, self.tir_map,
                       f"the match_cast of {binding.var.name_hint!r}")
        super().visit_match_cast(binding)

    def visit_If(self, expr):
        saved = dict(self.tir_map)
        cond = self.visit_expr(expr.cond)
        branches = []
        for branch in (expr.true_branch, expr.false_branch):
            branches.append(self.visit_with_new_scope(branch))
            self.tir_map = dict(saved)
        if cond is expr.cond and branches[0] is expr.true_branch and branches[1] is expr.false_branch:
            return expr
        return relax_expr.If(cond, *branches)

    def visit_Function(self, func):
        saved = dict(self.tir_map)
        out = super().visit_Function(func)
        self.tir_map = saved
        return out


class _Planner(ExprVisitor):
    """Collects trivial bindings, constants and where each var is defined and used."""

    def __init__(self):
        self.block = None
        self.def_block: dict = {}
        self.defined_in_dataflow: list = []
        self.used_outside_home: set = set()
        self.trivial: dict = {}
        self.constants: dict = {}
        self.known: dict = {}

    def _in_dataflow(self) -> bool:
        return isinstance(self.block, relax_expr.DataflowBlock)

    def visit_SeqExpr(self, expr):
        saved, self.block = self.block, None
        super().visit_SeqExpr(expr)
        self.block = saved

    def visit_Function(self, func):
        saved, self.block = self.block, None
        super().visit_Function(func)
        self.block = saved

    def visit_block(self, block):
        self.block = block
        super().visit_block(block)
        self.block = None

    def visit_binding(self, binding):
        value = binding.value
        # a match_cast to exactly the value's struct info checks nothing and defines nothing
        same_sinfo = not isinstance(binding, relax_expr.MatchCast) or identity_key(
            binding.var.struct_info) == identity_key(value.struct_info)
        if isinstance(value, relax_expr.TupleGetItem):
            tup = value.tuple_value
            while isinstance(tup, relax_expr.Var) and tup in self.known:
                tup = self.known[tup]
            if isinstance(tup, relax_expr.Tuple):
                value = tup.fields[value.index]
        if isinstance(value, relax_expr.Var) and same_sinfo:
            self.trivial[binding.var] = value
        if isinstance(value, relax_expr.Constant):
            self.constants[binding.var] = value
        self.known[binding.var] = value
        self.def_block[binding.var] = self.block
        super().visit_binding(binding)

    def visit_var_def(self, var):
        if self._in_dataflow():
            self.defined_in_dataflow.append(var)

    def visit_Var(self, var):
        if not self._in_dataflow() or (var in self.def_block and self.def_block[var] is not self.block):
            self.used_outside_home.add(var)

    def plan(self):
        replace_binding: dict = {}
        replace_usage: dict = {}
        remove: set = set()
        for var in self.defined_in_dataflow:
            if not isinstance(var, relax_expr.DataflowVar) and var not in self.used_outside_home:
                new = relax_expr.DataflowVar(var.name_hint, var.struct_info)
                replace_binding[var] = replace_usage[var] = new
        for var, target in self.trivial.items():
            while target in self.trivial:
                target = self.trivial[target]
            while target in replace_binding:
                target = replace_binding[target]
            if isinstance(var, relax_expr.DataflowVar) or not isinstance(target, relax_expr.DataflowVar) \
                    or var not in self.used_outside_home:
                replace_usage[var] = target  # read the earlier var directly
            else:
                # an output aliasing a dataflow var: the output takes over the dataflow var's binding
                replace_binding[target] = replace_usage[target] = var
            remove.add(var)
        return replace_binding, replace_usage, remove


class _Canonicalizer(ExprMutator):
    def __init__(self, mod, planner: _Planner):
        super().__init__(mod)
        self.replace_binding, self.replace_usage, self.remove = planner.plan()
        self.constants = planner.constants

    def visit_binding(self, binding):
        if binding.var not in self.remove:
            super().visit_binding(binding)

    def visit_var_def(self, var):
        while var in self.replace_binding:
            var = self.replace_binding[var]
        return super().visit_var_def(var)

    def visit_Var(self, var):
        while var in self.replace_usage:
            var = self.replace_usage[var]
        if var in self.constants:
            return self.constants[var]
        return super().visit_Var(var)


def canonicalize_bindings(func: relax_expr.Function, mod=None) -> relax_expr.Function:
    """`func` with its trivial bindings removed (the same object when there are none)."""
    func = _SymbolicCanonicalizer(mod).visit_expr(func)
    planner = _Planner()
    planner.visit_expr(func)
    return _Canonicalizer(mod, planner).visit_expr(func)


@module_pass(opt_level=1, name="CanonicalizeBindings")
class CanonicalizeBindings:
    """Remove trivial var-to-var bindings and make outputs bind their values directly."""

    def transform_module(self, mod, ctx):
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function):
                new = canonicalize_bindings(func, mod)
                if new is not func:
                    mod[gv] = new
        return mod
