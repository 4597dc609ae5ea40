"""`LowerThreadBinding`: loops bound to GPU thread axes become `T.launch_thread` scopes.

A loop `for i in T.thread_binding(n, thread="threadIdx.x")` becomes
`i = T.launch_thread("threadIdx.x", n)` (an `AttrStmt` "thread_extent" on an IterVar
whose var is the loop var): the loop runs once per thread, and `i` is the thread's index.
A loop that does not start at 0 keeps its values (`i + min` in the body). `vthread` loops
(virtual threads) become serial loops. Inside thread scopes, `if` guards that test thread
indices with `<`, `<=`, `>`, `>=` (the bound checks of a split that does not divide) are
marked `T.likely`, which the GPU code generators use to split the last partial block from
the full ones.

This is TVM's LowerOpaqueBlock step for thread bindings; functions without thread
bindings (every CPU function) come back unchanged.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((100,), "float32")):
...     for i0 in T.thread_binding(2, thread="blockIdx.x"):
...         for i1 in T.thread_binding(64, thread="threadIdx.x"):
...             if i0 * 64 + i1 < 100:
...                 A[i0 * 64 + i1] = T.float32(0)
... ''')
>>> print(lower_thread_binding(f).script().split("\\n", 4)[-1])
    i0 = T.launch_thread("blockIdx.x", 2)
    i1 = T.launch_thread("threadIdx.x", 64)
    if T.likely(i0 * 64 + i1 < 100):
        A[i0 * 64 + i1] = T.float32(0.0)
"""

from __future__ import annotations

from ..analysis.var_use import uses_any_var
from ..expr import GE, GT, LE, LT, And, Call, IntImm, Range, const
from ..function import PrimFunc
from ..functor import StmtExprMutator, substitute
from ..op import likely
from ..stmt import AttrStmt, For, ForKind, IterType, IterVar
from .function_pass import prim_func_pass


def thread_tag(stmt) -> str | None:
    """The thread tag a For (bound loop) or AttrStmt (launched thread) introduces, else None."""
    if isinstance(stmt, For) and stmt.kind == ForKind.THREAD_BINDING and stmt.thread_binding is not None:
        return stmt.thread_binding.thread_tag
    if isinstance(stmt, AttrStmt) and stmt.attr_key == "thread_extent" and isinstance(stmt.node, IterVar):
        return stmt.node.thread_tag
    return None


class _Lower(StmtExprMutator):
    def __init__(self):
        self.thread_vars: set = set()

    def visit_For(self, op: For):
        tag = thread_tag(op)
        if tag is None:
            return super().visit_For(op)
        if tag.startswith("vthread"):
            return super().visit_For(op.replace(kind=ForKind.SERIAL, thread_binding=None))
        var = op.loop_var
        body = op.body
        if not (isinstance(op.min, IntImm) and op.min.value == 0):
            body = substitute(body, {var: var + op.min})
        self.thread_vars.add(var)
        try:
            body = self.visit_stmt(body)
        finally:
            self.thread_vars.discard(var)
        iv = IterVar(Range(const(0, op.extent.dtype), op.extent), var, IterType.THREAD_INDEX, tag)
        return AttrStmt(iv, "thread_extent", op.extent, body)

    def visit_AttrStmt(self, op: AttrStmt):
        if thread_tag(op) is None:
            return super().visit_AttrStmt(op)
        self.thread_vars.add(op.node.var)
        try:
            return super().visit_AttrStmt(op)
        finally:
            self.thread_vars.discard(op.node.var)

    def visit_IfThenElse(self, op):
        op = super().visit_IfThenElse(op)
        cond = op.condition
        already = isinstance(cond, Call) and cond.op == "tir.likely"
        guard = _is_bound_check(cond) and uses_any_var(cond, self.thread_vars)
        if self.thread_vars and not already and guard:
            op = op.replace(condition=likely(cond))
        return op


def _is_bound_check(cond) -> bool:
    """`a < b` and the like (and conjunctions of them): the guards a non-dividing split leaves."""
    if isinstance(cond, And):
        return _is_bound_check(cond.a) and _is_bound_check(cond.b)
    return isinstance(cond, LT | LE | GT | GE)


def has_thread_binding(stmt) -> bool:
    """Whether `stmt` binds or launches GPU threads."""
    from ..functor import post_order_visit

    found = []
    post_order_visit(stmt, lambda s: found.append(s) if thread_tag(s) is not None else None)
    return bool(found)


def lower_thread_binding(func: PrimFunc) -> PrimFunc:
    """`func` with thread-bound loops turned into launched threads (see the module docstring)."""
    if not has_thread_binding(func.body):
        return func
    return func.with_body(_Lower().visit_stmt(func.body))


@prim_func_pass(opt_level=0, name="LowerThreadBinding")
class LowerThreadBinding:
    """Thread-bound loops -> `T.launch_thread` scopes; guards on thread indices marked likely."""

    def transform_function(self, func, mod, ctx):
        return lower_thread_binding(func)


__all__ = ["LowerThreadBinding", "has_thread_binding", "lower_thread_binding", "thread_tag"]
