"""`add_error_context`: say in a PrimFunc's run-time checks which operator they belong to.

A `tir.check_index` message is written by the operator's compute (`topi`), which knows its
tensors but not where the operator sits in a model. The pass that turns a model's operator
into the PrimFunc (Relax's LegalizeOps) knows: it adds to every message a line naming the
call and, where the frontend recorded it, the source node. The messages stay `str.format`
templates, so the context's braces are doubled.

>>> from graphc import tir
>>> i = tir.Var("i", "int64")
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> body = tir.Evaluate(A[tir.check_index(i, 4, False, "index {index} bad")])
>>> f = add_error_context(tir.PrimFunc([i], body), "y = f({x})")
>>> print(f.body.value.indices[0].args[3].value)
index {index} bad
  in y = f({{x}})
"""

from __future__ import annotations

from ..expr import Call, StringImm
from ..functor import StmtExprMutator


class _AddLine(StmtExprMutator):
    def __init__(self, line: str):
        self.line = line

    def visit_Call(self, op: Call):
        op = super().visit_Call(op)
        if op.op != "tir.check_index":
            return op
        message = StringImm(op.args[3].value + self.line)
        return op.replace(args=(*op.args[:3], message))


def add_error_context(func, context: str):
    """`func` with the line `  in <context>` after each of its index-check messages (`func`
    itself if it has none)."""
    line = "\n  in " + context.replace("{", "{{").replace("}", "}}")
    body = _AddLine(line).visit_stmt(func.body)
    return func if body is func.body else func.replace(body=body)


__all__ = ["add_error_context"]
