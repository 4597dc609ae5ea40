"""`Simplify`: simplify every expression, drop trivial loops, constant branches and no-ops.

Expressions go through the arithmetic analyzer of `graphc.tir.arith` (loop variables
bound to their ranges, `if` conditions known in their branches). A constant-folding
clean-up runs before and after it: loops of extent 1 are replaced by their body with the
loop variable set to the loop's min, so the analyzer sees the substituted body, and
`if True` / `if False` keep only the branch taken.

>>> from graphc import tir
>>> i = tir.Var("i")
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> store = tir.BufferStore(A, tir.const(1.0), (i + 2,))
>>> loop = tir.For(i, tir.const(0), tir.const(1), tir.ForKind.SERIAL, store)
>>> simplify_stmt_cleanup(loop).indices[0].value
2
"""

from __future__ import annotations

from ..arith import simplify_stmt
from ..expr import (
    And,
    BinaryOp,
    CmpOp,
    FloatImm,
    IntImm,
    Not,
    Or,
    Var,
    _compare,  # the folding comparison builder
    logical_and,
    logical_not,
    logical_or,
)
from ..function import PrimFunc
from ..functor import StmtExprMutator, _rebuild_binary, substitute
from ..stmt import Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, is_no_op
from .function_pass import prim_func_pass


def _const_int(expr):
    return expr.value if isinstance(expr, IntImm) else None


class _Cleanup(StmtExprMutator):
    """Fold constant expressions and remove trivial control flow."""

    # -- expressions: fold bottom-up -----------------------------------------------------
    def visit_BinaryOp(self, op: BinaryOp):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        return op if a is op.a and b is op.b and not _both_const(a, b) else _rebuild_binary(op, a, b)

    def visit_CmpOp(self, op: CmpOp):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        return op if a is op.a and b is op.b and not _both_const(a, b) else _compare(type(op), a, b)

    def visit_And(self, op: And):
        return logical_and(self.visit_expr(op.a), self.visit_expr(op.b))

    def visit_Or(self, op: Or):
        return logical_or(self.visit_expr(op.a), self.visit_expr(op.b))

    def visit_Not(self, op: Not):
        return logical_not(self.visit_expr(op.a))

    # -- statements -------------------------------------------------------------------
    def visit_For(self, op: For):
        low, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        n = _const_int(extent)
        if n is not None and n <= 0:
            return Evaluate(0)
        if n == 1 and op.kind != ForKind.THREAD_BINDING:
            return self.visit_stmt(substitute(op.body, {op.loop_var: low}))
        body = self.visit_stmt(op.body)
        if is_no_op(body):
            return Evaluate(0)
        return op.replace(min=low, extent=extent, body=body)

    def visit_IfThenElse(self, op: IfThenElse):
        cond = self.visit_expr(op.condition)
        if isinstance(cond, IntImm):
            if cond.value:
                return self.visit_stmt(op.then_case)
            return self.visit_stmt(op.else_case) if op.else_case is not None else Evaluate(0)
        then_case = self.visit_stmt(op.then_case)
        else_case = self.visit_stmt(op.else_case) if op.else_case is not None else None
        if else_case is not None and is_no_op(else_case):
            else_case = None
        if is_no_op(then_case) and else_case is None:
            return Evaluate(0)
        return op.replace(condition=cond, then_case=then_case, else_case=else_case)

    def visit_LetStmt(self, op: LetStmt):
        value = self.visit_expr(op.value)
        if isinstance(value, IntImm | FloatImm | Var):
            return self.visit_stmt(substitute(op.body, {op.var: value}))
        return op.replace(value=value, body=self.visit_stmt(op.body))

    def visit_SeqStmt(self, op: SeqStmt):
        return SeqStmt.flatten(*[self.visit_stmt(s) for s in op.seq])


def _both_const(a, b) -> bool:
    return isinstance(a, IntImm) and isinstance(b, IntImm)


def simplify_stmt_cleanup(stmt):
    """Fold `stmt`'s expressions and remove extent-1 loops, constant ifs and no-ops."""
    return _Cleanup().visit_stmt(stmt)


def simplify_primfunc(func: PrimFunc) -> PrimFunc:
    """`func` simplified (see the module docstring)."""
    # extent-1 loops go first so the analyzer sees their substituted bodies
    body = simplify_stmt_cleanup(simplify_stmt(simplify_stmt_cleanup(func.body)))
    return func.with_body(body)


@prim_func_pass(opt_level=0, name="Simplify")
class Simplify:
    """Simplify expressions with loop ranges known; drop extent-1 loops, constant branches and no-ops."""

    def transform_function(self, func, mod, ctx):
        return simplify_primfunc(func)


__all__ = ["Simplify", "simplify_primfunc", "simplify_stmt_cleanup"]
