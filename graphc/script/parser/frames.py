"""What the TensorIR parser collects while it is inside a function or a block.

A frame gathers the parts of a construct that script lines declare one at a time
(`T.reads(...)`, `T.axis.spatial(...)`, `T.alloc_buffer(...)`) until the construct ends.

>>> frame = BlockFrame("C")
>>> frame.reads is None, frame.iter_vars
(True, [])
"""

from __future__ import annotations

import dataclasses

from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt


@dataclasses.dataclass
class FuncFrame:
    """A PrimFunc being parsed: attributes, buffer_map and the root block's allocations."""

    name: str
    attrs: dict = dataclasses.field(default_factory=dict)
    buffer_map: dict = dataclasses.field(default_factory=dict)
    alloc_buffers: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class BlockFrame:
    """A `with T.block(name):` being parsed."""

    name: str
    no_realize: bool = False
    iter_vars: list = dataclasses.field(default_factory=list)
    iter_values: list = dataclasses.field(default_factory=list)
    predicate: tir_expr.PrimExpr | None = None
    reads: tuple | None = None
    writes: tuple | None = None
    annotations: dict = dataclasses.field(default_factory=dict)
    alloc_buffers: list = dataclasses.field(default_factory=list)
    match_buffers: list = dataclasses.field(default_factory=list)
    init: tir_stmt.Stmt | None = None

    def finish(self, body: tir_stmt.Stmt) -> tir_stmt.Stmt:
        block = tir_stmt.Block(tuple(self.iter_vars), self.reads or (), self.writes or (), self.name, body,
                        self.init, tuple(self.alloc_buffers), tuple(self.match_buffers),
                        dict(self.annotations))
        if self.reads is None or self.writes is None:
            reads, writes = access_regions(block)
            block = block.replace(reads=self.reads if self.reads is not None else tuple(reads),
                                  writes=self.writes if self.writes is not None else tuple(writes))
        if self.no_realize:
            return block
        predicate = self.predicate if self.predicate is not None else tir_expr.const(True)
        return tir_stmt.BlockRealize(tuple(self.iter_values), predicate, block)


def access_regions(block: tir_stmt.Block) -> tuple:
    """The block's (reads, writes) when the script omits them; like TVM, a reduction block
    (one with an init) does not list the buffer it accumulates into among its reads."""
    from ...tir.analysis.block_access import get_block_read_write_region

    return get_block_read_write_region(block)


class Wrap:
    """A statement that scopes over the rest of its sequence: `make(rest)` builds it."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


def to_region(value) -> tir_stmt.BufferRegion:
    """A BufferRegion from a region, a point load `A[i]` or a whole buffer `A`."""
    if isinstance(value, tir_stmt.BufferRegion):
        return value
    if isinstance(value, tir_expr.BufferLoad):
        return tir_stmt.BufferRegion.from_point(value.buffer, value.indices)
    if hasattr(value, "shape") and hasattr(value, "data"):
        return tir_stmt.BufferRegion.full(value)
    raise TypeError(f"expected a buffer region such as A[i, 0:4], got {type(value).__name__}")


def seq(stmts: list) -> tir_stmt.Stmt:
    """One statement from a list (no-ops kept, so printing then parsing is exact)."""
    if not stmts:
        return tir_stmt.Evaluate(tir_expr.const(0))
    return stmts[0] if len(stmts) == 1 else tir_stmt.SeqStmt(tuple(stmts))
