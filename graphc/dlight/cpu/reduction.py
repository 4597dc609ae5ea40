"""`cpu.Reduction`: parallel rows and vectorized accumulation for functions built around reductions.

It applies when, after inlining injective producers, the function has a reduction block
whose loops read spatial then reduce then spatial (`S...R...S*`: a row sum "SR", a sum
over the middle axis "SRS", softmax's max and sum), every other block being injective.
Each reduction block gets, in order of preference:

- a reduction along the input's contiguous axis (`SR`, a row sum) at least two vectors long:
  the reduce loop split by the vector lanes and factored (`rfactor`) into a vector of partial
  sums per row, `rows (parallel), k_0, k_1 (vectorized)`, the partials folded under the same
  parallel row loop; a row that is not whole vectors (softmax over 197 tokens) is first cut
  (`loop_partition`) into its whole vectors, factored so, and a scalar tail folded in after;
- a trailing spatial loop (`SRS`, the reduction is not over the innermost axis): that loop
  split by the lanes (times up to `vector_unroll` registers) and vectorized, so each
  reduce step updates that many accumulators;
- otherwise (`SR` with a column sum's or a matmul's layout, or a reduce extent that does
  not split): the innermost outer spatial loop split the same way and moved inside the
  reduce loops (`so, k, si`), so its elements accumulate side by side in vectors;

and in every case the outer spatial loops fused into one parallel loop when the block
does enough work, and its init hoisted out of the reduce loops. Injective blocks
(softmax's normalisation) get the Fallback treatment, except that rows that are not whole
vectors are cut the same way (whole vectors, then the tail, each vectorized: no mask on every
vector). The rule declines (None) when no
block fits. Its choices are sampling instructions (today's as the decisions): rfactor or not
where it fits, the vector unroll, and how far the parallel loop reaches (or serial).

>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((256, 64), name="A"); k = te.reduce_axis((0, 64), "k")
>>> S = te.compute((256,), lambda i: te.sum(A[i, k], axis=k), name="S")
>>> sch = Reduction().apply(te.create_prim_func([A, S]), Target("llvm -mcpu=x86-64 -mattr=+avx2"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("S_rf_update"))]
['parallel', 'serial', 'vectorized']
>>> C = te.compute((64,), lambda j: te.sum(A[k, j], axis=k), name="C")  # a column sum
>>> sch = Reduction().apply(te.create_prim_func([A, C]), Target("llvm -mcpu=x86-64 -mattr=+avx2"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("C_update"))]
['serial', 'serial', 'vectorized']
"""

from __future__ import annotations

import re

from ...errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ..base import BlockInfo, ScheduleRule, get_block_info, try_inline
from ..base.analysis import block_realize, block_regions, uses_var
from .fallback import guarded, schedule_block_generic
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

_PATTERN = re.compile(r"S*R+S*")


def fits(info: BlockInfo) -> bool:
    """Whether a block is a reduction whose loops read spatial, reduce, spatial (`S*R+S*`)."""
    return info.is_reduction() and _PATTERN.fullmatch(info.dom_kind()) is not None


class Reduction(ScheduleRule):
    """Row/column reductions on the CPU: parallel outer rows, vectorized accumulators.

    `vector_unroll`: how many registers of accumulators (or of an injective block's
    elements) one vectorized loop covers, when the extent allows; the rfactor path keeps
    one register of partial sums per row.
    """

    def __init__(self, vector_unroll: int = VECTOR_UNROLL):
        self.vector_unroll = vector_unroll

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_cpu:
            return None
        sch = Schedule(func)
        infos = try_inline(sch)
        if not infos or not any(fits(i) for i in infos):
            return None
        if any(not (i.is_injective() or fits(i)) for i in infos):
            return None
        for info in infos:
            if not fits(info):
                step = _schedule_row_with_tail if _row_tail(sch, info, target) else schedule_block_generic
                sch = guarded(sch, step, info, target, self.vector_unroll)
                continue
            lanes = vector_lanes(target, output_dtype(sch, info))
            if _rfactor_fits(sch, info, lanes) and sch.sample_categorical([True, False], decision=0):
                factored = guarded(sch, _rfactor_vector, info, lanes)
                if factored is not sch:
                    sch = factored
                    continue
            sch = guarded(sch, schedule_reduction_block, info, target, self.vector_unroll)
        return sch


def schedule_reduction_block(sch: Schedule, info: BlockInfo, target, unroll: int = 1) -> None:
    """Schedule one `S*R+S*` reduction block without rfactor (see the module docstring);
    the vectorized loop covers up to `unroll` registers of accumulators."""
    lanes = vector_lanes(target, output_dtype(sch, info))
    kinds = info.dom_kind()
    first_r = kinds.index("R")
    last_r = kinds.rindex("R")
    outer = list(info.iters[:first_r])
    if last_r < len(kinds) - 1:  # S R S: vectorize the trailing spatial loop
        inner = info.iters[-1]
        if write_contiguous(sch, info, inner.var):
            unroll = sample_vector_unroll(sch, unroll) if lanes > 1 else unroll
            vec = split_for_vector(sch, inner.loop_rv, inner.extent, lanes, unroll)
            if vec is not None:
                sch.vectorize(vec)
    elif outer and _rows_side_by_side(sch, info, outer[-1], lanes):
        outer = _interleave_rows(sch, info, outer[-1], lanes, unroll)
    info_now = get_block_info(sch, info.block_rv)
    min_extent = sample_parallel_extent(sch, enough_work(info_now))
    if min_extent is not None:
        parallelize_outer(sch, [it for it in info_now.iters if it.var in {o.var for o in outer}], min_extent)
    decompose_at_first_reduce(sch, info_now)


def _row_tail(sch: Schedule, info: BlockInfo, target) -> int:
    """How many elements of the injective block's contiguous rows are left over past whole vectors
    (softmax's normalisation over rows of 197: 5), or 0 when they are whole vectors, short or symbolic."""
    lanes = vector_lanes(target, output_dtype(sch, info))
    if lanes <= 1 or not info.iters or info.iters[-1].kind != "S":
        return 0
    extent = info.iters[-1].extent
    if extent is None or extent < 2 * lanes or not write_contiguous(sch, info, info.iters[-1].var):
        return 0
    return extent % lanes


def _schedule_row_with_tail(sch: Schedule, info: BlockInfo, target, unroll: int = 1) -> None:
    """An injective block whose rows are not whole vectors: each row cut (`loop_partition`) into
    whole vectors, vectorized, and its tail, vectorized on its own, rows in parallel. (One loop
    with a predicated last vector masks every vector: `exp(x - max)` over 2364 rows of 197 took
    0.48 ms so, 0.11 ms partitioned, one thread.)"""
    lanes = vector_lanes(target, output_dtype(sch, info))
    inner = info.iters[-1]
    main = inner.extent - inner.extent % lanes
    head, tail = sch.loop_partition(inner.loop_rv, [main, None])
    unroll = sample_vector_unroll(sch, unroll)
    vec = split_for_vector(sch, head, main, lanes, unroll)
    sch.vectorize(vec)
    sch.vectorize(tail)
    rows = [it for it in info.iters[:-1] if it.kind == "S"]
    min_extent = sample_parallel_extent(sch, enough_work(info))
    if min_extent is not None and rows and len(rows) == len(info.iters) - 1:
        parallelize_outer(sch, rows, min_extent)


def _rows_side_by_side(sch: Schedule, info: BlockInfo, row, lanes: int) -> bool:
    """Whether the last outer spatial loop is long enough to give `lanes` accumulators."""
    if lanes <= 1 or not write_contiguous(sch, info, row.var):
        return False
    if row.extent is None:
        return True
    return row.extent % lanes == 0 or row.extent >= 4 * lanes


def _interleave_rows(sch: Schedule, info: BlockInfo, row, lanes: int, unroll: int) -> list:
    """Split `row` by `lanes` (times up to `unroll`), move the inner part inside the reduce
    loops and vectorize it. Returns the outer spatial iter infos (the loops that may run in parallel).
    """
    unroll = sample_vector_unroll(sch, unroll)
    vec = split_for_vector(sch, row.loop_rv, row.extent, lanes, unroll)
    if vec is None:
        return [it for it in info.iters if it.kind == "S"]
    now = get_block_info(sch, info.block_rv)
    reduce_loops = [it.loop_rv for it in now.iters if it.kind == "R"]
    order = [it.loop_rv for it in now.iters if it.var is not vec.var and it.kind == "S"]
    sch.reorder(*order, *reduce_loops, vec)
    sch.vectorize(vec)
    now = get_block_info(sch, info.block_rv)
    return [it for it in now.iters if it.kind == "S" and it.var is not vec.var]


def _reduces_innermost_axis(sch: Schedule, info: BlockInfo) -> bool:
    """Whether every input the reduction walks is indexed by a reduce iter in its last axis
    (a row sum, a GEMV, layer norm's variance, which also reads the row's mean; not a
    matmul, whose right operand runs along the output's columns)."""
    realize = block_realize(sch, info.block_rv)
    reads, writes = block_regions(realize.block)
    outs = {w.buffer for w in writes}
    reduce_vars = [iv.var for iv in realize.block.iter_vars if iv.iter_type.name == "COMM_REDUCE"]

    def uses_reduce(expr) -> bool:
        return any(uses_var(expr, v) for v in reduce_vars)

    walked = [r for r in reads if r.buffer not in outs and any(uses_reduce(x.min) for x in r.region)]
    return bool(walked) and all(uses_reduce(r.region[-1].min) for r in walked)


def _rfactor_fits(sch: Schedule, info: BlockInfo, lanes: int) -> bool:
    """Whether to factor the innermost reduce loop into `lanes` partial sums: the loops are
    `S*R+`, the reduction runs along the input's contiguous axis, and its extent splits into
    whole vectors."""
    if lanes <= 1 or not info.dom_kind().endswith("R"):
        return False
    extent = info.iters[-1].extent
    if extent is None or extent < 2 * lanes:
        return False
    return _reduces_innermost_axis(sch, info)


def _rfactor_vector(sch: Schedule, info: BlockInfo, lanes: int) -> None:
    """Split the innermost reduce loop by `lanes` and factor it into a vector of partial sums.

    The rf block runs `rows (parallel), k_0, k_1 (vectorized)`; the block folding the
    partial sums moves under the same parallel row loop when it can. A reduce extent that is
    not whole vectors is first cut (`loop_partition`) into whole vectors, factored so, and a
    scalar tail of fewer than `lanes` elements that folds in after the partial sums.
    """
    inner = info.iters[-1]
    outer_spatial = [it for it in info.iters if it.kind == "S"]
    block, tail = info.block_rv, None
    loop = inner.loop_rv
    if inner.extent % lanes:
        part = f"{sch.get(block).name_hint}_{sch.get(loop).loop_var.name}"  # loop_partition's names
        loop, _ = sch.loop_partition(loop, [inner.extent - inner.extent % lanes, None])
        block, tail = sch.get_block(f"{part}0"), sch.get_block(f"{part}1")
    _, ri = sch.split(loop, factors=[None, lanes])
    rf = sch.rfactor(ri, len(outer_spatial))
    if tail is not None:
        _rfactor_with_tail(sch, rf, block)
        return
    rf_info = get_block_info(sch, rf)
    order = [it.loop_rv for it in rf_info.iters if it.kind == "S" and it.var is not ri.var]
    order += [it.loop_rv for it in rf_info.iters if it.kind == "R"]
    sch.reorder(*order, ri)
    sch.vectorize(ri)
    rf_info = get_block_info(sch, rf)
    par = None
    min_extent = sample_parallel_extent(sch, enough_work(rf_info)) if outer_spatial else None
    if min_extent is not None:
        par = parallelize_outer(sch, leading_spatial(rf_info, stop_var=ri.var), min_extent)
    if par is not None:
        try:
            sch.reverse_compute_at(block, par)
        except ScheduleError:
            pass
    decompose_at_first_reduce(sch, get_block_info(sch, rf))
    decompose_at_first_reduce(sch, get_block_info(sch, block))


def _rfactor_with_tail(sch: Schedule, rf, fold) -> None:
    """With a tail, the fold of the partial sums and the tail share their row loops: the rf nest
    moves under the innermost of them (a row's partial sums, then its fold and its tail), its
    vector of partial sums innermost, and the rows run in parallel. The fold keeps its init:
    decomposed, it would read the result before the tail writes it, a write-after-read that
    would stop the next reduction's rfactor."""
    rows = leading_spatial(get_block_info(sch, fold))
    rf_info = get_block_info(sch, rf)
    min_extent = sample_parallel_extent(sch, enough_work(rf_info)) if rows else None
    if not rows:
        raise ScheduleError("a reduction without row loops has no tail to fold in")
    sch.compute_at(rf, rows[-1].loop_rv)
    row_vars = {it.var for it in rows}
    rf_info = get_block_info(sch, rf)
    own = [it for it in rf_info.iters if it.var not in row_vars]
    (vec,) = [it.loop_rv for it in own if it.kind == "S"]
    sch.reorder(*[it.loop_rv for it in own if it.kind == "R"], vec)
    sch.vectorize(vec)
    if min_extent is not None:
        parallelize_outer(sch, rows, min_extent)
    decompose_at_first_reduce(sch, get_block_info(sch, rf))


__all__ = ["Reduction", "fits", "schedule_reduction_block"]
