"""`gpu.Fallback`: a valid GPU schedule for any PrimFunc at all.

Injective producers are inlined first (`try_inline`). Then each block of the root scope gets
its leading spatial loops fused, split by the thread count and bound to blockIdx.x /
threadIdx.x; its other loops (reductions, scans) run inside each thread, a reduction's init
hoisted before them. A block with no leading spatial loop, or one whose loops a primitive
refuses to fuse or split, runs in a single thread of a single block; a function in a form
no primitive handles (block scopes nested below the root, loops without blocks) runs whole
in one thread. So the rule never declines a PrimFunc and never raises.

>>> import graphc
>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((1000,), name="A")
>>> B = te.compute((1000,), lambda i: A[i] * 2.0, name="B")
>>> sch = Fallback().apply(te.create_prim_func([A, B]), Target("opencl"), False)
>>> [sch.get(lp).thread_binding.thread_tag for lp in sch.get_loops(sch.get_block("B"))]
['blockIdx.x', 'threadIdx.x']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ..base import ScheduleRule, get_block_info, try_inline
from .decisions import sample_threads
from .utils import (
    bind_single_thread,
    bind_spatial,
    guarded,
    is_bound,
    max_threads,
    prepare,
    single_thread_function,
)


@dataclass(frozen=True)
class FallbackConfig:
    """The rule's one decision: threads per block (capped by the target's limit)."""

    threads: int = 256


class Fallback(ScheduleRule):
    """One thread per output element of each block's leading spatial loops (see the module docstring)."""

    def __init__(self, config: FallbackConfig | None = None):
        self.config = config or FallbackConfig()

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_gpu:
            return None
        func = prepare(func)
        threads = min(self.config.threads, max_threads(target))
        try:
            sch = Schedule(func)
            infos = try_inline(sch)
        except ScheduleError:
            infos = None
        if infos is None:
            return Schedule(single_thread_function(func))
        threads = sample_threads(sch, target, threads)  # a tuner's decision (decisions.py)
        for info in infos:
            sch = schedule_block(sch, info, threads)
        return sch


def schedule_block(sch: Schedule, info, threads: int) -> Schedule:
    """Bind one block (see the module docstring); returns the schedule that holds the result."""
    if is_bound(sch, info.block_rv):
        return sch
    sch, done = guarded(sch, _matrix_or_rows, info, threads)
    if not done:
        sch, done = guarded(sch, _bind_and_hoist, info, threads)
    if not done:
        sch, done = guarded(sch, bind_single_thread, info)
    if not done:
        raise ScheduleError(f"gpu.Fallback could not bind block {info.name!r}")
    return sch


def _matrix_or_rows(sch: Schedule, info, threads: int) -> None:
    """A block of a function no other rule took that is a matrix product or a row reduction by
    itself (attention's scores, its softmax's max and sum) gets that rule's schedule, as its
    own kernel; anything else raises ScheduleError (the caller then binds it generically)."""
    from .matmul import MatmulConfig, match_matmul, tile_matmul
    from .reduction import schedule_rows

    roles = match_matmul(sch, info)
    if roles is not None and all(it.extent != 1 for it in (*roles.i, *roles.j)):
        tile_matmul(sch, [info], roles, MatmulConfig())
        return
    kinds = info.dom_kind()
    if info.is_reduction() and kinds.rstrip("R") and set(kinds.rstrip("R")) == {"S"}:
        schedule_rows(sch, [info], len(kinds.rstrip("R")), threads)
        return
    raise ScheduleError(f"block {info.name!r} is neither a matrix product nor a row reduction")


def _bind_and_hoist(sch: Schedule, info, threads: int) -> None:
    bind_spatial(sch, info, threads)
    if info.reduction_block and sch.get(info.block_rv).init is not None:
        now = get_block_info(sch, info.block_rv)
        first = next((it for it in now.iters if it.kind == "R"), None)
        if first is not None:
            try:
                sch.decompose_reduction(info.block_rv, first.loop_rv)
            except ScheduleError:
                pass


__all__ = ["Fallback", "FallbackConfig", "schedule_block"]
