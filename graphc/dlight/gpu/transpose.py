"""`gpu.Transpose`: layout changes staged through shared memory, coalesced on both sides.

It takes a function that is (after inlining) one injective block writing the output while it
reads an input `A` through a permutation of its iters (every index of the read is a distinct
iter) whose innermost index is not the output's innermost iter: a transpose, possibly with
elementwise work folded in. Reading `A` along the output's order would stride through memory
on one side; instead, per thread block:

- the input's innermost axis `a` and the output's innermost axis `b` are split into tiles of
  `tile` elements; the other loops and both tile loops are fused into blockIdx.x (symbolic
  extents outermost);
- the `tile x tile` piece of `A` is copied into shared memory by `threads_y x tile` threads,
  threadIdx.x running along `a`, so the global reads are coalesced; the shared rows are padded
  by one element (`storage_align`) so the column reads below hit distinct banks;
- the output tile is written with threadIdx.x along `b`, coalesced, each thread writing
  `tile / threads_y` rows.

Where both axes are static multiples of `tile`, the input's and the output's rows are multiples
of `vector` (4) 32-bit elements and the tile has exactly `threads * vector` elements, each
thread moves `vector` neighbours at once instead: one 128-bit global read of the input's row
stored element by element into the padded shared row, and one 128-bit global write of the
output's row gathered element by element from as many shared rows (the code generator's
one-sided vector copies); the threads of a warp then read 4 rows of 128 bytes and write 4 of
the output, and the shared accesses still hit distinct banks.

Extents that `tile` does not divide, or symbolic ones, leave a bound check. Either axis
shorter than `tile` makes the rule decline (nothing to gain: `Fallback` takes it).

>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((64, 96), name="A")
>>> B = te.compute((96, 64), lambda i, j: A[j, i], name="B")
>>> sch = Transpose().apply(te.create_prim_func([A, B]), Target("cuda"), False)
>>> [b.name for b in sch.get_child_blocks(sch.get_block("root"))]
['A_shared', 'B']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...tir.expr import IntImm, Var
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ..base import ScheduleRule, try_inline
from ..base.analysis import block_realize, block_regions, is_output_block
from .utils import max_threads, prepare


@dataclass(frozen=True)
class TransposeConfig:
    """The tile of one thread block (`tile x tile` elements) and its threads (`threads_y x tile`)."""

    tile: int = 32
    threads_y: int = 8
    # elements each thread reads (and writes) at once where the sizes allow (module docstring)
    vector: int = 4


def _match(sch: Schedule, info, tile: int):
    """(the read index of the transposed input, loop of `a`, loop of `b`, the input axis `b` indexes)
    or None (module docstring)."""
    if not info.is_injective() or not is_output_block(sch, info.block_rv):
        return None
    realize = block_realize(sch, info.block_rv)
    block = realize.block
    loop_of = {}
    loops = {it.var: it for it in info.iters}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if not isinstance(value, Var) or value not in loops:
            return None
        loop_of[iv.var] = loops[value]
    if len(loop_of) != len(info.iters) or len(block.writes) != 1:
        return None
    reads, writes = block_regions(block)
    out = [r.min for r in writes[0].region]
    if not out or not all(isinstance(x, Var) and x in loop_of for x in out):
        return None
    b = out[-1]
    for n, region in enumerate(reads):
        idx = [r.min for r in region.region]
        if len(idx) < 2 or not all(isinstance(x, Var) and x in loop_of for x in idx):
            continue
        if len({id(x) for x in idx}) != len(idx) or idx[-1] is b or not any(x is b for x in idx):
            continue
        la, lb = loop_of[idx[-1]], loop_of[b]
        if any(e is not None and e < tile for e in (la.extent, lb.extent)):
            continue
        return n, la, lb, next(k for k, x in enumerate(idx) if x is b)
    return None


class Transpose(ScheduleRule):
    """Transposes through shared-memory tiles, coalesced reads and writes (module docstring)."""

    def __init__(self, config: TransposeConfig | None = None):
        self.config = config or TransposeConfig()

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_gpu:
            return None
        func = prepare(func)
        cfg = self.config
        if cfg.tile * cfg.threads_y > max_threads(target) or cfg.tile % cfg.threads_y:
            return None
        sch = Schedule(func)
        try:
            infos = try_inline(sch)
            if not infos or len(infos) != 1:
                return None
            found = _match(sch, infos[0], cfg.tile)
        except ScheduleError:
            return None
        if found is None:
            return None
        if 4 * cfg.tile * (cfg.tile + 1) > target.max_shared_memory_per_block:
            return None
        trial = sch.copy()
        try:
            _schedule(trial, infos[0], *found, cfg)
        except ScheduleError:
            return None
        return trial


def _schedule(sch: Schedule, info, read: int, la, lb, b_axis: int, cfg: TransposeConfig) -> None:
    block = info.block_rv
    others = [it for it in info.iters if it is not la and it is not lb]
    # symbolic extents outermost, so the fused block index divides by constants only
    others.sort(key=lambda it: it.extent is not None)
    ao, ai = sch.split(la.loop_rv, [None, cfg.tile])
    bo, bi = sch.split(lb.loop_rv, [None, cfg.tile])
    outer = [it.loop_rv for it in others]
    symbolic_tiles = [lp for lp, it in ((ao, la), (bo, lb)) if it.extent is None]
    static_tiles = [lp for lp, it in ((ao, la), (bo, lb)) if it.extent is not None]
    outer = symbolic_tiles + outer + static_tiles
    vector = _vector(sch, block, read, la, lb, cfg)
    if vector > 1:  # (a, b / vector) over the threads, `vector` neighbours along b in each
        bi, bv = sch.split(bi, [None, vector])
        sch.reorder(*outer, ai, bi, bv)
        ty, tx = sch.split(sch.fuse(ai, bi), [cfg.threads_y, None])
        sch.vectorize(bv)
    else:
        ty, ai_serial = sch.split(ai, [cfg.threads_y, None])
        sch.reorder(*outer, ty, bi, ai_serial)
        tx = bi
    bx = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    sch.bind(bx, "blockIdx.x")
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")
    staged = sch.cache_read(block, read, "shared")
    sch.compute_at(staged, bx)
    loops = sch.get_loops(staged)[1:]
    loops = [lp for lp in loops
             if not (isinstance(sch.get(lp).extent, IntImm) and sch.get(lp).extent.value == 1)]
    if len(loops) != 2:
        raise ScheduleError("the shared tile of a transpose is not two-dimensional")
    row, col = loops  # the input's order: `col` runs along its innermost axis
    if vector > 1:
        col, cv = sch.split(col, [None, vector])
        sy, sx = sch.split(sch.fuse(row, col), [cfg.threads_y, None])
        sch.vectorize(cv)
        sch.bind(sy, "threadIdx.y")
        sch.bind(sx, "threadIdx.x")
    else:
        _, sy = sch.split(row, [None, cfg.threads_y])
        sch.bind(sy, "threadIdx.y")
        sch.bind(col, "threadIdx.x")
    sch.storage_align(staged, 0, b_axis, 32, 1)


def _vector(sch: Schedule, block, read: int, la, lb, cfg: TransposeConfig) -> int:
    """`cfg.vector` where the sizes allow vector reads and writes (module docstring), else 1."""
    from ...ir.dtype import DataType

    v = cfg.vector
    if v <= 1 or (cfg.tile * cfg.tile) != v * cfg.threads_y * cfg.tile or cfg.tile % v:
        return 1
    if any(it.extent is None or it.extent % cfg.tile for it in (la, lb)):
        return 1
    blk = sch.get(block)
    for buf in (blk.reads[read].buffer, blk.writes[0].buffer):
        last = buf.shape[-1] if buf.shape else None
        if (DataType(buf.dtype).bits != 32 or buf.strides or not isinstance(last, IntImm)
                or last.value % v):
            return 1
    return v


__all__ = ["Transpose", "TransposeConfig"]
