"""GPU scheduling helpers shared by the rules: thread counts from the target, binding a block's
spatial loops to blockIdx.x/threadIdx.x, and the single-thread schedule that always applies.

>>> from graphc.target import Target
>>> max_threads(Target("cuda")), max_threads(Target("opencl"))
(1024, 256)
>>> thread_extent(1000, 256), thread_extent(40, 256), thread_extent(None, 256)
(256, 64, 256)
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...tir.expr import IntImm, const
from ...tir.schedule import LoopRV, Schedule
from ...tir.stmt import BlockRealize, For, ForKind
from ..base.analysis import BlockInfo, get_block_info


def prepare(func):
    """`func` as every GPU rule schedules it: 16-bit sums accumulating in float32
    (`accumulate.py`), then 32-bit indices where they are exact (`narrow.py`)."""
    from .accumulate import promote_accumulators
    from .narrow import narrow_indices

    return narrow_indices(promote_accumulators(func))


def max_threads(target) -> int:
    """The most threads one block may run on `target`."""
    return int(target.max_num_threads)


def warp_size(target) -> int:
    """The SIMD width threads run in (32 on CUDA; 1 where the target does not say)."""
    return max(1, int(target.thread_warp_size))


def thread_extent(extent: int | None, limit: int) -> int:
    """The threads to give a loop of `extent` iterations: `limit`, or the power of two at least
    `extent` (and at least 32, a warp) when the loop is shorter."""
    if extent is None or extent >= limit:
        return limit
    n = 32
    while n < extent:
        n *= 2
    return min(n, limit)


def guarded(sch: Schedule, step, *args) -> tuple[Schedule, bool]:
    """Run `step(sch, *args)` on a copy: (the copy, True), or (sch, False) when a primitive refused."""
    trial = sch.copy()
    try:
        step(trial, *args)
    except ScheduleError:
        return sch, False
    return trial, True


def is_bound(sch: Schedule, block_rv) -> bool:
    """Whether a loop around the block is already bound to a thread axis."""
    return any(sch.get(lp).kind == ForKind.THREAD_BINDING for lp in sch.get_loops(block_rv))


def leading_spatial(info: BlockInfo) -> list:
    out = []
    for it in info.iters:
        if it.kind != "S":
            break
        out.append(it)
    return out


def bind_spatial(sch: Schedule, info: BlockInfo, threads: int) -> tuple[LoopRV, LoopRV]:
    """Fuse the block's leading spatial loops, split by the threads and bind blockIdx.x /
    threadIdx.x (the other loops run inside each thread). Returns (bx, tx)."""
    spatial = leading_spatial(info)
    if not spatial:
        return bind_single_thread(sch, info)
    loops = [it.loop_rv for it in spatial]
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = sch.get(fused).extent
    n = thread_extent(extent.value if hasattr(extent, "value") else None, threads)
    bx, tx = sch.split(fused, [None, n])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return bx, tx


def bind_single_thread(sch: Schedule, info: BlockInfo) -> tuple[LoopRV, LoopRV]:
    """Run a block's whole loop nest in one thread of one block (two unit loops bound above it)."""
    info = get_block_info(sch, info.block_rv)
    anchor = info.iters[0].loop_rv if info.iters else info.block_rv
    tx = sch.add_unit_loop(anchor)
    bx = sch.add_unit_loop(tx)
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return bx, tx


def single_thread_function(func):
    """`func` with its whole body (inside the root block, when there is one) in one thread: the
    schedule for what no primitive understands (nested block scopes, hand-written loops)."""
    from ...tir.expr import Var
    from ...tir.stmt import IterType, IterVar

    def wrap(body):
        for axis in ("threadIdx.x", "blockIdx.x"):
            thread = IterVar(None, Var(axis, "int32"), IterType.THREAD_INDEX, axis)
            body = For(Var(axis.replace(".", "_"), "int32"), const(0), const(1), ForKind.THREAD_BINDING,
                       body, thread)
        return body

    body = func.body
    if isinstance(body, BlockRealize) and body.block.name_hint == "root":
        block = _replace_body(body.block, wrap(body.block.body))
        return func.with_body(BlockRealize(body.iter_values, body.predicate, block))
    return func.with_body(wrap(body))


def _replace_body(block, body):
    import dataclasses

    return dataclasses.replace(block, body=body)


def loops_below(sch: Schedule, block, loop) -> list:
    """The loops around `block` inside `loop`."""
    loops = sch.get_loops(block)
    var = sch.get(loop).loop_var
    return loops[next(n for n, lp in enumerate(loops) if sch.get(lp).loop_var is var) + 1:]


def is_unit_loop(sch: Schedule, loop) -> bool:
    """Whether `loop` has the static extent 1."""
    extent = sch.get(loop).extent
    return isinstance(extent, IntImm) and extent.value == 1


def block_exists(sch: Schedule, name: str) -> bool:
    """Whether the schedule has a block named `name`."""
    try:
        sch.get_block(name)
    except ScheduleError:
        return False
    return True


__all__ = [
    "bind_single_thread",
    "bind_spatial",
    "block_exists",
    "guarded",
    "is_bound",
    "is_unit_loop",
    "leading_spatial",
    "loops_below",
    "max_threads",
    "prepare",
    "single_thread_function",
    "thread_extent",
    "warp_size",
]
