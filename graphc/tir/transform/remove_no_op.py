"""`RemoveNoOp`: drop statements that do nothing.

Removed: `Evaluate` of a constant, loops with a no-op body or a non-positive constant
extent, `if`s whose branches do nothing, allocations and lets around nothing, and
stores of a location's own value (`A[i] = A[i]`).

>>> from graphc import tir
>>> i = tir.Var("i")
>>> loop = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL, tir.Evaluate(0))
>>> remove_no_op_stmt(tir.SeqStmt((loop, tir.Evaluate(1)))).value.value
0
"""

from __future__ import annotations

from ...ir.structural import structural_equal
from ..expr import BufferLoad, Call, IntImm
from ..function import PrimFunc
from ..functor import StmtMutator, post_order_visit
from ..op import INTRINSICS
from ..stmt import Evaluate, SeqStmt, is_no_op
from .function_pass import prim_func_pass

_NO_OP = Evaluate(0)


def _has_side_effect(expr) -> bool:
    found = []

    def check(node):
        if isinstance(node, Call):
            intrin = INTRINSICS.get(node.op)
            if intrin is None or not intrin.pure:
                found.append(node)

    post_order_visit(expr, check)
    return bool(found)


class _RemoveNoOp(StmtMutator):
    def visit_Evaluate(self, op: Evaluate):
        return _NO_OP if not _has_side_effect(op.value) else op

    def visit_SeqStmt(self, op: SeqStmt):
        return SeqStmt.flatten(*[self.visit_stmt(s) for s in op.seq])

    def visit_For(self, op):
        body = self.visit_stmt(op.body)
        if is_no_op(body) or (isinstance(op.extent, IntImm) and op.extent.value <= 0):
            return _NO_OP
        return op.replace(body=body)

    def visit_IfThenElse(self, op):
        then_case = self.visit_stmt(op.then_case)
        else_case = self.visit_stmt(op.else_case) if op.else_case is not None else None
        if else_case is not None and is_no_op(else_case):
            else_case = None
        if is_no_op(then_case):
            if else_case is None:
                return _NO_OP if not _has_side_effect(op.condition) else Evaluate(op.condition)
            from ..expr import logical_not

            return op.replace(condition=logical_not(op.condition), then_case=else_case, else_case=None)
        return op.replace(then_case=then_case, else_case=else_case)

    def _wrapper(self, op):
        body = self.visit_stmt(op.body)
        return _NO_OP if is_no_op(body) else op.replace(body=body)

    visit_Allocate = _wrapper
    visit_DeclBuffer = _wrapper
    visit_AttrStmt = _wrapper

    def visit_LetStmt(self, op):
        body = self.visit_stmt(op.body)
        if is_no_op(body) and not _has_side_effect(op.value):
            return _NO_OP
        return op.replace(body=body)

    def visit_BufferStore(self, op):
        value = op.value
        if (
            isinstance(value, BufferLoad)
            and value.buffer is op.buffer
            and op.predicate is None
            and value.predicate is None
            and len(value.indices) == len(op.indices)
            and all(structural_equal(a, b, map_free_vars=False) for a, b in zip(value.indices, op.indices))
        ):
            return _NO_OP
        return op


def remove_no_op_stmt(stmt):
    """`stmt` without statements that have no effect."""
    return _RemoveNoOp().visit_stmt(stmt)


def remove_no_op(func: PrimFunc) -> PrimFunc:
    """`func` without statements that have no effect."""
    return func.with_body(remove_no_op_stmt(func.body))


@prim_func_pass(opt_level=0, name="RemoveNoOp")
class RemoveNoOp:
    """Remove statements that have no effect."""

    def transform_function(self, func, mod, ctx):
        return remove_no_op(func)


__all__ = ["RemoveNoOp", "remove_no_op", "remove_no_op_stmt"]
