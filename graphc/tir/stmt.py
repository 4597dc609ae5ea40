"""TensorIR statements: loops, blocks, stores, allocations and control flow.

A `Block` is the unit of computation schedules work on: its iteration variables
(`IterVar`, spatial or reduce) are bound to loop expressions by a `BlockRealize`;
`reads`/`writes` summarize the regions it touches; `init` runs before the first
reduction step. Lowering turns blocks into plain loops before code generation.
"""

from __future__ import annotations

import enum
from typing import Any

from ..ir.node import Node, node
from .buffer import Buffer
from .expr import PrimExpr, Range, Var, const, convert


class Stmt(Node):
    """Base class of statements."""

    __slots__ = ()

    def __repr__(self) -> str:
        return self.script()


class ForKind(enum.Enum):
    """How a loop runs: serially, in parallel, vectorized, unrolled or bound to a GPU thread."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


class IterType(enum.Enum):
    """The kind of a block iteration variable (TVM's IterVarType)."""

    DATA_PAR = 0  # spatial: instances write disjoint regions
    THREAD_INDEX = 1
    COMM_REDUCE = 2  # reduce: instances accumulate into the same region
    ORDERED = 3  # scan
    OPAQUE = 4  # anything else


@node
class IterVar(Node):
    """A variable with a domain and a kind: a block iterator or a thread axis."""

    dom: Range | None
    var: Var
    iter_type: IterType = IterType.DATA_PAR
    thread_tag: str = ""

    def __repr__(self) -> str:
        return f"IterVar({self.var.name}, {self.dom!r}, {self.iter_type.name})"


@node
class BufferRegion(Node):
    """A rectangular region of a buffer: one Range per dimension."""

    buffer: Buffer
    region: tuple

    @staticmethod
    def full(buffer: Buffer) -> BufferRegion:
        return BufferRegion(buffer, tuple(Range(const(0, d.dtype), d) for d in buffer.shape))

    @staticmethod
    def from_point(buffer: Buffer, indices) -> BufferRegion:
        return BufferRegion(buffer, tuple(Range(convert(i), const(1, convert(i).dtype)) for i in indices))

    def __repr__(self) -> str:
        return f"BufferRegion({self.buffer.name}, {self.region!r})"


@node
class MatchBufferRegion(Node):
    """Bind `buffer` to a region of another buffer (a view used inside a block)."""

    buffer: Buffer
    source: BufferRegion


@node
class BufferStore(Stmt):
    """`buffer[indices] = value`."""

    buffer: Buffer
    value: PrimExpr
    indices: tuple
    predicate: PrimExpr | None = None

    def __post_init__(self):
        # Accept Python ints as indices and values; IR consumers can rely on PrimExprs.
        if not isinstance(self.value, PrimExpr):
            object.__setattr__(self, "value", convert(self.value, self.buffer.dtype))
        if not all(isinstance(i, PrimExpr) for i in self.indices):
            object.__setattr__(self, "indices", tuple(convert(i) for i in self.indices))


@node
class SeqStmt(Stmt):
    """Statements run one after another."""

    seq: tuple

    @staticmethod
    def flatten(*stmts) -> Stmt:
        """One statement from many: nested SeqStmts flattened, no-ops dropped."""
        out: list[Stmt] = []
        for s in stmts:
            if s is None:
                continue
            if isinstance(s, list | tuple):
                s = SeqStmt.flatten(*s)
            if isinstance(s, SeqStmt):
                out.extend(s.seq)
            elif not is_no_op(s):
                out.append(s)
        if not out:
            return Evaluate(const(0))
        return out[0] if len(out) == 1 else SeqStmt(tuple(out))


@node
class For(Stmt):
    """`for loop_var in [min, min + extent)`, run as `kind` says."""

    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: IterVar | None = None
    annotations: dict = None  # type: ignore[assignment]

    def __post_init__(self):
        if self.annotations is None:
            object.__setattr__(self, "annotations", {})
        if not isinstance(self.min, PrimExpr):
            object.__setattr__(self, "min", convert(self.min))
        if not isinstance(self.extent, PrimExpr):
            object.__setattr__(self, "extent", convert(self.extent))


@node
class While(Stmt):
    """Repeat `body` while `condition` holds."""

    condition: PrimExpr
    body: Stmt


@node
class IfThenElse(Stmt):
    """Run `then_case` when `condition` holds, else `else_case` (which may be None)."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class LetStmt(Stmt):
    """Bind `var` to `value` within `body`."""

    var: Var
    value: PrimExpr
    body: Stmt


@node
class Allocate(Stmt):
    """Allocate `extents` elements of `dtype` for the handle `buffer_var`, live within `body`.

    The storage scope lives on the buffer var's users; `scope` repeats it here for codegen
    ("global" becomes heap or stack memory on the CPU, "shared"/"local" on GPUs).
    """

    buffer_var: Var
    dtype: str
    extents: tuple
    condition: PrimExpr
    body: Stmt
    scope: str = "global"
    annotations: dict = None  # type: ignore[assignment]

    def __post_init__(self):
        if self.annotations is None:
            object.__setattr__(self, "annotations", {})


@node
class DeclBuffer(Stmt):
    """Declare `buffer` (a view of existing data) for use within `body`."""

    buffer: Buffer
    body: Stmt


@node
class Evaluate(Stmt):
    """Evaluate an expression for its side effects (a call), discarding the value."""

    value: PrimExpr

    def __init__(self, value):
        object.__setattr__(self, "value", convert(value))


@node
class AttrStmt(Stmt):
    """Attach the attribute `attr_key` = `value` of `node` to `body` (thread extents, pragmas)."""

    node: Any
    attr_key: str
    value: PrimExpr
    body: Stmt


@node
class AssertStmt(Stmt):
    """Check `condition` at run time, failing with `message`, then run `body`."""

    condition: PrimExpr
    message: PrimExpr
    body: Stmt


@node
class Block(Stmt):
    """A unit of computation with declared iteration space and buffer accesses."""

    iter_vars: tuple
    reads: tuple
    writes: tuple
    name_hint: str
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple = ()
    match_buffers: tuple = ()
    annotations: dict = None  # type: ignore[assignment]

    def __post_init__(self):
        if self.annotations is None:
            object.__setattr__(self, "annotations", {})


@node
class BlockRealize(Stmt):
    """Run `block` with its iteration variables bound to `iter_values` when `predicate` holds."""

    iter_values: tuple
    predicate: PrimExpr
    block: Block


def is_no_op(stmt: Stmt) -> bool:
    """True for statements that do nothing (`Evaluate(0)`, empty sequences)."""
    from .expr import IntImm

    if isinstance(stmt, Evaluate):
        return isinstance(stmt.value, IntImm)
    if isinstance(stmt, SeqStmt):
        return all(is_no_op(s) for s in stmt.seq)
    return False


def stmt_seq(*stmts) -> Stmt:
    """`SeqStmt.flatten` under TVM's helper name."""
    return SeqStmt.flatten(*stmts)
