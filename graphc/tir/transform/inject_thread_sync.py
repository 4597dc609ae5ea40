"""`InjectThreadSync`: barriers where threads of a block share memory across statements.

Within a kernel, a statement that reads shared memory another statement wrote earlier (read
after write), or writes what an earlier one read or wrote (write after read/write), must wait
until every thread of the block finished the earlier statement. The pass walks each sequence of
statements keeping the shared buffers touched since the last barrier and inserts
`T.tvm_storage_sync("shared")` before the first statement that conflicts with them; a loop
whose next iteration would conflict with the end of the current one gets a barrier at the end
of its body (the cooperative fetch of a tiled matmul).

Every thread must reach every barrier, so none is placed under an `if` that tests a thread
index, in a loop whose trip count depends on one, or in a thread scope narrower than what the
kernel launches (the code generator guards it): such a statement counts as a whole, and
barriers go around it. "local" memory is private to a thread and needs none.

Accesses are tracked per buffer and, inside `AttrStmt(buffer var, "double_buffer_stage", s)`
(`InjectDoubleBuffer`), per copy `s % 2` of a double-buffered tile: two accesses of one buffer
conflict unless both name copies that provably differ. Across a loop's iterations the next
iteration's copies are its loop var plus one; outside the loop, a copy that depends on its loop
var stands for the whole buffer. The pass drops those attributes.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
...     tx = T.launch_thread("threadIdx.x", 64)
...     S = T.allocate([64], "float32", "shared")
...     S_1 = T.Buffer((64,), "float32", data=S, scope="shared")
...     S_1[tx] = A[tx]
...     B[tx] = S_1[63 - tx]
... ''')
>>> print(inject_thread_sync(f).script().split("\\n", 7)[-1])
    S_1[tx] = A[tx]
    T.evaluate(T.tvm_storage_sync("shared"))
    B[tx] = S_1[63 - tx]
"""

from __future__ import annotations

from ..analysis.thread_scope import is_thread_scope, kernel_roots, launch_extents
from ..analysis.var_use import uses_any_var, uses_var
from ..arith.analyzer import Analyzer
from ..expr import BufferLoad, Call, IntImm, floormod
from ..function import PrimFunc
from ..functor import StmtExprVisitor, StmtMutator, substitute
from ..op import tvm_storage_sync
from ..stmt import (
    Allocate,
    AttrStmt,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
)  # fmt: skip
from .function_pass import prim_func_pass
from .inject_double_buffer import STAGE_ATTR

SHARED_SCOPES = ("shared", "shared.dyn", "warp")


def storage_sync(scope: str = "shared") -> Evaluate:
    """The barrier statement `T.tvm_storage_sync(scope)`."""
    return Evaluate(tvm_storage_sync(scope))


def is_sync(stmt) -> bool:
    value = stmt.value if isinstance(stmt, Evaluate) else None
    return isinstance(value, Call) and value.op == "tir.tvm_storage_sync"


class _Accesses(StmtExprVisitor):
    """The shared buffers a statement reads and writes, wherever it does, as (data var, copy)
    pairs: the copy expression of a double-buffered tile (`stages`: var -> expression, from the
    enclosing "double_buffer_stage" attributes), else None (the whole buffer)."""

    def __init__(self, shared: set, stages: dict):
        self.shared, self.stages = shared, dict(stages)
        self.reads, self.writes, self.syncs = set(), set(), False

    def key(self, var):
        return (var, self.stages.get(var))

    def visit_AttrStmt(self, op):
        if op.attr_key == STAGE_ATTR:
            outer = self.stages.get(op.node)
            self.stages[op.node] = op.value
            self.visit_stmt(op.body)
            self.stages[op.node] = outer
            return
        super().visit_AttrStmt(op)

    def visit_BufferLoad(self, op: BufferLoad):
        if op.buffer.data in self.shared:
            self.reads.add(self.key(op.buffer.data))
        super().visit_BufferLoad(op)

    def visit_BufferStore(self, op: BufferStore):
        if op.buffer.data in self.shared:
            self.writes.add(self.key(op.buffer.data))
        super().visit_BufferStore(op)

    def visit_Call(self, op: Call):
        # a tensor-core store writes the tile its first argument starts (tir.wmma_store)
        if op.op == "tir.wmma_store" and isinstance(op.args[0], BufferLoad):
            if op.args[0].buffer.data in self.shared:
                self.writes.add(self.key(op.args[0].buffer.data))
        super().visit_Call(op)

    def visit_Evaluate(self, op):
        if is_sync(op):
            self.syncs = True
        super().visit_Evaluate(op)


class _Summary:
    """What a statement touches before its first barrier (entry) and after its last (exit)."""

    __slots__ = ("entry_r", "entry_w", "synced", "exit_r", "exit_w")

    def __init__(self, entry_r, entry_w, synced=False, exit_r=None, exit_w=None):
        self.entry_r, self.entry_w, self.synced = set(entry_r), set(entry_w), synced
        self.exit_r = set(entry_r) if exit_r is None else set(exit_r)
        self.exit_w = set(entry_w) if exit_w is None else set(exit_w)


def _other_copy(a, b) -> bool:
    """Whether copies `a` and `b` of a double-buffered tile provably differ (`a - b` odd)."""
    if a is None or b is None:
        return False
    diff = Analyzer().simplify(floormod(a - b, 2))
    return isinstance(diff, IntImm) and diff.value != 0


def _overlap(xs: set, ys: set) -> bool:
    return any(x[0] is y[0] and not _other_copy(x[1], y[1]) for x in xs for y in ys)


def _conflict(reads: set, writes: set, pend_r: set, pend_w: set) -> bool:
    return _overlap(reads, pend_w) or _overlap(writes, pend_r) or _overlap(writes, pend_w)


def _shift(keys: set, var) -> set:
    """The accesses of the next iteration of loop `var` (its copies one step on)."""
    return {(v, substitute(s, {var: var + 1}) if s is not None and uses_var(s, var) else s) for v, s in keys}


def _widen(keys: set, var) -> set:
    """The accesses as seen outside loop `var`: a copy that depends on it is any copy."""
    return {(v, None if s is not None and uses_var(s, var) else s) for v, s in keys}


class _Injector:
    def __init__(self, shared: set, thread_vars: set, launch: dict):
        self.shared, self.thread_vars, self.launch = shared, thread_vars, launch
        self.sequences: dict = {}  # id(SeqStmt) -> its new items (original statements and barriers)
        self.loop_ends: set = set()  # ids of loop bodies that end with a barrier
        self.stages: dict = {}  # data var -> the copy of the enclosing "double_buffer_stage"

    def leaf(self, stmt) -> _Summary:
        acc = _Accesses(self.shared, self.stages)
        acc.visit_stmt(stmt)
        if is_sync(stmt):
            return _Summary((), (), True, (), ())
        return _Summary(acc.reads, acc.writes)

    def visit(self, stmt) -> _Summary:
        if isinstance(stmt, SeqStmt):
            return self.visit_seq(stmt)
        if isinstance(stmt, For):
            uniform = not uses_any_var(stmt.min, self.thread_vars) and not uses_any_var(stmt.extent,
                                                                                        self.thread_vars)
            if not uniform:
                return self.leaf(stmt)
            if stmt.kind == ForKind.VECTORIZED:  # its lanes run together: no barrier between them
                return self.leaf(stmt)
            body = self.visit(stmt.body)
            var = stmt.loop_var
            nxt_r, nxt_w = _shift(body.entry_r, var), _shift(body.entry_w, var)  # the next iteration's
            carried = _conflict(nxt_r, nxt_w, body.exit_r, body.exit_w)
            entry_r, entry_w = _widen(body.entry_r, var), _widen(body.entry_w, var)
            if carried:
                self.loop_ends.add(id(stmt.body))
                return _Summary(entry_r, entry_w, True, (), ())
            return _Summary(entry_r, entry_w, body.synced, _widen(body.exit_r, var), _widen(body.exit_w, var))
        if isinstance(stmt, IfThenElse):
            if uses_any_var(stmt.condition, self.thread_vars):
                return self.leaf(stmt)
            then = self.visit(stmt.then_case)
            other = self.visit(stmt.else_case) if stmt.else_case is not None else _Summary((), ())
            if then.synced and other.synced:
                return _Summary(then.entry_r | other.entry_r, then.entry_w | other.entry_w, True,
                                then.exit_r | other.exit_r, then.exit_w | other.exit_w)
            reads = then.entry_r | then.exit_r | other.entry_r | other.exit_r
            writes = then.entry_w | then.exit_w | other.entry_w | other.exit_w
            return _Summary(reads, writes)
        if isinstance(stmt, AttrStmt) and stmt.attr_key == STAGE_ATTR:
            outer = self.stages.get(stmt.node)
            self.stages[stmt.node] = stmt.value
            summary = self.visit(stmt.body)
            self.stages[stmt.node] = outer
            return summary
        if isinstance(stmt, LetStmt | Allocate | AttrStmt | DeclBuffer):
            if isinstance(stmt, AttrStmt) and is_thread_scope(stmt):
                self.thread_vars.add(stmt.node.var)
                launched = self.launch.get(stmt.node.thread_tag)
                if not _same_extent(launched, stmt.value):
                    return self.leaf(stmt)  # fewer threads than launched run it: the rest skip it
            return self.visit(stmt.body)
        return self.leaf(stmt)

    def visit_seq(self, seq: SeqStmt) -> _Summary:
        out: list = []
        pend_r, pend_w = set(), set()
        entry_r, entry_w, synced = set(), set(), False
        changed = False
        for child in seq.seq:
            summary = self.visit(child)
            if _conflict(summary.entry_r, summary.entry_w, pend_r, pend_w):
                out.append(storage_sync())
                synced, changed = True, True
                pend_r, pend_w = set(), set()
            if not synced:
                entry_r |= summary.entry_r
                entry_w |= summary.entry_w
            out.append(child)
            if summary.synced:
                synced = True
                pend_r, pend_w = set(summary.exit_r), set(summary.exit_w)
            else:
                pend_r |= summary.entry_r
                pend_w |= summary.entry_w
        if changed:
            self.sequences[id(seq)] = out
        return _Summary(entry_r, entry_w, synced, pend_r, pend_w)


class _Apply(StmtMutator):
    """Rebuild the body with the injector's new sequences and loop-end barriers."""

    def __init__(self, sequences: dict, loop_ends: set):
        self.sequences, self.loop_ends = sequences, loop_ends

    def visit_stmt(self, stmt):
        if isinstance(stmt, AttrStmt) and stmt.attr_key == STAGE_ATTR:
            return self.visit_stmt(stmt.body)  # read by the injector; no code
        items = self.sequences.get(id(stmt))
        if items is not None:
            new = SeqStmt(tuple(self.visit_stmt(item) for item in items))
        else:
            new = super().visit_stmt(stmt)
        if id(stmt) in self.loop_ends:
            new = SeqStmt.flatten(new, storage_sync())
        return new


def _same_extent(a, b) -> bool:
    from ..expr import IntImm

    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    return a is b


def _shared_allocations(root) -> set:
    from ..schedule.state import walk

    return {s.buffer_var for s in walk(root) if isinstance(s, Allocate) and s.scope in SHARED_SCOPES}


def _has_stage_attrs(body) -> bool:
    from ..schedule.state import walk

    return any(isinstance(s, AttrStmt) and s.attr_key == STAGE_ATTR for s in walk(body))


def inject_thread_sync(func: PrimFunc) -> PrimFunc:
    """`func` with barriers between the statements of its kernels that share memory."""
    sequences, loop_ends = {}, set()
    for root in kernel_roots(func.body):
        shared = _shared_allocations(root)
        if not shared:
            continue
        injector = _Injector(shared, set(), launch_extents(root))
        injector.visit(root)
        sequences.update(injector.sequences)
        loop_ends |= injector.loop_ends
    if not sequences and not loop_ends and not _has_stage_attrs(func.body):
        return func
    return func.with_body(_Apply(sequences, loop_ends).visit_stmt(func.body))


@prim_func_pass(opt_level=0, name="InjectThreadSync")
class InjectThreadSync:
    """Insert `tvm_storage_sync("shared")` where a block's threads share memory across statements."""

    def transform_function(self, func, mod, ctx):
        return inject_thread_sync(func)


__all__ = ["InjectThreadSync", "SHARED_SCOPES", "inject_thread_sync", "is_sync", "storage_sync"]
