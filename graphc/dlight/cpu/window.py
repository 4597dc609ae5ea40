"""`cpu.Window`: sliding-window reductions (depthwise and grouped convolutions, max/avg pooling).

It applies to a function whose one reduction block has spatial then reduce loops
(`S+R+`), at least three spatial ones, the innermost spatial loop walking the output
contiguously, and a read whose last index combines that loop, with a unit step, and a
reduce loop (the window: `X[n, c, h*s + kh, w + kw]`; a strided row would gather, and
`cpu.Reduction` keeps those). `cpu.Conv2d` takes the convolutions it can tile over output
channels first; what is left here has too few channels per group for that (depthwise:
one), or is a pooling window. The schedule vectorizes along the output row, each vector
accumulating its window in place:

    for (n, c, h) in parallel:              # output rows
        for w_0 in W_out / V:               # V pixels of the row (a tail when V does not divide)
            out[n, c, h, w_0 tile] = init
            for (c_in,) kh, kw:             # the window, outside the vector
                for w_1 in vectorized(V):
                    out[n, c, h, w] = reduce(out[...], X[n, c, h*s + kh, w*s + kw] * W[...])

The padded input stays materialized (inlined, every window read would test the border);
it and the epilogue (bias, batch norm, ReLU, the average's division) get the Fallback
treatment: parallel, vectorized.

>>> from graphc import te, topi
>>> from graphc.target import Target
>>> x = te.placeholder((1, 32, 28, 28), name="x"); w = te.placeholder((32, 1, 3, 3), name="w")
>>> func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, padding=1, groups=32)])
>>> sch = Window().apply(func, Target("llvm -mcpu=x86-64 -mattr=+avx2,+avx512f"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("conv2d_update"))]
['parallel', 'serial', 'serial', 'serial', 'serial', 'vectorized']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...tir.analysis.block_access import affine_difference
from ...tir.analysis.var_use import used_vars
from ...tir.function import PrimFunc
from ...tir.functor import substitute
from ...tir.schedule import BlockRV, Schedule
from ..base import ScheduleRule, get_block_info, try_inline
from ..base.analysis import block_regions
from .fallback import guarded, schedule_block_generic
from .utils import (
    decompose_at_first_reduce,
    one_reduction,
    output_dtype,
    parallelize_outer,
    vector_lanes,
    write_contiguous,
    written_buffer,
)


class Window(ScheduleRule):
    """Depthwise/grouped convolutions and pooling (see the module docstring)."""

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        found = one_reduction(func, target)
        if found is None or not _is_window(found[0], found[2]):
            return None
        sch, infos, reduction = found
        name = reduction.name
        window = _window_buffers(sch, reduction)
        keep = {i.name for i in infos if not i.reduction_block and written_buffer(sch, i.block_rv) in window}
        infos = try_inline(sch, keep=keep)
        if not infos or any(not i.is_injective() for i in infos if i.name != name):
            return None
        block = sch.get_block(name)
        if not _is_window(sch, get_block_info(sch, block)):
            return None
        trial = sch.copy()
        try:
            schedule_window(trial, trial.get_block(name), target)
        except ScheduleError:
            return None
        sch = trial
        for info in infos:
            if info.name != name:  # the padding and the epilogue: parallel, vectorized
                rv = sch.get_block(info.name)
                sch = guarded(sch, schedule_block_generic, get_block_info(sch, rv), target)
        return sch


def _is_window(sch: Schedule, info) -> bool:
    kinds = info.dom_kind()
    first_r = kinds.find("R")
    if first_r < 3 or "S" in kinds[first_r:] or not info.is_reduction():
        return False
    if any(it.extent is None for it in info.iters[first_r:]):
        return False
    inner = info.iters[first_r - 1]
    if not write_contiguous(sch, info, inner.var):
        return False
    return bool(_window_buffers(sch, info))


def _window_buffers(sch: Schedule, info) -> set:
    """The buffers the block reads at an index combining its innermost spatial loop's iter
    with a reduce iter (the window), by block iter vars."""
    block = sch.get(info.block_rv)
    spatial = [iv.var for iv in block.iter_vars if iv.iter_type.name == "DATA_PAR"]
    reduce = {iv.var for iv in block.iter_vars if iv.iter_type.name == "COMM_REDUCE"}
    if not spatial or not reduce:
        return set()
    last = spatial[-1]
    reads, writes = block_regions(block)
    out = {w.buffer for w in writes}
    found = set()
    for region in reads:
        if region.buffer in out or not region.region:
            continue
        index = region.region[-1].min  # the row: a unit step along it (strided rows gather)
        names = set(used_vars(index))
        step = affine_difference(substitute(index, {last: last + 1}), index)
        if last in names and names & reduce and step == 1:
            found.add(region.buffer)
    return found


def row_vector(extent: int, lanes: int) -> tuple[int, bool] | None:
    """(vector length, whether a predicated tail is needed) for an output row of `extent`.

    A power of two from `lanes` down to 4 that divides the row, else the whole row when it
    is shorter than `lanes`, else `lanes` with a tail. (A predicated tail costs more than
    narrow vectors: 28 pixels as 16 + 12 masked took 0.145 ms for 192 depthwise channels,
    as 7 x 4 0.083 ms.)

    >>> row_vector(56, 16), row_vector(112, 16), row_vector(7, 16), row_vector(100, 16), row_vector(3, 16)
    ((8, False), (16, False), (7, False), (4, False), None)
    """
    f = lanes
    while f >= 4:
        if extent % f == 0:
            return f, False
        f //= 2
    if extent < 4:
        return None
    if extent <= lanes:
        return extent, False
    return lanes, True


def schedule_window(sch: Schedule, block: BlockRV, target) -> None:
    """Vectorize the output row of window-reduction `block`, its window loops outside the
    vector, the rows in parallel; the init hoisted before the window loops."""
    info = get_block_info(sch, block)
    lanes = vector_lanes(target, output_dtype(sch, info))
    spatial = [it for it in info.iters if it.kind == "S"]
    reduce_loops = [it.loop_rv for it in info.iters if it.kind == "R"]
    inner = spatial[-1]
    choice = row_vector(inner.extent, lanes) if inner.extent is not None and lanes > 1 else None
    if choice is None:
        raise ScheduleError("the output row is too short to vectorize")
    factor, _ = choice
    vec = inner.loop_rv if factor == inner.extent else sch.split(inner.loop_rv, factors=[None, factor])[1]
    sch.reorder(*reduce_loops, vec)
    sch.vectorize(vec)
    now = get_block_info(sch, block)
    rows = [it for it in now.iters if it.kind == "S"][: len(spatial) - 1]
    parallelize_outer(sch, rows)
    decompose_at_first_reduce(sch, get_block_info(sch, block))


__all__ = ["Window", "row_vector", "schedule_window"]
