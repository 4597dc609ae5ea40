"""Finding, replacing and removing statements inside an immutable PrimFunc body.

Every schedule primitive works the same way: locate the statements it rewrites (a path
from the function body down to a block or loop), build new statements, and splice them
back in by identity. Nothing here mutates IR; each helper returns new nodes.

>>> from graphc import tir
>>> i = tir.Var("i")
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, A.vstore([i], 1.0))
>>> [type(s).__name__ for s in find_loop_path(loop, i)]
['For']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.block_access import from_affine, to_affine
from ..arith import Analyzer
from ..expr import IntImm, PrimExpr, Var
from ..functor import StmtMutator
from ..stmt import (
    Allocate,
    AttrStmt,
    Block,
    BlockRealize,
    DeclBuffer,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)  # fmt: skip


def children(stmt: Stmt) -> tuple:
    """The statements directly under `stmt` (a block's init is not a scheduling scope)."""
    if isinstance(stmt, SeqStmt):
        return stmt.seq
    if isinstance(stmt, BlockRealize):
        return (stmt.block,)
    if isinstance(stmt, IfThenElse):
        return (stmt.then_case,) if stmt.else_case is None else (stmt.then_case, stmt.else_case)
    if isinstance(stmt, For | Block | LetStmt | Allocate | DeclBuffer | AttrStmt):
        return (stmt.body,)
    return ()


def find_path(root: Stmt, pred) -> list | None:
    """The statements from `root` down to the first (pre-order) statement satisfying `pred`."""
    stack = [(root, 0)]
    path: list = []
    while stack:
        stmt, depth = stack.pop()
        del path[depth:]
        path.append(stmt)
        if pred(stmt):
            return path
        for child in reversed(children(stmt)):
            stack.append((child, depth + 1))
    return None


def find_block_path(root: Stmt, name: str) -> list | None:
    """Path to the BlockRealize of the block called `name` (the Block is `path[-1].block`)."""
    return find_path(root, lambda s: isinstance(s, BlockRealize) and s.block.name_hint == name)


def find_loop_path(root: Stmt, var: Var) -> list | None:
    """Path to the For whose loop variable is `var` (compared by identity)."""
    return find_path(root, lambda s: isinstance(s, For) and s.loop_var is var)


def walk(root: Stmt):
    """Every statement under `root`, pre-order."""
    stack = [root]
    while stack:
        stmt = stack.pop()
        yield stmt
        stack.extend(reversed(children(stmt)))


def scope_realizes(stmt: Stmt) -> list:
    """The BlockRealizes directly in the scope of `stmt`: not inside other blocks below it."""
    found: list = []
    stack = list(reversed(children(stmt))) if isinstance(stmt, Block) else [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, BlockRealize):
            found.append(s)
            continue
        stack.extend(reversed(children(s)))
    return found


def enclosing_block(path: list) -> Block | None:
    """The innermost Block strictly above the last statement of `path`."""
    for stmt in reversed(path[:-1]):
        if isinstance(stmt, Block):
            return stmt
    return None


def loops_above(path: list) -> list:
    """The For loops on `path` below the innermost enclosing block, outermost first."""
    loops: list = []
    for stmt in path[:-1]:
        if isinstance(stmt, Block):
            loops = []
        elif isinstance(stmt, For):
            loops.append(stmt)
    return loops


class _Replacer(StmtMutator):
    def __init__(self, mapping: dict):
        self.mapping = mapping

    def visit_stmt(self, stmt):
        new = self.mapping.get(id(stmt))
        if new is not None:
            return new[1]
        return super().visit_stmt(stmt)


def replace_stmts(root: Stmt, mapping: dict) -> Stmt:
    """`root` with each statement `old` (by identity) in `mapping` replaced by `mapping[old]`.

    A replacement of None removes the statement from its enclosing sequence.
    """
    keyed = {id(old): (old, new if new is not None else Evaluate(0)) for old, new in mapping.items()}
    return _Replacer(keyed).visit_stmt(root)


def removal_root(path: list) -> Stmt:
    """The highest statement on `path` whose subtree holds nothing but `path[-1]`.

    Removing a block must also remove the loops that were there only to run it.
    """
    target = path[-1]
    for k in range(len(path) - 2, -1, -1):
        if isinstance(path[k], For) and path[k].body is target:
            target = path[k]
        else:
            break
    return target


def is_one(x) -> bool:
    return isinstance(x, IntImm) and x.value == 1


def is_zero(x) -> bool:
    return isinstance(x, IntImm) and x.value == 0


def simplify(expr: PrimExpr, dom: dict | None = None) -> PrimExpr:
    """Simplify an index expression.

    Affine expressions are normalized here (so results do not depend on the simplifier's
    canonical order); anything else goes through `graphc.tir.arith.Analyzer`, with the
    loop domains in `dom` (Var -> Range) bound.

    >>> from graphc import tir
    >>> o, m, i = tir.Var("o"), tir.Var("m"), tir.Var("i")
    >>> print(simplify((o * 2 + m) * 2 + i))
    o * 4 + m * 2 + i
    >>> print(simplify((o * 4 + m) // 4, {m: tir.Range(0, 4)}))
    o
    """
    if not isinstance(expr, PrimExpr) or isinstance(expr, IntImm | Var):
        return expr
    form = to_affine(expr)
    if form is not None:
        coeffs, constant = form
        return from_affine(coeffs, constant, expr.dtype)
    analyzer = Analyzer()
    for var, rng in (dom or {}).items():
        analyzer.bind(var, rng)
    return analyzer.simplify(expr)


def check_exists(path, what: str, func_name: str):
    if path is None:
        raise ScheduleError(f"{what} does not exist in function {func_name!r}")
    return path
