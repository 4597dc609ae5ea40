"""`cpu.Fallback`: the generic CPU schedule that applies to every PrimFunc.

It inlines injective producers into their consumers, then, block by block: splits the
innermost loop by a multiple of the vector lanes (`vector_unroll` registers, 4 by
default: 64 float32 on AVX-512) and vectorizes it when that loop is spatial and walks the
output contiguously; fuses the outer spatial loops into one parallel loop when the
block does enough work (small blocks stay serial); and hoists a reduction's init out of
its reduce loops. A step the IR does not allow is skipped, never fatal. The vector unroll and
how far the parallel loop reaches (or serial) are sampling instructions (`sample_vector_unroll`,
`sample_parallel_extent`) with these choices as their decisions.

>>> import numpy as np, graphc
>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((256, 256), name="A")
>>> B = te.compute((256, 256), lambda i, j: A[i, j] * 2.0, name="B")
>>> sch = Fallback().apply(te.create_prim_func([A, B]), Target("llvm -mcpu=x86-64 -mattr=+avx2"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("B"))]
['parallel', 'serial', 'vectorized']
>>> a = np.random.rand(256, 256).astype("float32"); b = np.empty_like(a)
>>> graphc.build(sch.mod)["main"](a, b); np.allclose(b, 2 * a)
True
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ..base import ScheduleRule, get_block_info, try_inline
from .utils import (
    VECTOR_UNROLL,
    decompose_at_first_reduce,
    enough_work,
    leading_spatial,
    output_dtype,
    parallelize_outer,
    sample_parallel_extent,
    sample_vector_unroll,
    split_for_vector,
    vector_lanes,
    write_contiguous,
)


class Fallback(ScheduleRule):
    """Inline, then parallel outer spatial loops and a vectorized inner loop, per block.

    `vector_unroll`: the vectorized loop covers up to this many vector registers per step
    (`lanes * vector_unroll` elements, when that divides the loop).
    """

    def __init__(self, vector_unroll: int = VECTOR_UNROLL):
        self.vector_unroll = vector_unroll

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_cpu:
            return None
        sch = Schedule(func)
        infos = try_inline(sch)
        if infos is None:  # nested block scopes: nothing here understands them
            return sch
        for info in infos:
            sch = guarded(sch, schedule_block_generic, info, target, self.vector_unroll)
        return sch


def guarded(sch: Schedule, step, *args) -> Schedule:
    """Run `step(sch, *args)` on a copy; keep the copy unless a primitive refused.

    The categorical decisions the refused step took stay in the schedule's trace, so the i-th
    sampling instruction is the same one however a replay of the decisions goes (a step that
    samples uses `sample_categorical` only, which needs no handle)."""
    trial = sch.copy()
    try:
        step(trial, *args)
    except ScheduleError:
        for inst in trial.trace.insts[len(sch.trace.insts) :]:
            if inst.is_sample:
                sch.trace.append(inst.name, inst.args, inst.kwargs, inst.outputs, inst.decision, inst.info)
        return sch
    return trial


def schedule_block_generic(sch: Schedule, info, target, unroll: int = 1) -> None:
    """Vectorize the innermost spatial loop, parallelize the outer spatial ones, hoist the init."""
    if not info.iters:
        return
    lanes = vector_lanes(target, output_dtype(sch, info))
    vectorize_innermost(sch, info, lanes, unroll)
    info = get_block_info(sch, info.block_rv)
    min_extent = sample_parallel_extent(sch, enough_work(info))
    if min_extent is not None:
        vec = info.iters[-1].var if sch.get(info.iters[-1].loop_rv).kind.value == "vectorized" else None
        parallelize_outer(sch, leading_spatial(info, stop_var=vec), min_extent)
    if info.reduction_block:
        decompose_at_first_reduce(sch, info)


def vectorize_innermost(sch: Schedule, info, lanes: int, unroll: int = 1):
    """Split the innermost loop by `lanes` and vectorize the inner part, when it is a spatial
    loop contiguous in the output. Returns the vectorized loop or None."""
    inner = info.iters[-1]
    if inner.kind != "S" or not write_contiguous(sch, info, inner.var):
        return None
    if lanes > 1:
        unroll = sample_vector_unroll(sch, unroll)
    vec = split_for_vector(sch, inner.loop_rv, inner.extent, lanes, unroll)
    if vec is None:
        return None
    sch.vectorize(vec)
    return vec


__all__ = ["Fallback", "guarded", "schedule_block_generic", "vectorize_innermost"]
