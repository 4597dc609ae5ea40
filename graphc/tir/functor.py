"""Visitors and copy-on-write mutators over TensorIR expressions and statements.

Dispatch goes through a per-class table keyed by node type, walking the MRO once per
type and caching the result. Subclasses override `visit_<NodeName>` methods:

>>> from graphc import tir
>>> class CountVars(StmtExprVisitor):
...     def __init__(self):
...         self.count = 0
...     def visit_Var(self, op):
...         self.count += 1
>>> v = CountVars(); v.visit_expr(tir.Var("i") * 2 + tir.Var("j")); v.count
2

A mutator returns the node itself when none of its children changed.
"""

from __future__ import annotations

from ..ir.dispatch import dispatch
from .buffer import Buffer
from .expr import And as AndNode
from .expr import (
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    Let,
    Not,
    PrimExpr,
    Ramp,
    Select,
    Shuffle,
)
from .expr import Or as OrNode
from .stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    IfThenElse,
    IterVar,
    LetStmt,
    MatchBufferRegion,
    SeqStmt,
    Stmt,
    While,
)


class ExprVisitor:
    """Walks every sub-expression; override `visit_<Node>` to act on a node type."""

    def visit_expr(self, expr: PrimExpr):
        return dispatch(self, expr, "expression")

    def visit_PrimExpr(self, op):  # leaves: Var, IntImm, FloatImm, StringImm
        return None

    def visit_Cast(self, op: Cast):
        self.visit_expr(op.value)

    def visit_BinaryOp(self, op: BinaryOp):
        self.visit_expr(op.a)
        self.visit_expr(op.b)

    def visit_CmpOp(self, op: CmpOp):
        self.visit_expr(op.a)
        self.visit_expr(op.b)

    def visit_And(self, op):
        self.visit_expr(op.a)
        self.visit_expr(op.b)

    def visit_Or(self, op):
        self.visit_expr(op.a)
        self.visit_expr(op.b)

    def visit_Not(self, op: Not):
        self.visit_expr(op.a)

    def visit_Select(self, op: Select):
        self.visit_expr(op.condition)
        self.visit_expr(op.true_value)
        self.visit_expr(op.false_value)

    def visit_Let(self, op: Let):
        self.visit_expr(op.value)
        self.visit_expr(op.body)

    def visit_Call(self, op: Call):
        for arg in op.args:
            self.visit_expr(arg)

    def visit_Ramp(self, op: Ramp):
        self.visit_expr(op.base)
        self.visit_expr(op.stride)

    def visit_Broadcast(self, op: Broadcast):
        self.visit_expr(op.value)

    def visit_Shuffle(self, op: Shuffle):
        for v in op.vectors:
            self.visit_expr(v)

    def visit_BufferLoad(self, op: BufferLoad):
        self.visit_buffer_use(op.buffer)
        for index in op.indices:
            self.visit_expr(index)

    def visit_buffer_use(self, buffer: Buffer):
        """Called for every buffer a load or store names; override to track buffers."""
        return None


class StmtVisitor:
    """Walks every statement; expressions go through `visit_expr`."""

    def visit_stmt(self, stmt: Stmt):
        return dispatch(self, stmt, "statement")

    def visit_expr(self, expr: PrimExpr):  # overridden by StmtExprVisitor
        return None

    def visit_buffer_use(self, buffer: Buffer):
        return None

    def visit_BufferStore(self, op: BufferStore):
        self.visit_buffer_use(op.buffer)
        self.visit_expr(op.value)
        for index in op.indices:
            self.visit_expr(index)

    def visit_SeqStmt(self, op: SeqStmt):
        for s in op.seq:
            self.visit_stmt(s)

    def visit_For(self, op: For):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.visit_stmt(op.body)

    def visit_While(self, op: While):
        self.visit_expr(op.condition)
        self.visit_stmt(op.body)

    def visit_IfThenElse(self, op: IfThenElse):
        self.visit_expr(op.condition)
        self.visit_stmt(op.then_case)
        if op.else_case is not None:
            self.visit_stmt(op.else_case)

    def visit_LetStmt(self, op: LetStmt):
        self.visit_expr(op.value)
        self.visit_stmt(op.body)

    def visit_Allocate(self, op: Allocate):
        for e in op.extents:
            self.visit_expr(e)
        self.visit_expr(op.condition)
        self.visit_stmt(op.body)

    def visit_DeclBuffer(self, op: DeclBuffer):
        self.visit_stmt(op.body)

    def visit_Evaluate(self, op: Evaluate):
        self.visit_expr(op.value)

    def visit_AttrStmt(self, op: AttrStmt):
        self.visit_expr(op.value)
        self.visit_stmt(op.body)

    def visit_AssertStmt(self, op: AssertStmt):
        self.visit_expr(op.condition)
        self.visit_expr(op.message)
        self.visit_stmt(op.body)

    def visit_buffer_region(self, region: BufferRegion):
        for r in region.region:
            self.visit_expr(r.min)
            self.visit_expr(r.extent)

    def visit_Block(self, op: Block):
        for iv in op.iter_vars:
            if iv.dom is not None:
                self.visit_expr(iv.dom.min)
                self.visit_expr(iv.dom.extent)
        for region in op.reads + op.writes:
            self.visit_buffer_region(region)
        for match in op.match_buffers:
            self.visit_buffer_region(match.source)
        if op.init is not None:
            self.visit_stmt(op.init)
        self.visit_stmt(op.body)

    def visit_BlockRealize(self, op: BlockRealize):
        for v in op.iter_values:
            self.visit_expr(v)
        self.visit_expr(op.predicate)
        self.visit_stmt(op.block)


class StmtExprVisitor(StmtVisitor, ExprVisitor):
    """Visits statements and every expression inside them."""

    def visit_expr(self, expr: PrimExpr):
        return dispatch(self, expr, "expression")


# --- mutators --------------------------------------------------------------------------


def _tuple(items, fn):
    """Map `fn` over items; return the original tuple when nothing changed."""
    new = tuple(fn(x) for x in items)
    if all(a is b for a, b in zip(new, items)):
        return items
    return new


class ExprMutator:
    """Rebuilds expressions bottom-up, copying only what changed."""

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return dispatch(self, expr, "expression")

    def visit_PrimExpr(self, op):
        return op

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        """Map a buffer a load or store names; override to substitute buffers."""
        return buffer

    def visit_Cast(self, op: Cast):
        return op.replace(value=self.visit_expr(op.value))

    def visit_BinaryOp(self, op: BinaryOp):
        return op.replace(a=self.visit_expr(op.a), b=self.visit_expr(op.b))

    def visit_CmpOp(self, op: CmpOp):
        return op.replace(a=self.visit_expr(op.a), b=self.visit_expr(op.b))

    def visit_And(self, op: AndNode):
        return op.replace(a=self.visit_expr(op.a), b=self.visit_expr(op.b))

    def visit_Or(self, op: OrNode):
        return op.replace(a=self.visit_expr(op.a), b=self.visit_expr(op.b))

    def visit_Not(self, op: Not):
        return op.replace(a=self.visit_expr(op.a))

    def visit_Select(self, op: Select):
        return op.replace(
            condition=self.visit_expr(op.condition),
            true_value=self.visit_expr(op.true_value),
            false_value=self.visit_expr(op.false_value),
        )

    def visit_Let(self, op: Let):
        return op.replace(value=self.visit_expr(op.value), body=self.visit_expr(op.body))

    def visit_Call(self, op: Call):
        return op.replace(args=_tuple(op.args, self.visit_expr))

    def visit_Ramp(self, op: Ramp):
        return op.replace(base=self.visit_expr(op.base), stride=self.visit_expr(op.stride))

    def visit_Broadcast(self, op: Broadcast):
        return op.replace(value=self.visit_expr(op.value))

    def visit_Shuffle(self, op: Shuffle):
        return op.replace(vectors=_tuple(op.vectors, self.visit_expr))

    def visit_BufferLoad(self, op: BufferLoad):
        return op.replace(buffer=self.visit_buffer(op.buffer), indices=_tuple(op.indices, self.visit_expr))


class StmtMutator:
    """Rebuilds statements bottom-up, copying only what changed."""

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        return dispatch(self, stmt, "statement")

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:  # overridden by StmtExprMutator
        return expr

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return buffer

    def visit_BufferStore(self, op: BufferStore):
        return op.replace(
            buffer=self.visit_buffer(op.buffer),
            value=self.visit_expr(op.value),
            indices=_tuple(op.indices, self.visit_expr),
        )

    def visit_SeqStmt(self, op: SeqStmt):
        seq = _tuple(op.seq, self.visit_stmt)
        return op if seq is op.seq else SeqStmt.flatten(*seq)

    def visit_For(self, op: For):
        return op.replace(
            min=self.visit_expr(op.min), extent=self.visit_expr(op.extent), body=self.visit_stmt(op.body)
        )

    def visit_While(self, op: While):
        return op.replace(condition=self.visit_expr(op.condition), body=self.visit_stmt(op.body))

    def visit_IfThenElse(self, op: IfThenElse):
        else_case = self.visit_stmt(op.else_case) if op.else_case is not None else None
        return op.replace(
            condition=self.visit_expr(op.condition),
            then_case=self.visit_stmt(op.then_case),
            else_case=else_case,
        )

    def visit_LetStmt(self, op: LetStmt):
        return op.replace(value=self.visit_expr(op.value), body=self.visit_stmt(op.body))

    def visit_Allocate(self, op: Allocate):
        return op.replace(
            extents=_tuple(op.extents, self.visit_expr),
            condition=self.visit_expr(op.condition),
            body=self.visit_stmt(op.body),
        )

    def visit_DeclBuffer(self, op: DeclBuffer):
        return op.replace(buffer=self.visit_buffer(op.buffer), body=self.visit_stmt(op.body))

    def visit_Evaluate(self, op: Evaluate):
        return op.replace(value=self.visit_expr(op.value))

    def visit_AttrStmt(self, op: AttrStmt):
        return op.replace(value=self.visit_expr(op.value), body=self.visit_stmt(op.body))

    def visit_AssertStmt(self, op: AssertStmt):
        return op.replace(
            condition=self.visit_expr(op.condition),
            message=self.visit_expr(op.message),
            body=self.visit_stmt(op.body),
        )

    def visit_range(self, r):
        return r.replace(min=self.visit_expr(r.min), extent=self.visit_expr(r.extent))

    def visit_buffer_region(self, region: BufferRegion) -> BufferRegion:
        return region.replace(
            buffer=self.visit_buffer(region.buffer), region=_tuple(region.region, self.visit_range)
        )

    def visit_iter_var(self, iv: IterVar) -> IterVar:
        return iv if iv.dom is None else iv.replace(dom=self.visit_range(iv.dom))

    def visit_match_buffer(self, match: MatchBufferRegion) -> MatchBufferRegion:
        return match.replace(source=self.visit_buffer_region(match.source))

    def visit_Block(self, op: Block):
        return op.replace(
            iter_vars=_tuple(op.iter_vars, self.visit_iter_var),
            reads=_tuple(op.reads, self.visit_buffer_region),
            writes=_tuple(op.writes, self.visit_buffer_region),
            match_buffers=_tuple(op.match_buffers, self.visit_match_buffer),
            init=self.visit_stmt(op.init) if op.init is not None else None,
            body=self.visit_stmt(op.body),
        )

    def visit_BlockRealize(self, op: BlockRealize):
        return op.replace(
            iter_values=_tuple(op.iter_values, self.visit_expr),
            predicate=self.visit_expr(op.predicate),
            block=self.visit_stmt(op.block),
        )


class StmtExprMutator(StmtMutator, ExprMutator):
    """Rebuilds statements and every expression inside them."""

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return dispatch(self, expr, "expression")

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return buffer


class BufferAccessMutator(StmtExprMutator):
    """A mutator that redirects loads and stores: override `rewrite_access`.

    `rewrite_access(buffer, indices)` returns the new `(buffer, indices)` for an access, or
    None to leave it alone; loads and stores of every kind go through it.
    """

    def rewrite_access(self, buffer: Buffer, indices: tuple):
        return None

    def visit_BufferLoad(self, op: BufferLoad):
        op = super().visit_BufferLoad(op)
        new = self.rewrite_access(op.buffer, op.indices)
        return op if new is None else op.replace(buffer=new[0], indices=new[1])

    def visit_BufferStore(self, op: BufferStore):
        op = super().visit_BufferStore(op)
        new = self.rewrite_access(op.buffer, op.indices)
        return op if new is None else op.replace(buffer=new[0], indices=new[1])


def substitute(node, vmap: dict):
    """Replace Vars by expressions (`vmap` maps Var -> PrimExpr) in an expression or statement.

    >>> from graphc import tir
    >>> i = tir.Var("i")
    >>> substitute(i * 2 + 1, {i: tir.const(3)}).value
    7
    """
    if not vmap:
        return node
    sub = _Subst(vmap)
    return sub.visit_expr(node) if isinstance(node, PrimExpr) else sub.visit_stmt(node)


# The visitors of `substitute` and `post_order_visit` are classes of their own, made once: a
# class made per call would start with an empty dispatch table (tens of thousands of calls
# per model compile).


class VarSubstitution:
    """A mutator mix-in: Vars found in `self.vmap` are replaced, and a binary op whose operands
    changed is rebuilt through its folding builder, so constants refold on the way up."""

    vmap: dict

    def visit_Var(self, op):
        return self.vmap.get(op, op)

    def visit_BinaryOp(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if a is op.a and b is op.b:
            return op
        return _rebuild_binary(op, a, b)


class _Subst(VarSubstitution, StmtExprMutator):
    def __init__(self, vmap: dict):
        super().__init__()
        self.vmap = vmap


def _rebuild_binary(op, a, b):
    """Rebuild a binary op through its folding builder so constants fold after substitution."""
    from .generic import BINARY_BUILDERS  # generic builds on this module's visitors

    build = BINARY_BUILDERS.get(type(op))
    if build is None:
        return op.replace(a=a, b=b)
    return build(a, b)


def post_order_visit(node, fn) -> None:
    """Call `fn` on every expression and statement under `node`, children first."""
    v = _PostOrder(fn)
    if isinstance(node, PrimExpr):
        v.visit_expr(node)
    else:
        v.visit_stmt(node)


class _PostOrder(StmtExprVisitor):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def visit_expr(self, expr):
        super().visit_expr(expr)
        self.fn(expr)

    def visit_stmt(self, stmt):
        super().visit_stmt(stmt)
        self.fn(stmt)


__all__ = [
    "ExprVisitor",
    "ExprMutator",
    "StmtVisitor",
    "StmtMutator",
    "StmtExprVisitor",
    "StmtExprMutator",
    "BufferAccessMutator",
    "VarSubstitution",
    "substitute",
    "post_order_visit",
    "Buffer",
]
