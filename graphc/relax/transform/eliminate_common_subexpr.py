"""EliminateCommonSubexpr: compute each pure value once per scope.

When a binding's value is structurally equal to a value bound earlier in scope (and calls
nothing impure), the binding becomes a trivial one, `y = x`, and later uses of `y` read `x`
(CanonicalizeBindings then removes the alias, as in TVM). A `match_cast` is a duplicate
only with the same target struct info. Dataflow vars are forgotten when their block ends,
each `If` branch is a scope of its own, and nested functions start afresh. With
`call_only=True` only calls are deduplicated (not tuples, constants, ...).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         a = bb.emit(relax.op.exp(x))
...         b = bb.emit(relax.op.exp(x))
...         gv = bb.emit_output(relax.op.add(a, b))
...     _ = bb.emit_func_output(gv)
>>> after = EliminateCommonSubexpr()(bb.get())["main"]
>>> [str(b.value) for b in after.body.blocks[0].bindings]
['R.exp(x)', 'lv', 'R.add(lv, lv)']
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

from ...ir.module import GlobalVar
from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from .dead_code_elimination import contains_impure_call

__all__ = ["EliminateCommonSubexpr"]


def identity_key(x):
    """A hashable key equal for structurally equal values, with variables compared by identity
    (structural equality would pair `exp(x)` with `exp(y)`: both use one free variable)."""
    if x is None or isinstance(x, str | int | float | bool | enum.Enum):
        return x
    if isinstance(x, tuple | list):
        return tuple(identity_key(i) for i in x)
    if isinstance(x, dict):
        return ("dict", *sorted((str(k), identity_key(v)) for k, v in x.items()))
    if isinstance(x, np.ndarray):
        return ("ndarray", x.shape, x.dtype.str, x.tobytes())
    if getattr(type(x), "__structural_binding__", False):
        return ("var", id(x))
    if isinstance(x, GlobalVar):
        return ("global", x.name_hint)
    if dataclasses.is_dataclass(x):
        return (type(x).__name__, *(identity_key(getattr(x, f.name)) for f in dataclasses.fields(x)))
    if hasattr(x, "numpy"):  # constant data: big tensors by identity, hashing them costs too much
        if getattr(x, "nbytes", 0) > 4096:
            return ("tensor", id(x))
        return identity_key(np.asarray(x.numpy()))
    return ("object", id(x))


class _CSE(ExprMutator):
    def __init__(self, mod, call_only: bool):
        super().__init__(mod)
        self.mod, self.call_only = mod, call_only
        self.seen: dict = {}  # identity_key((value, cast struct info)) -> vars bound to it, first first

    def visit_binding(self, binding):
        value = self.visit_expr(binding.value)
        cast = binding.struct_info if isinstance(binding, relax_expr.MatchCast) else None
        if (self.call_only and not isinstance(value, relax_expr.Call)) or contains_impure_call(value,
                                                                                               self.mod):
            return self._emit(binding, value)
        key = identity_key((value, cast))
        vars_ = self.seen.get(key)
        if not vars_:
            self.seen[key] = [binding.var]
            return self._emit(binding, value)
        first = vars_[0]
        vars_.append(binding.var)
        self.builder.emit_normalized(relax_expr.VarBinding(binding.var, first))
        self.var_remap[binding.var] = first

    def _emit(self, binding, value):
        if isinstance(binding, relax_expr.MatchCast):
            if value is binding.value:
                self.builder.emit_normalized(binding)
            else:
                self.builder.emit_normalized(relax_expr.MatchCast(binding.var, value, binding.struct_info))
        else:
            self.reemit_binding(binding, value)

    def visit_dataflow_block(self, block):
        saved = dict(self.var_remap)
        out = super().visit_dataflow_block(block)
        self.var_remap = saved  # uses after the block must not read its dataflow vars
        for vars_ in self.seen.values():
            vars_[:] = [v for v in vars_ if not isinstance(v, relax_expr.DataflowVar)]
        return out

    def visit_If(self, expr):
        cond = self.visit_expr(expr.cond)
        branches = []
        for branch in (expr.true_branch, expr.false_branch):
            saved_remap, saved_seen = dict(self.var_remap), {k: list(v) for k, v in self.seen.items()}
            branches.append(self.visit_with_new_scope(branch))
            self.var_remap, self.seen = saved_remap, saved_seen
        if cond is expr.cond and branches[0] is expr.true_branch and branches[1] is expr.false_branch:
            return expr
        return relax_expr.If(cond, *branches)

    def visit_Function(self, func):
        if self.seen or self.var_remap:
            return _CSE(self.mod, self.call_only).visit_expr(func)  # a clean scope for closures
        return super().visit_Function(func)


@module_pass(opt_level=1, name="EliminateCommonSubexpr")
class EliminateCommonSubexpr:
    """Bind each pure value once per scope; duplicates become aliases of the first binding."""

    def __init__(self, call_only: bool = False):
        self.call_only = call_only

    def transform_module(self, mod, ctx):
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function):
                new = _CSE(mod, self.call_only).visit_expr(func)
                if new is not func:
                    mod[gv] = new
        return mod
