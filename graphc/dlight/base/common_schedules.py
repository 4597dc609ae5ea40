"""Inlining shared by the rules: fold injective blocks into their neighbours where legal.

`try_inline` repeats, until nothing changes: `compute_inline` of each injective block
that writes an intermediate buffer (its consumers recompute it), then
`reverse_compute_inline` of each injective block into an injective producer. A primitive
that refuses (ScheduleError) is skipped: inlining is an optimisation, never a reason to
fail. A producer that calls an intrinsic (`exp`, `log`, ...) and feeds several consumer
blocks stays materialized, so that inlining does not compute it once per consumer (as
softmax's `exp(x - max)` feeding both the sum and the division would be).

>>> from graphc import te, tir
>>> A = te.placeholder((4, 8), name="A")
>>> B = te.compute((4, 8), lambda i, j: A[i, j] + 1.0, name="B")
>>> C = te.compute((4, 8), lambda i, j: B[i, j] * 2.0, name="C")
>>> sch = tir.Schedule(te.create_prim_func([A, C]))
>>> [b.name for b in try_inline(sch)]
['C']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...tir.functor import StmtExprVisitor
from ...tir.schedule import Schedule
from .analysis import BlockInfo, is_output_block, normalize_prim_func


def try_inline(sch: Schedule, reverse: bool = True, keep=()) -> list[BlockInfo] | None:
    """Inline what can be inlined; returns the block infos left (None: nested scopes). Blocks
    named in `keep` stay materialized (a convolution's padded input, read many times)."""
    infos = normalize_prim_func(sch)
    changed = infos is not None
    while changed:
        changed = False
        for info in infos:
            if info.name in keep:
                continue
            if info.is_injective() and not is_output_block(sch, info.block_rv):
                if _expensive(sch.get(info.block_rv)) and len(sch.get_consumers(info.block_rv)) > 1:
                    continue
                if _attempt(sch.compute_inline, info):
                    changed = True
                    break
        if not changed and reverse:
            for k, info in enumerate(infos):
                if k > 0 and info.is_injective() and _producers_injective(sch, infos, info):
                    if _attempt(sch.reverse_compute_inline, info):
                        changed = True
                        break
        if changed:
            infos = normalize_prim_func(sch)
            changed = infos is not None
    return infos


def _attempt(primitive, info: BlockInfo) -> bool:
    try:
        primitive(info.block_rv)
    except ScheduleError:
        return False
    return True


def _expensive(block) -> bool:
    """Whether a block's computation calls an intrinsic (costly to repeat per consumer)."""
    found = False

    class _Find(StmtExprVisitor):
        def visit_Call(self, op):
            nonlocal found
            found = True

    _Find().visit_stmt(block.body)
    return found


def _producers_injective(sch: Schedule, infos: list, info: BlockInfo) -> bool:
    by_name = {i.name: i for i in infos}
    try:
        producers = sch.get_producers(info.block_rv)
    except ScheduleError:
        return False
    names = [sch.get(p).name_hint for p in producers]
    return bool(names) and all(n in by_name and by_name[n].is_injective() for n in names)


__all__ = ["try_inline"]
