"""TensorIR: the loop-level IR of tensor programs (expressions, statements, PrimFunc)."""

from ..errors import ScheduleError, TIRError
from .buffer import Buffer, decl_buffer
from .expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, BinaryOp, Broadcast, BufferLoad, Call, Cast, CmpOp, Div,
    FloatImm, FloorDiv, FloorMod, IntImm, Let, Max, Min, Mod, Mul, Not, Or, PrimExpr, Ramp,
    Range, Select, Shuffle, SizeVar, StringImm, Sub, Var, cast, const, convert, floordiv,
    floormod, truncdiv, truncmod, div, truediv, select, ramp, broadcast,
)  # fmt: skip
from .function import PrimFunc
from .functor import (
    ExprMutator, ExprVisitor, StmtExprMutator, StmtExprVisitor, StmtMutator, StmtVisitor,
    post_order_visit, substitute,
)  # fmt: skip
from .op import (
    abs, acos, acosh, all, any, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, call_extern, call_intrin, call_pure_extern, ceil, ceildiv, copysign,
    cos, cosh, erf, exp, exp2, exp10, expm1, fabs, floor, fmod, hypot, if_then_else, infinity,
    isfinite, isinf, isnan, likely, log, log1p, log2, log10, max, max_value, min, min_value,
    nearbyint, nextafter, popcount, pow, power, register_intrin, reinterpret, round, rsqrt,
    shift_left, shift_right, sigmoid, sin, sinh, sqrt, tan, tanh, trunc,
)  # fmt: skip
from .stmt import (
    Allocate, AssertStmt, AttrStmt, Block, BlockRealize, BufferRegion, BufferStore, DeclBuffer,
    Evaluate, For, ForKind, IfThenElse, IterType, IterVar, LetStmt, MatchBufferRegion, SeqStmt,
    Stmt, While, stmt_seq,
)  # fmt: skip

__all__ = [name for name in dir() if not name.startswith("_")]


def __getattr__(name):
    # Subpackages that depend on more than the core load on first use.
    if name in ("analysis", "transform", "arith", "schedule"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name == "Schedule":
        from .schedule import Schedule

        return Schedule
    raise AttributeError(f"module 'graphc.tir' has no attribute {name!r}")
