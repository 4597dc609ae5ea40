"""TensorIR: the loop-level IR of tensor programs (expressions, statements, PrimFunc)."""

from ..errors import ScheduleError, TIRError
from .buffer import Buffer, decl_buffer
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Range,
    Select,
    Shuffle,
    SizeVar,
    StringImm,
    Sub,
    Var,
    broadcast,
    cast,
    const,
    convert,
    div,
    floordiv,
    floormod,
    ramp,
    select,
    truediv,
    truncdiv,
    truncmod,
)  # fmt: skip
from .function import PrimFunc
from .functor import (
    ExprMutator,
    ExprVisitor,
    StmtExprMutator,
    StmtExprVisitor,
    StmtMutator,
    StmtVisitor,
    post_order_visit,
    substitute,
)  # fmt: skip
from .index_map import IndexMap
from .op import *  # noqa: F403 - the intrinsic helpers, as tir.<name>
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
    ForKind,
    IfThenElse,
    IterType,
    IterVar,
    LetStmt,
    MatchBufferRegion,
    SeqStmt,
    Stmt,
    While,
    stmt_seq,
)  # fmt: skip

__all__ = [name for name in dir() if not name.startswith("_")]


def __getattr__(name):
    # Subpackages that depend on more than the core load on first use.
    if name in ("analysis", "transform", "arith", "schedule", "tensor_intrin"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name == "Schedule":
        from .schedule import Schedule

        return Schedule
    if name == "TensorIntrin":
        from .schedule import TensorIntrin

        return TensorIntrin
    raise AttributeError(f"module 'graphc.tir' has no attribute {name!r}")
