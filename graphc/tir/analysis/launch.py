"""The launch shape of each GPU kernel in a scheduled PrimFunc: the extents of the loops bound
to `blockIdx.*` (the grid) and to `threadIdx.*` (the block), per root loop nest (each becomes
one kernel when the function is split into host and device code).

>>> from graphc import te, tir
>>> A = te.placeholder((1024,), name="A")
>>> B = te.compute((1024,), lambda i: A[i] * 2.0, name="B")
>>> sch = tir.Schedule(te.create_prim_func([A, B]))
>>> bx, tx = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 128])
>>> sch.bind(bx, "blockIdx.x"); sch.bind(tx, "threadIdx.x")
>>> thread_launches(sch.mod["main"])
[({'blockIdx.x': 8}, {'threadIdx.x': 128})]
"""

from __future__ import annotations

from .. import expr as tir_expr
from .. import stmt as tir_stmt


def _walk(stmt):
    yield stmt
    for child in _children(stmt):
        yield from _walk(child)


def _children(stmt) -> list:
    if isinstance(stmt, tir_stmt.SeqStmt):
        return list(stmt.seq)
    if isinstance(stmt, tir_stmt.BlockRealize):
        return [stmt.block]
    if isinstance(stmt, tir_stmt.Block):
        return [s for s in (stmt.init, stmt.body) if s is not None]
    if isinstance(stmt, tir_stmt.IfThenElse):
        return [s for s in (stmt.then_case, stmt.else_case) if s is not None]
    body = getattr(stmt, "body", None)
    return [body] if isinstance(body, tir_stmt.Stmt) else []


def thread_launches(func) -> list[tuple[dict, dict]]:
    """Per root loop nest that binds threads: ({blockIdx tag: extent}, {threadIdx tag: extent});
    a symbolic extent is its text."""
    body = func.body
    roots = body.block.body if isinstance(body, tir_stmt.BlockRealize) else body
    nests = roots.seq if isinstance(roots, tir_stmt.SeqStmt) else [roots]
    out = []
    for nest in nests:
        grid, block = {}, {}
        for s in _walk(nest):
            if isinstance(s, tir_stmt.For) and s.kind == tir_stmt.ForKind.THREAD_BINDING:
                tag = s.thread_binding.thread_tag
                extent = s.extent.value if isinstance(s.extent, tir_expr.IntImm) else str(s.extent)
                (grid if tag.startswith("blockIdx") else block)[tag] = extent
        if grid or block:
            out.append((grid, block))
    return out


__all__ = ["thread_launches"]
