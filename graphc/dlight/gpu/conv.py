"""`gpu.Conv2d`: convolutions as implicit GEMMs on register tiles of output channels by pixels.

It takes a function whose one reduction block (after inlining: the padded input is folded into
its reads) is convolution-like, followed by injective epilogue blocks (bias, batch norm,
residual add, ReLU):

- its loops are spatial then reduce (`S+R+`), each binding one block iter directly, and the
  output is indexed by the spatial iters, each once;
- one operand, the weight, is indexed by iters only, and uses exactly one spatial iter: the
  output channel `o`; the other spatial iters (batch, output rows and columns: the pixels)
  are those only the other operand, the input, uses, in whatever form (strides, dilation,
  padding, a grouped or depthwise convolution's channel offset).

This is the GEMM `out[o, p] += W[o, r] * im2col(X)[r, p]` with `r` the reduce iters, without
building im2col: per thread block,

- the output channels split into `(blocks, threads, tile_o)`, the output rows into
  `(blocks, threads, tile_h)` and the output columns into `(blocks, threads)` (`pixel_threads`:
  up to `threads_p` pixel threads, the columns' a divisor of the width where one fits; the
  channel threads take the rest of `threads_o * threads_p`); the block loops and the batch
  are fused into blockIdx.x (symbolic extents outermost); threadIdx.y runs over channels and
  threadIdx.x over pixels (rows and columns fused), so neighbouring threads read neighbouring
  input pixels and share (broadcast) the weight they read;
- each thread accumulates a `tile_o x tile_h` register tile ("local") over all reduce iters
  (input channels, kernel rows and columns, serial), reading both operands from global memory
  through the caches: every loaded weight is used `tile_h` times, every input value `tile_o`
  times;
- the epilogue is folded into the write-back of the register tile (each thread writes its own
  tile); an epilogue that does not fold runs after it in the same kernel.

A depthwise convolution (the weight's channel also indexes the input) matches too: its
reduce iters are the kernel's rows and columns only. A block `match_matmul` takes (a 1x1
convolution written as a matrix product, a linear layer) is left to the matrix rules.

>>> from graphc import te, topi
>>> from graphc.target import Target
>>> x = te.placeholder((1, 16, 14, 14), name="x"); w = te.placeholder((32, 16, 3, 3), name="w")
>>> func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, padding=1)])
>>> sch = Conv2d().apply(func, Target("cuda"), False)
>>> [sch.get(lp).thread_binding.thread_tag for lp in sch.get_loops(sch.get_block("conv2d_update"))[:3]]
['blockIdx.x', 'threadIdx.y', 'threadIdx.x']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...tir.analysis.var_use import uses_var
from ...tir.expr import IntImm, Var
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ...tir.stmt import IterType
from ..base import ScheduleRule, get_block_info, try_inline
from ..base.analysis import block_realize
from .matmul import match_matmul
from .utils import max_threads, prepare


@dataclass(frozen=True)
class ConvConfig:
    """Threads per block (channels x pixels, at most) and the register tile of one thread
    (output channels x output rows)."""

    threads_o: int = 8
    threads_p: int = 32
    tile_o: int = 4
    tile_h: int = 2


@dataclass(frozen=True)
class _ConvRoles:
    info: object
    o: object  # loop info of the output channel
    pixels: list  # loop infos of the spatial iters only the input uses (batch, rows, columns)
    reduce: list  # loop infos of the reduce iters


def match_conv(sch: Schedule, info) -> _ConvRoles | None:
    """The convolution roles of a block (module docstring), or None."""
    if not info.is_reduction():
        return None
    kinds = info.dom_kind()
    if kinds.rstrip("R") != "S" * len(kinds.rstrip("R")) or len(kinds.rstrip("R")) < 2:
        return None
    realize = block_realize(sch, info.block_rv)
    block = realize.block
    by_loop = {it.var: it for it in info.iters}
    loop_of, types = {}, {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if not isinstance(value, Var) or value not in by_loop:
            return None
        loop_of[iv.var], types[iv.var] = by_loop[value], iv.iter_type
    if len(loop_of) != len(info.iters) or len(block.writes) != 1:
        return None
    spatial = [v for v in loop_of if types[v] == IterType.DATA_PAR]
    reduce = [v for v in loop_of if types[v] == IterType.COMM_REDUCE]
    if len(reduce) != len(loop_of) - len(spatial):
        return None
    out = block.writes[0]
    idx = [r.min for r in out.region]
    if sorted(map(id, idx)) != sorted(map(id, spatial)):
        return None  # the output is indexed by each spatial iter once
    operands = [r for r in block.reads if r.buffer is not out.buffer]
    if len(operands) != 2:
        return None

    def plain(region) -> bool:
        xs = [r.min for r in region.region]
        return all(isinstance(x, Var) and x in loop_of for x in xs) and len({id(x) for x in xs}) == len(xs)

    def uses(region, v) -> bool:
        return any(uses_var(r.min, v) for r in region.region)

    def roles_with(weight, data):
        own = [v for v in spatial if uses(weight, v)]
        pixels = [v for v in spatial if v not in own]
        if not plain(weight) or len(own) != 1 or not pixels or any(not uses(data, v) for v in pixels):
            return None
        if any(not uses(data, v) for v in reduce) or not any(uses(weight, v) for v in reduce):
            return None
        return own[0], pixels

    found = roles_with(operands[1], operands[0]) or roles_with(operands[0], operands[1])
    if found is None:
        return None
    own, pixels = found
    position = {id(it): n for n, it in enumerate(info.iters)}
    pixel_loops = sorted((loop_of[v] for v in pixels), key=lambda it: position[id(it)])
    return _ConvRoles(info, loop_of[own], pixel_loops, [loop_of[v] for v in reduce])


class Conv2d(ScheduleRule):
    """Convolutions on register tiles of output channels by pixels (module docstring)."""

    def __init__(self, config: ConvConfig | None = None):
        self.config = config or ConvConfig()

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_gpu:
            return None
        func = prepare(func)
        cfg = self.config
        if cfg.threads_o * cfg.threads_p > max_threads(target):
            return None
        sch = Schedule(func)
        try:
            infos = try_inline(sch)
            if not infos or not infos[0].reduction_block or any(not i.is_injective() for i in infos[1:]):
                return None
            if match_matmul(sch, infos[0]) is not None:
                return None  # a matrix product: Matmul's, GEMV's or LowBatchGEMV's
            roles = match_conv(sch, infos[0])
        except ScheduleError:
            return None
        if roles is None:
            return None
        trial = sch.copy()
        try:
            schedule_conv(trial, infos, roles, cfg)
        except ScheduleError:
            return None
        return trial


def pixel_threads(width: int | None, height: int | None, cfg: ConvConfig) -> tuple[int, int]:
    """(threads along the output columns, threads along the rows): the columns take the largest
    divisor of the width up to `threads_p` (at least 7 of them, else `threads_p` with a bound
    check), the rows the largest power of two that keeps both within `threads_p` pixels.

    >>> [pixel_threads(w, w, ConvConfig()) for w in (112, 56, 28, 14, 7)]
    [(28, 1), (28, 1), (28, 1), (14, 2), (7, 4)]
    """
    if width is None:
        tw = cfg.threads_p
    else:
        tw = max(t for t in range(1, min(width, cfg.threads_p) + 1) if width % t == 0)
        if tw < 7 and width > tw:
            tw = min(width, cfg.threads_p)
    th = 1
    while tw * th * 2 <= cfg.threads_p and (height is None or th * 2 <= height):
        th *= 2
    return tw, th


def schedule_conv(sch: Schedule, infos: list, roles: _ConvRoles, cfg: ConvConfig) -> None:
    block = roles.info.block_rv
    *rest, w = roles.pixels
    h = rest.pop() if rest else None
    reduce = [it.loop_rv for it in roles.reduce]
    tw, th = pixel_threads(w.extent, h.extent if h is not None else 1, cfg)
    threads_o = 1  # the block's other threads go to the channels (a power of two)
    while threads_o * 2 * tw * th <= cfg.threads_o * cfg.threads_p:
        threads_o *= 2
    bo, to, io = sch.split(roles.o.loop_rv, [None, threads_o, cfg.tile_o])
    bw, tx = sch.split(w.loop_rv, [None, tw])
    if h is not None:
        bh, ty, ih = sch.split(h.loop_rv, [None, th, cfg.tile_h])
        tiles, threads, blocks = [io, ih], [ty, tx], [bh, bw]
    else:
        tiles, threads, blocks = [io], [tx], [bw]
    # symbolic extents outermost: the fused block index then divides by constants only
    outer = sorted([*[it.loop_rv for it in rest], bo, *blocks],
                   key=lambda lp: isinstance(sch.get(lp).extent, IntImm))
    sch.reorder(*outer, to, *threads, *reduce, *tiles)
    bx = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    tp = sch.fuse(*threads) if len(threads) > 1 else threads[0]
    sch.bind(bx, "blockIdx.x")
    sch.bind(to, "threadIdx.y")
    sch.bind(tp, "threadIdx.x")
    threads_p = tw * th
    local = sch.cache_write(block, 0, "local")
    for info in infos[1:]:
        try:
            sch.reverse_compute_inline(info.block_rv)
        except ScheduleError:
            pass
    sch.reverse_compute_at(local, tp)
    for lp in [*tiles, *sch.get_loops(local)[3:]]:  # the tile's loops unrolled: its array in registers
        sch.unroll(lp)
    try:  # the tile zeroed once before the reduction rather than tested on every step
        sch.decompose_reduction(block, reduce[0])
    except ScheduleError:
        pass
    for info in infos[1:]:  # an epilogue that would not fold: the same threads, after the tiles
        try:
            rv = sch.get_block(info.name)
        except ScheduleError:
            continue
        sch.reverse_compute_at(rv, bx)
        loops = [it.loop_rv for it in get_block_info(sch, rv).iters[1:]]
        fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        _, ty, tx = sch.split(fused, [None, threads_o, threads_p])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")


__all__ = ["Conv2d", "ConvConfig", "match_conv", "schedule_conv"]
