"""`PlanAndUpdateBufferAllocationLocation`: move each `alloc_buffer` down to the innermost
scope covering every use (TVM's pass of that name, on the block form).

An intermediate allocated in the root block but used only under loop `i` (after
`compute_at`) is allocated inside `i`'s body instead: each iteration gets its own copy,
which a parallel `i` needs (no data race) and `CompactBufferAllocation` can then shrink.

Uses are attributed to the blocks that make them; a block's writes never below a loop
bound to one of its reduce iter vars (a reduction carries its value across those
iterations), and nothing below such a loop of an enclosing block. Buffers
used outside any block with iter vars stay where they are. Global buffers are not moved
inside thread-bound loops, shared ones not inside `threadIdx`/`vthread` loops, nothing
inside a vectorized loop. A buffer moved under a loop gets a new opaque block wrapping
that loop's body.

>>> from graphc import tir
>>> from graphc.tir.transform.plan_buffer_allocation import plan_buffer_allocation
>>> f = plan_buffer_allocation(tir.PrimFunc([], tir.Evaluate(0)))
>>> f.body.value.value
0
"""

from __future__ import annotations

from ..analysis.var_use import used_vars
from ..expr import const
from ..function import PrimFunc
from ..functor import StmtMutator, StmtVisitor, post_order_visit
from ..stmt import Block, BlockRealize, For, ForKind, IterType
from .function_pass import prim_func_pass


def _common_prefix(a: tuple, b: tuple) -> tuple:
    n = 0
    for x, y in zip(a, b):
        if x is not y:
            break
        n += 1
    return a[:n]


class _UseScopes(StmtVisitor):
    """For each buffer, the common ancestor path (For / BlockRealize nodes) of its uses."""

    def __init__(self):
        self.path: list = []
        self.current: tuple | None = None  # (read position, write position); None: pinned
        self.positions: dict = {}
        self.pinned: set = set()
        self.owner: dict = {}

    def use(self, buffer, write: bool = False) -> None:
        if self.current is None:
            self.pinned.add(buffer)
            return
        position = self.current[1] if write else self.current[0]
        if buffer in self.positions:
            position = _common_prefix(self.positions[buffer], position)
        self.positions[buffer] = position

    def visit_BufferStore(self, op) -> None:
        self.use(op.buffer, write=True)
        self.visit_expr(op.value)
        for index in op.indices:
            self.visit_expr(index)

    def visit_expr(self, expr) -> None:
        def note(node):
            if type(node).__name__ == "BufferLoad":
                self.use(node.buffer)

        post_order_visit(expr, note)

    def visit_For(self, op: For) -> None:
        self.path.append(op)
        self.visit_stmt(op.body)
        self.path.pop()

    def visit_BlockRealize(self, op: BlockRealize) -> None:
        block = op.block
        for buf in block.alloc_buffers:
            self.owner[buf] = op
        saved = self.current
        for v in op.iter_values:
            self.visit_expr(v)
        self.visit_expr(op.predicate)
        self.path.append(op)
        if block.iter_vars:
            self.current = self._position(op, saved)
        else:
            self.current = None  # an opaque block: its direct uses pin the buffer
        for region in block.reads:
            self.use(region.buffer)
        for region in block.writes:
            self.use(region.buffer, write=True)
        for match in block.match_buffers:
            self.use(match.source.buffer, write=True)
        if block.init is not None:
            self.visit_stmt(block.init)
        self.visit_stmt(block.body)
        self.path.pop()
        self.current = saved

    def _position(self, op: BlockRealize, enclosing: tuple | None) -> tuple:
        """(read position, write position) of the uses `op`'s block makes directly."""
        full = tuple(self.path)  # ends with `op`
        carried = set(used_vars(
            *(v for iv, v in zip(op.block.iter_vars, op.iter_values) if iv.iter_type != IterType.DATA_PAR)
        ))
        limit = len(full) if enclosing is None else len(enclosing[1])
        cut = limit
        for index, node in enumerate(full[:limit]):
            if isinstance(node, For) and node.loop_var in carried:
                cut = index
                break
        return full[:limit], full[:cut]


def _allowed(node, scope: str) -> bool:
    """Whether a buffer of `scope` may be allocated inside the body of loop `node`."""
    if not isinstance(node, For):
        return True
    if node.kind == ForKind.VECTORIZED:
        return False
    if node.kind != ForKind.THREAD_BINDING:
        return True
    tag = node.thread_binding.thread_tag if node.thread_binding is not None else ""
    if scope.startswith("shared"):
        return not (tag.startswith("threadIdx") or tag.startswith("vthread"))
    return scope.startswith(("local", "warp", "wmma."))  # wmma: one fragment per warp


def plan_targets(body) -> dict:
    """Buffer -> the For or BlockRealize whose body it should be allocated in."""
    scopes = _UseScopes()
    scopes.visit_stmt(body)
    targets = {}
    for buf, owner in scopes.owner.items():
        if buf in scopes.pinned or buf not in scopes.positions:
            continue
        path = scopes.positions[buf]
        if not any(node is owner for node in path):
            continue
        start = next(k for k, node in enumerate(path) if node is owner)
        target = owner
        for node in path[start + 1 :]:
            if not _allowed(node, buf.scope):
                break
            target = node
        if target is not owner:
            targets[buf] = target
    return targets


class _Move(StmtMutator):
    def __init__(self, targets: dict):
        self.moved = set(targets)
        self.into: dict = {}
        for buf, node in targets.items():
            self.into.setdefault(node, []).append(buf)

    def visit_For(self, op: For):
        new = super().visit_For(op)
        bufs = self.into.get(op)
        if not bufs:
            return new
        wrapper = Block((), (), (), "", new.body, None, tuple(bufs))
        return new.replace(body=BlockRealize((), const(True), wrapper))

    def visit_BlockRealize(self, op: BlockRealize):
        new = super().visit_BlockRealize(op)
        block = new.block
        kept = tuple(b for b in block.alloc_buffers if b not in self.moved)
        added = tuple(self.into.get(op, ()))
        if len(kept) == len(block.alloc_buffers) and not added:
            return new
        return new.replace(block=block.replace(alloc_buffers=kept + added))


def plan_buffer_allocation(func: PrimFunc) -> PrimFunc:
    """`func` with every alloc_buffer at the innermost scope covering its uses."""
    targets = plan_targets(func.body)
    if not targets:
        return func
    return func.with_body(_Move(targets).visit_stmt(func.body))


@prim_func_pass(opt_level=0, name="PlanAndUpdateBufferAllocationLocation")
class PlanAndUpdateBufferAllocationLocation:
    """Move alloc_buffers to the innermost scope covering all their uses."""

    def transform_function(self, func, mod, ctx):
        return plan_buffer_allocation(func)


__all__ = ["PlanAndUpdateBufferAllocationLocation", "plan_buffer_allocation", "plan_targets"]
