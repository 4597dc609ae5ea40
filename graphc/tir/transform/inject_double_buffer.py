"""`InjectDoubleBuffer`: ping-pong shared tiles for loops annotated "double_buffer".

A tiled product stages its operand tiles in shared memory at each step of its reduce loop:

    for ko in range(K):
        A_shared[..] = A[.., ko ..]          # producers: write shared tiles, read no shared memory
        B_shared[..] = B[.., ko ..]
        C_local[..] += A_shared[..] * ..     # consumers: read the tiles

and the threads wait twice per step (the tiles are written, then read, then overwritten). On a
loop the schedule annotated `double_buffer` (lowered, flattened form), this pass gives every
staged buffer a second copy (`2 x` its allocation) and fetches one step ahead:

    A_shared[0:n] = A[.., 0 ..]; B_shared[0:n] = ..            # prologue: step 0 into copy 0
    for ko in range(K):
        if ko + 1 < K:
            A_shared[(ko + 1) % 2 * n + ..] = A[.., ko + 1 ..]  # the next step into the other copy
            ..
        C_local[..] += A_shared[ko % 2 * n + ..] * ..           # this step from its copy

so the next tile's global loads are issued before the current one is multiplied. The producer
and consumer statements are wrapped in `AttrStmt(buffer var, "double_buffer_stage", step)`,
the step whose copy they touch; `InjectThreadSync` reads those to see that the two halves of a
step touch different copies (no barrier between them) while the next step's writes hit the copy
this step read (one barrier at the end of each step), then drops them.

The loop is left as it is (its annotation dropped) when its body is not a sequence of producers
followed by consumers, a staged buffer is used outside the loop or its allocation is not one
constant extent, or the loop runs once.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
...     tx = T.launch_thread("threadIdx.x", 16)
...     S = T.allocate([16], "float32", "shared")
...     S_1 = T.Buffer((16,), "float32", data=S, scope="shared")
...     for ko in T.serial(4, annotations={"double_buffer": 1}):
...         S_1[tx] = A[ko * 16 + tx]
...         B[tx] = B[tx] + S_1[15 - tx]
... ''')
>>> from graphc.tir.transform.inject_thread_sync import inject_thread_sync
>>> print(inject_thread_sync(inject_double_buffer(f)).script().split("\\n", 5)[-1])
    S = T.allocate([32], "float32", "shared")
    S_1 = T.Buffer((32,), "float32", data=S, scope="shared")
    S_1[tx] = A[tx]
    T.evaluate(T.tvm_storage_sync("shared"))
    for ko in range(4):
        if ko + 1 < 4:
            S_1[(ko + 1) % 2 * 16 + tx] = A[(ko + 1) * 16 + tx]
        B[tx] = B[tx] + S_1[ko % 2 * 16 + (15 - tx)]
        T.evaluate(T.tvm_storage_sync("shared"))
"""

from __future__ import annotations

from ..analysis.var_use import uses_var
from ..buffer import Buffer
from ..expr import BufferLoad, Call, IntImm, const, floormod
from ..function import PrimFunc
from ..functor import BufferAccessMutator, StmtExprVisitor, StmtMutator, substitute
from ..stmt import Allocate, AttrStmt, BufferStore, DeclBuffer, For, IfThenElse, SeqStmt
from .function_pass import prim_func_pass

ANNOTATION = "double_buffer"
STAGE_ATTR = "double_buffer_stage"
SHARED = ("shared", "shared.dyn")


class _Uses(StmtExprVisitor):
    """The buffer vars a statement reads and writes (tensor-core stores write their first tile)."""

    def __init__(self):
        self.reads, self.writes = set(), set()

    def visit_BufferLoad(self, op: BufferLoad):
        self.reads.add(op.buffer.data)
        super().visit_BufferLoad(op)

    def visit_BufferStore(self, op: BufferStore):
        self.writes.add(op.buffer.data)
        super().visit_BufferStore(op)

    def visit_Call(self, op: Call):
        if op.op == "tir.wmma_store" and isinstance(op.args[0], BufferLoad):
            self.writes.add(op.args[0].buffer.data)
        super().visit_Call(op)


def _uses(stmt) -> _Uses:
    uses = _Uses()
    uses.visit_stmt(stmt)
    return uses


class _Restage(BufferAccessMutator):
    """Accesses of the staged buffers moved into copy `stage % 2` of their doubled allocation."""

    def __init__(self, staged: dict, stage):
        super().__init__()
        self.staged, self.stage = staged, stage  # staged: data var -> (new buffer, elements per copy)

    def rewrite_access(self, buffer: Buffer, indices: tuple):
        found = self.staged.get(buffer.data)
        if found is None:
            return None
        new, size = found
        offset = floormod(self.stage, 2) * size if not isinstance(self.stage, IntImm) else const(
            self.stage.value % 2 * size, indices[0].dtype)
        return new, (offset + indices[0],)


def _mark(stmt, staged: dict, stage):
    for var in staged:
        stmt = AttrStmt(var, STAGE_ATTR, stage, stmt)
    return stmt


class _Plan:
    """What the rewrite of one annotated loop needs, or the reason it is left alone."""

    def __init__(self, loop: For, shared: dict, func_uses: dict):
        self.loop, self.staged, self.producers, self.consumers = loop, {}, [], []
        body = loop.body
        items = list(body.seq) if isinstance(body, SeqStmt) else [body]
        n = 0
        while n < len(items):
            uses = _uses(items[n])
            if not uses.writes or not uses.writes <= shared.keys() or uses.reads & shared.keys():
                break
            n += 1
        self.producers, self.consumers = items[:n], items[n:]
        written = set().union(*(_uses(p).writes for p in self.producers)) if self.producers else set()
        if not self.producers or not self.consumers:
            return
        consumer_writes = set().union(*(_uses(c).writes for c in self.consumers))
        if written & consumer_writes:
            return
        if isinstance(loop.extent, IntImm) and loop.extent.value < 2:
            return
        inside = _count_uses(loop)
        for var in written:
            alloc = shared[var]
            if len(alloc.extents) != 1 or not isinstance(alloc.extents[0], IntImm):
                return
            if func_uses.get(var, 0) != inside.get(var, 0):
                return  # read or written outside the loop too
        self.staged = {var: shared[var] for var in written}


class _CountUses(StmtExprVisitor):
    def __init__(self):
        self.count: dict = {}

    def _add(self, var):
        self.count[var] = self.count.get(var, 0) + 1

    def visit_BufferLoad(self, op):
        self._add(op.buffer.data)
        super().visit_BufferLoad(op)

    def visit_BufferStore(self, op):
        self._add(op.buffer.data)
        super().visit_BufferStore(op)


def _count_uses(stmt) -> dict:
    counter = _CountUses()
    counter.visit_stmt(stmt)
    return counter.count


class _Rewrite(StmtMutator):
    """Double the staged allocations and rewrite the annotated loops (module docstring)."""

    def __init__(self, shared: dict, func_uses: dict):
        super().__init__()
        self.shared, self.func_uses = shared, func_uses
        self.doubled: dict = {}  # data var -> (new buffer, elements per copy)
        self.new_buffers: dict = {}  # data var -> the doubled Buffer (for DeclBuffer)

    def visit_For(self, op: For):
        body = self.visit_stmt(op.body)
        loop = op if body is op.body else op.replace(body=body)
        if ANNOTATION not in loop.annotations:
            return loop
        loop = loop.replace(annotations={k: v for k, v in loop.annotations.items() if k != ANNOTATION})
        wrappers, inner = _peel(loop.body, loop.loop_var)
        plan = _Plan(loop.replace(body=inner), self.shared, self.func_uses)
        if not plan.staged:
            return loop
        staged = {}
        for var, alloc in plan.staged.items():
            size = alloc.extents[0].value
            if var not in self.doubled:
                self.doubled[var] = (None, size)
            staged[var] = (self._buffer(var, size), size)
        k, start, extent = loop.loop_var, loop.min, loop.extent
        step = k - start
        prologue = [_Restage(staged, const(0, k.dtype)).visit_stmt(substitute(p, {k: start}))
                    for p in plan.producers]
        ahead = [_Restage(staged, step + 1).visit_stmt(substitute(p, {k: k + 1})) for p in plan.producers]
        now = [_Restage(staged, step).visit_stmt(c) for c in plan.consumers]
        fetch = IfThenElse(k + 1 < start + extent, _mark(SeqStmt.flatten(*ahead), staged, step + 1), None)
        body = SeqStmt.flatten(fetch, _mark(SeqStmt.flatten(*now), staged, step))
        out = SeqStmt.flatten(*prologue, loop.replace(body=body))
        for wrapper in reversed(wrappers):  # the loop's allocations now hold across its steps
            out = wrapper.replace(body=out)
        return out

    def _buffer(self, var, size: int) -> Buffer:
        """The doubled view of staged buffer `var` (one object per var)."""
        found = self.new_buffers.get(var)
        if found is None:
            like = _first_buffer(self.shared_stmt, var)
            found = like.replace(shape=(const(2 * size, like.shape[0].dtype if like.shape else "int32"),))
            self.new_buffers[var] = found
        return found


def _peel(body, var) -> tuple:
    """(the allocations and declarations wrapping `body` that do not depend on loop `var`, what
    they wrap)."""
    wrappers = []
    while isinstance(body, Allocate | DeclBuffer):
        if isinstance(body, Allocate) and any(uses_var(e, var) for e in (*body.extents, body.condition)):
            break
        if isinstance(body, DeclBuffer) and any(uses_var(e, var) for e in body.buffer.shape):
            break
        wrappers.append(body)
        body = body.body
    return wrappers, body


class _FindBuffer(StmtExprVisitor):
    def __init__(self, var):
        self.var, self.found = var, None

    def visit_BufferLoad(self, op):
        if self.found is None and op.buffer.data is self.var:
            self.found = op.buffer
        super().visit_BufferLoad(op)

    def visit_BufferStore(self, op):
        if self.found is None and op.buffer.data is self.var:
            self.found = op.buffer
        super().visit_BufferStore(op)


def _first_buffer(stmt, var) -> Buffer:
    finder = _FindBuffer(var)
    finder.visit_stmt(stmt)
    return finder.found


class _Resize(BufferAccessMutator):
    """The doubled allocations, and every access and declaration of them through one buffer."""

    def __init__(self, doubled: dict, new_buffers: dict):
        super().__init__()
        self.doubled, self.new_buffers = doubled, new_buffers

    def rewrite_access(self, buffer: Buffer, indices: tuple):
        new = self.new_buffers.get(buffer.data)
        return None if new is None or new is buffer else (new, indices)

    def visit_Allocate(self, op: Allocate):
        body = self.visit_stmt(op.body)
        if op.buffer_var in self.doubled:
            size = self.doubled[op.buffer_var][1]
            return op.replace(extents=(const(2 * size, op.extents[0].dtype),), body=body)
        return op if body is op.body else op.replace(body=body)

    def visit_DeclBuffer(self, op: DeclBuffer):
        body = self.visit_stmt(op.body)
        new = self.new_buffers.get(op.buffer.data)
        if new is not None:
            return op.replace(buffer=new, body=body)
        return op if body is op.body else op.replace(body=body)


def _shared_allocations(body) -> dict:
    from ..schedule.state import walk

    return {s.buffer_var: s for s in walk(body) if isinstance(s, Allocate) and s.scope in SHARED}


def _annotated(body) -> bool:
    from ..schedule.state import walk

    return any(isinstance(s, For) and ANNOTATION in s.annotations for s in walk(body))


def inject_double_buffer(func: PrimFunc) -> PrimFunc:
    """`func` with the shared tiles of its `double_buffer` loops doubled (module docstring)."""
    if not _annotated(func.body):
        return func
    rewrite = _Rewrite(_shared_allocations(func.body), _count_uses(func.body))
    rewrite.shared_stmt = func.body
    body = rewrite.visit_stmt(func.body)
    if rewrite.new_buffers:
        body = _Resize(rewrite.doubled, rewrite.new_buffers).visit_stmt(body)
    return func.with_body(body)


@prim_func_pass(opt_level=0, name="InjectDoubleBuffer")
class InjectDoubleBuffer:
    """Fetch the next step's shared tiles into a second copy while the loop computes on the first."""

    def transform_function(self, func, mod, ctx):
        return inject_double_buffer(func)


__all__ = ["ANNOTATION", "STAGE_ATTR", "InjectDoubleBuffer", "inject_double_buffer"]
