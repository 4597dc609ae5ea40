"""`gpu.LowBatchGEMV`: matrix products with a few rows (M of 2 to 16, or a symbolic M).

It takes what `Matmul` and `GEMV` take (one `C[b.., i, j] += A[.., i, k] * B[.., k, j]`
reduction and injective epilogues, see `matmul.match_matmul`) when the row axis `i` is short:
a static extent of 2 to 16 (a linear layer over a few tokens, a small decode batch) while the
column axis is not, or symbolic (a decode batch size only known at run time; in the default
order `Matmul` takes a symbolic row count first, as it may be long). The schedule is `GEMV`'s
with the rows kept inside the thread block, so a block reads its column of the weight once
from global memory into the cache and uses it for every row:

- the batch and column loops are fused into blockIdx.x: one thread block per output column;
- the rows run one after another inside the block (a serial loop; a symbolic row count,
  which could not size the block's local buffer, goes to the thread blocks as well);
- for each row the `threads` threads split `k` (interleaved, so consecutive threads read
  consecutive elements of the weight's row) and fold their sums with an allreduce; the
  results stay in a "local" buffer of the row count;
- the epilogue (bias, activation) runs in the same kernel, its rows spread over the threads.

>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((4, 256), name="A"); W = te.placeholder((512, 256), name="W")
>>> k = te.reduce_axis((0, 256), "k")
>>> C = te.compute((4, 512), lambda i, j: te.sum(A[i, k] * W[j, k], axis=k), name="C")
>>> sch = LowBatchGEMV().apply(te.create_prim_func([A, W, C]), Target("cuda"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("C"))]
['thread_binding', 'serial', 'thread_binding', 'serial']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...tir.expr import IntImm
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ..base import ScheduleRule, get_block_info
from ..base.analysis import is_output_block
from .decisions import sample_threads
from .matmul import _find
from .reduction import schedule_rows
from .utils import max_threads, prepare


@dataclass(frozen=True)
class LowBatchGEMVConfig:
    """The rule's decisions: the longest static row count it takes, and the threads that split
    `k` for each row (capped by the target)."""

    max_rows: int = 16
    threads: int = 128


def short_rows(roles, max_rows: int) -> bool:
    """Whether the row axis of matched matmul `roles` is symbolic or has 2 to `max_rows` rows while
    the column axis is longer (or symbolic)."""
    (i,), (j,) = roles.i, roles.j
    if i.extent is not None and not 2 <= i.extent <= max_rows:
        return False
    return j.extent is None or j.extent > max_rows


class LowBatchGEMV(ScheduleRule):
    """A few rows times a matrix: GEMV's thread block per column, the rows inside it (module docstring)."""

    def __init__(self, config: LowBatchGEMVConfig | None = None):
        self.config = config or LowBatchGEMVConfig()

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_gpu:
            return None
        func = prepare(func)
        sch = Schedule(func)
        try:
            found = _find(sch)
        except ScheduleError:
            return None
        if found is None:
            return None
        infos, roles = found
        if len(roles.i) != 1 or len(roles.j) != 1 or not short_rows(roles, self.config.max_rows):
            return None
        trial = sch.copy()
        try:
            threads = sample_threads(trial, target, min(self.config.threads, max_threads(target)))
            _schedule(trial, infos, roles, threads)
        except ScheduleError:
            return None
        return trial


def _schedule(sch: Schedule, infos: list, roles, threads: int) -> None:
    from ...tir.schedule.reduction import _combiner  # the check LowerCrossThreadReduction makes

    block = roles.info.block_rv
    _combiner(sch.get(block), f"reduce block {roles.info.name!r} across threads")
    batch = [it.loop_rv for it in roles.batch]
    (i,), (j,) = [it.loop_rv for it in roles.i], [it.loop_rv for it in roles.j]
    if not isinstance(sch.get(i).extent, IntImm):
        # a symbolic row count cannot size a local buffer: the rows go to the thread blocks too
        # (outermost: the fused block index then divides by constants only), as in GEMV
        sch.reorder(i, *batch, j, roles.k.loop_rv)
        now = [get_block_info(sch, info.block_rv) for info in infos]
        lead = sum(1 for it in now[0].iters if it.kind == "S")
        if any(len(info.iters) < lead for info in now[1:]):
            raise ScheduleError("an epilogue has fewer loops than the product")
        schedule_rows(sch, now, lead, threads)
        return
    sch.reorder(*batch, j, i, roles.k.loop_rv)
    last = infos[-1]
    if len(infos) == 1:
        bx = sch.fuse(*batch, j) if batch else j
        sch.bind(bx, "blockIdx.x")
    else:
        # the epilogue is the output: its loops in C's order (batch, then j outside i), bx over
        # all but the row loop; then the product moves under bx into a local buffer
        if any(not info.is_injective() for info in infos[1:]):
            raise ScheduleError("a LowBatchGEMV epilogue is not injective")
        out = get_block_info(sch, last.block_rv)
        loops = [it.loop_rv for it in out.iters]
        if len(loops) < 2:
            raise ScheduleError("the epilogue has no row loop")
        at = len(loops) - 2 if roles.i_first else len(loops) - 1
        row, others = loops[at], loops[:at] + loops[at + 1:]
        sch.reorder(*others, row)
        bx = sch.fuse(*others) if len(others) > 1 else others[0]
        sch.bind(bx, "blockIdx.x")
        _, tx = sch.split(row, [None, threads])  # the product's thread count: one launch shape
        sch.bind(tx, "threadIdx.x")
        for info in reversed(infos[:-1]):
            sch.compute_at(info.block_rv, bx)
        if not is_output_block(sch, block):
            sch.set_scope(block, 0, "local")
    now = get_block_info(sch, block)
    k = next(it.loop_rv for it in now.iters if it.kind == "R")
    ko, kt = sch.split(k, [None, threads])
    sch.reorder(kt, ko)
    sch.bind(kt, "threadIdx.x")


__all__ = ["LowBatchGEMV", "LowBatchGEMVConfig", "short_rows"]
