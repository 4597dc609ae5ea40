"""Statement-level simplification: every expression simplified with what its context knows.

Loop variables are bound to their ranges, let variables to their values, block iter vars
to their domains, and `if` branches see their condition (or its negation) as a
constraint; branches decided by the condition are dropped. The `Simplify` pass wraps this.

>>> from graphc import tir
>>> i = tir.Var("i")
>>> A = tir.decl_buffer((16,), "float32", "A")
>>> body = tir.IfThenElse(i < 16, A.vstore([(i * 4 + 1) // 4], 0.0))
>>> loop = tir.For(i, tir.const(0), tir.const(16), tir.ForKind.SERIAL, body)
>>> out = simplify_stmt(loop)
>>> type(out.body).__name__, out.body.indices[0] is i
('BufferStore', True)
"""

from __future__ import annotations

from ..expr import IntImm, Range, logical_not
from ..function import PrimFunc
from ..functor import StmtExprMutator
from ..stmt import Block, Evaluate, IterVar
from .analyzer import Analyzer


class StmtSimplifier(StmtExprMutator):
    """A StmtExprMutator that simplifies every expression under the enclosing facts."""

    def __init__(self, analyzer: Analyzer | None = None):
        self.analyzer = analyzer or Analyzer()

    def visit_expr(self, expr):
        return self.analyzer.simplify(expr)

    def visit_For(self, op):
        lo, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        with self.analyzer._scoped_bind(op.loop_var, Range(lo, extent)):
            body = self.visit_stmt(op.body)
        return op.replace(min=lo, extent=extent, body=body)

    def visit_LetStmt(self, op):
        value = self.visit_expr(op.value)
        with self.analyzer._scoped_bind(op.var, value):
            body = self.visit_stmt(op.body)
        return op.replace(value=value, body=body)

    def visit_IfThenElse(self, op):
        cond = self.visit_expr(op.condition)
        if isinstance(cond, IntImm):
            if cond.value:
                return self.visit_stmt(op.then_case)
            return self.visit_stmt(op.else_case) if op.else_case is not None else Evaluate(0)
        with self.analyzer.constraint_scope(cond):
            then_case = self.visit_stmt(op.then_case)
        else_case = op.else_case
        if else_case is not None:
            with self.analyzer.constraint_scope(logical_not(cond)):
                else_case = self.visit_stmt(else_case)
        return op.replace(condition=cond, then_case=then_case, else_case=else_case)

    def visit_AssertStmt(self, op):
        cond = self.visit_expr(op.condition)
        message = self.visit_expr(op.message)
        if isinstance(cond, IntImm) and not cond.value:
            return op.replace(condition=cond, message=message, body=self.visit_stmt(op.body))
        with self.analyzer.constraint_scope(cond):
            body = self.visit_stmt(op.body)
        return op.replace(condition=cond, message=message, body=body)

    def visit_AttrStmt(self, op):
        value = self.visit_expr(op.value)
        if op.attr_key in ("thread_extent", "virtual_thread") and isinstance(op.node, IterVar):
            with self.analyzer._scoped_bind(op.node.var, Range(IntImm(value.dtype, 0), value)):
                body = self.visit_stmt(op.body)
        else:
            body = self.visit_stmt(op.body)
        return op.replace(value=value, body=body)

    def visit_Block(self, op: Block):
        saved = self.analyzer._save()
        try:
            iter_vars = tuple(self.visit_iter_var(iv) for iv in op.iter_vars)
            if all(a is b for a, b in zip(iter_vars, op.iter_vars)):
                iter_vars = op.iter_vars
            for iv in iter_vars:
                if iv.dom is not None:
                    self.analyzer.bind(iv.var, iv.dom, allow_override=True)
            return super().visit_Block(op.replace(iter_vars=iter_vars))
        finally:
            self.analyzer._restore(saved)


def simplify_stmt(stmt, analyzer: Analyzer | None = None):
    """Simplify a statement (or a PrimFunc's body); unchanged parts keep their identity."""
    mutator = StmtSimplifier(analyzer)
    if isinstance(stmt, PrimFunc):
        return stmt.with_body(mutator.visit_stmt(stmt.body))
    return mutator.visit_stmt(stmt)
