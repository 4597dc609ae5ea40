"""`PartitionThreadGuard`: split a kernel's bound check into full blocks and the last one.

A split that does not divide leaves `if T.likely(bx * 64 + tx < n)` around a kernel's body.
Every thread of a block passes that test when it holds for the block's last thread, a test
on `blockIdx` and the host's variables alone, which the whole block takes the same way:

    if bx * 64 + 63 < n:      # every block but the last: no per-thread test
        body
    else:
        if T.likely(bx * 64 + tx < n):
            body

(TVM's loop partitioning of likely conditions gives the same code.) A guard is split when its
condition is a conjunction of comparisons linear in threadIdx indices of constant extent and
its body has no barrier; other guards stay as they are.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(a: T.handle):
...     n = T.int32()
...     A = T.match_buffer(a, (n,), "float32")
...     bx = T.launch_thread("blockIdx.x", (n + 63) // 64)
...     tx = T.launch_thread("threadIdx.x", 64)
...     if T.likely(bx * 64 + tx < n):
...         A[bx * 64 + tx] = T.float32(0)
... ''')
>>> print(partition_thread_guard(f).body.body.body.condition)
bx * 64 + 63 < n
"""

from __future__ import annotations

from ..analysis.thread_scope import is_thread_scope
from ..analysis.var_use import uses_any_var
from ..arith import Analyzer
from ..expr import GE, GT, LE, LT, And, Call, IntImm, const, logical_and
from ..function import PrimFunc
from ..functor import StmtMutator, post_order_visit, substitute
from ..stmt import IfThenElse
from .function_pass import prim_func_pass


def _slope(expr, var, analyzer):
    """d expr / d var when `expr` is linear in `var` (a constant), else None."""
    at = [analyzer.simplify(substitute(expr, {var: const(k, var.dtype)})) for k in (0, 1, 2)]
    first, second = analyzer.simplify(at[1] - at[0]), analyzer.simplify(at[2] - at[1])
    if isinstance(first, IntImm) and isinstance(second, IntImm) and first.value == second.value:
        return first.value
    return None


class _Partition(StmtMutator):
    def __init__(self):
        self.threads: dict = {}  # threadIdx var -> constant extent
        self.analyzer = Analyzer()

    def visit_AttrStmt(self, op):
        tag = op.node.thread_tag if is_thread_scope(op) else ""
        if tag.startswith("threadIdx") and isinstance(op.value, IntImm):
            self.threads[op.node.var] = op.value.value
            try:
                return super().visit_AttrStmt(op)
            finally:
                del self.threads[op.node.var]
        return super().visit_AttrStmt(op)

    def for_all_threads(self, cond):
        """A condition on no threadIdx that holds iff `cond` holds for every thread, or None."""
        if isinstance(cond, And):
            a, b = self.for_all_threads(cond.a), self.for_all_threads(cond.b)
            return None if a is None or b is None else logical_and(a, b)
        if not isinstance(cond, LT | LE | GT | GE):
            return None
        # a < b (or <=) holds for all threads iff it holds where a - b is largest
        small, large = (cond.a, cond.b) if isinstance(cond, LT | LE) else (cond.b, cond.a)
        diff = small - large
        worst = {}
        for var, extent in self.threads.items():
            if not uses_any_var(diff, {var}):
                continue
            slope = _slope(diff, var, self.analyzer)
            if slope is None:
                return None
            worst[var] = const(extent - 1 if slope > 0 else 0, var.dtype)
        if not worst:
            return None
        small, large = (self.analyzer.simplify(substitute(e, worst)) for e in (small, large))
        if isinstance(cond, LT | GT):
            return LT(small, large, "bool")
        return LE(small, large, "bool")

    def visit_IfThenElse(self, op):
        op = super().visit_IfThenElse(op)
        cond = op.condition
        if op.else_case is not None or not (isinstance(cond, Call) and cond.op == "tir.likely"):
            return op
        if not self.threads or _has_barrier(op.then_case):
            return op
        every = self.for_all_threads(cond.args[0])
        if every is None or uses_any_var(every, set(self.threads)):
            return op
        return IfThenElse(every, op.then_case, op)


def _has_barrier(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, Call)
                     and (n.op == "tir.tvm_storage_sync" or n.op.startswith("tir.tvm_warp")) else None)
    return bool(found)


def partition_thread_guard(func: PrimFunc) -> PrimFunc:
    """`func` with its thread bound checks split (see the module docstring)."""
    body = _Partition().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


@prim_func_pass(opt_level=0, name="PartitionThreadGuard")
class PartitionThreadGuard:
    """Split `if T.likely(<linear in threadIdx>)` into a test-free path for full blocks."""

    def transform_function(self, func, mod, ctx):
        return partition_thread_guard(func)


__all__ = ["PartitionThreadGuard", "partition_thread_guard"]
