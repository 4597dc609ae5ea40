"""`gpu.Reduction` and `gpu.GeneralReduction`: row reductions reduced across a block's threads.

`Reduction` takes a function whose blocks (after inlining) are one reduction whose loops are
spatial then reduce (`S*R+`: a row sum, max, mean's sum, a GEMV-like dot per output) and
injective epilogue blocks after it. `GeneralReduction` takes a chain of such reductions with
injective blocks between and after them that all share the leading spatial loops (softmax,
layer norm, RMS norm). Both schedule the same way, in one kernel:

- the output block's leading spatial loops (as many as the reductions keep) are fused and
  bound to blockIdx.x: one thread block per row;
- every other block is moved under that loop (`compute_at`, last to first);
- each reduction fuses its reduce loops and splits them by the thread count, the inner part
  bound to threadIdx.x, so the threads reduce a row together (LowerCrossThreadReduction's
  allreduce); its result, when not a function output, lives in a "local" buffer every thread
  of the row reads;
- each injective block's remaining loops are fused, split and bound to threadIdx.x.

An intermediate injective block that cannot be inlined (its threads would hand values to
other threads through global memory) makes both rules decline, as do blocks whose leading
spatial loops differ; `Fallback` then schedules the function.

>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((64, 300), name="A"); k = te.reduce_axis((0, 300), "k")
>>> S = te.compute((64,), lambda i: te.sum(A[i, k], axis=k), name="S")
>>> sch = Reduction().apply(te.create_prim_func([A, S]), Target("opencl"), False)
>>> [str(sch.get(lp).kind.value) for lp in sch.get_loops(sch.get_block("S"))]
['thread_binding', 'thread_binding', 'serial']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ..base import ScheduleRule, get_block_info, try_inline
from ..base.analysis import BlockInfo, is_output_block, normalize_prim_func
from .decisions import sample_threads
from .utils import max_threads, prepare, thread_extent

_ROW = re.compile(r"S*R+")


@dataclass(frozen=True)
class ReductionConfig:
    """The rules' one decision: the threads that reduce one row (capped by the target)."""

    threads: int = 256


def _leading_s(info: BlockInfo) -> int:
    kinds = info.dom_kind()
    return len(kinds) - len(kinds.lstrip("S"))


def _plan(sch: Schedule) -> tuple[list, int] | None:
    """(block infos, the number of shared leading spatial loops) when the function is a chain of
    `S*R+` reductions and injective blocks sharing those loops; else None."""
    infos = try_inline(sch)
    if not infos:
        return None
    for info in infos:  # recompute intermediates rather than pass them between threads
        if info.is_injective() and not is_output_block(sch, info.block_rv):
            try:
                sch.compute_inline(info.block_rv)
            except ScheduleError:
                return None
    infos = normalize_prim_func(sch)
    if not infos:
        return None
    reductions = [i for i in infos if i.reduction_block]
    if not reductions or any(not (i.is_injective() or (i.is_reduction() and _ROW.fullmatch(i.dom_kind())))
                             for i in infos):
        return None
    # the loops every block shares (same extents, outermost first): one thread block each;
    # a reduction's spatial loops past them must be unit loops (layer norm's kept dims)
    lead = min(_leading_s(i) for i in reductions)
    for info in infos:
        lead = min(lead, len(info.iters))
        while lead and [str(d) for d in info.dom()[:lead]] != [str(d) for d in reductions[0].dom()[:lead]]:
            lead -= 1
    for info in reductions:
        if any(it.extent != 1 for it in info.iters[lead:_leading_s(info)]):
            return None
    for info in infos[:-1]:
        if info.is_injective() and len(info.iters) == lead:
            return None
    if not is_output_block(sch, infos[-1].block_rv):
        return None
    return infos, lead


def _bind_threads(sch: Schedule, loops: list, threads: int, reduce: bool) -> None:
    """Fuse `loops` and bind an inner part to threadIdx.x: a reduction's threads take
    interleaved elements (the thread loop moves outside), an injective block's threads take
    consecutive ones. A block with no loops left runs in every thread of the row (the same
    value written by each, as for an epilogue that reads the allreduce's result)."""
    if not loops:
        return
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = sch.get(fused).extent
    n = thread_extent(extent.value if hasattr(extent, "value") else None, threads)
    outer, inner = sch.split(fused, [None, n])
    if reduce:
        sch.reorder(inner, outer)
    sch.bind(inner, "threadIdx.x")


def schedule_rows(sch: Schedule, infos: list, lead: int, threads: int) -> None:
    """The schedule the module docstring describes, on `sch` in place. Raises ScheduleError
    when a reduction's update is not `B = B <op> value` (a masked `if` around it, say), which
    the threads' allreduce could not fold."""
    from ...tir.schedule.reduction import _combiner  # the check LowerCrossThreadReduction makes

    for info in infos:
        if info.reduction_block:
            _combiner(sch.get(info.block_rv), f"reduce block {info.name!r} across threads")
    last = infos[-1]
    loops = [it.loop_rv for it in last.iters]
    if lead:
        bx = sch.fuse(*loops[:lead]) if lead > 1 else loops[0]
    else:
        bx = sch.add_unit_loop(loops[0] if loops else last.block_rv)
    sch.bind(bx, "blockIdx.x")
    rest = [it.loop_rv for it in get_block_info(sch, last.block_rv).iters[1:]]
    _bind_threads(sch, rest, threads, last.reduction_block)
    for info in reversed(infos[:-1]):
        sch.compute_at(info.block_rv, bx)
        inner = [it.loop_rv for it in get_block_info(sch, info.block_rv).iters[1:]]
        _bind_threads(sch, inner, threads, info.reduction_block)
        if info.reduction_block and not is_output_block(sch, info.block_rv):
            sch.set_scope(info.block_rv, 0, "local")


class _RowRule(ScheduleRule):
    def __init__(self, config: ReductionConfig | None = None):
        self.config = config or ReductionConfig()

    def _accepts(self, infos: list) -> bool:
        raise NotImplementedError

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_gpu:
            return None
        func = prepare(func)
        sch = Schedule(func)
        try:
            plan = _plan(sch)
        except ScheduleError:
            return None
        if plan is None or not self._accepts(plan[0]):
            return None
        infos, lead = plan
        try:
            threads = sample_threads(sch, target, min(self.config.threads, max_threads(target)))
            schedule_rows(sch, infos, lead, threads)
        except ScheduleError:
            return None
        return sch


class Reduction(_RowRule):
    """One `S*R+` reduction and its injective epilogue, a thread block per row (module docstring)."""

    def _accepts(self, infos: list) -> bool:
        return sum(1 for i in infos if i.reduction_block) == 1


class GeneralReduction(_RowRule):
    """Chains of row reductions and elementwise blocks (softmax, norms) in one kernel (module docstring)."""

    def _accepts(self, infos: list) -> bool:
        return sum(1 for i in infos if i.reduction_block) >= 2


__all__ = ["GeneralReduction", "Reduction", "ReductionConfig", "schedule_rows"]
