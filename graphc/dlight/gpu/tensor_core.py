"""`Matmul`'s tensor-core variant: 16x16x16 WMMA tiles (float16 or bfloat16 in, float32 accumulators).

Taken when the target has tensor cores (CUDA `sm_80` or later; `MatmulConfig.tensor_cores`
"always" forces it elsewhere, where OpenCL emulates the intrinsics, to check the schedule on
PoCL), both operands are float16 (or both bfloat16) and the block accumulates in float32
(`accumulate.py` made it so), and the row and column extents are static multiples of the
block tile and `k` of the k tile (16); a symbolic batch axis is fine.

A thread block of `warps_i x warps_j` warps (32 lanes on threadIdx.x, the warps on threadIdx.y)
computes a `(warps_i * frags_i * 16) x (warps_j * frags_j * 16)` tile of the output (64 x 64);
each warp holds `frags_i x frags_j` accumulator fragments (2 x 2; 1 x 1, 32 x 32 tiles, when
the 64 x 64 tiles would give fewer than `tensor_core_min_blocks` (128) thread blocks or do not
divide the output). Per k step of `k_tile`
elements, all threads copy the A and B tiles into shared memory, each warp loads its fragments
from there (`wmma.load`) and multiplies them (`wmma.mma`); B may be read as `[k, j]` or as
`[j, k]` (nn.Linear's weight: the column-major intrinsics). The A and B tiles are
double-buffered (`MatmulConfig.double_buffer`, InjectDoubleBuffer). At the end each warp stores its
fragments into a float32 shared tile (`wmma.store`), from which all threads write the output
with the epilogue (the float16 rounding, bias, activation) folded in.
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...tir.expr import IntImm
from ...tir.schedule import Schedule
from .utils import block_exists, is_unit_loop, loops_below

TILE = 16


def tensor_core_target(target) -> bool:
    """CUDA at sm_80 or later."""
    if target.kind != "cuda":
        return False
    arch = target.arch or ""
    digits = "".join(ch for ch in arch if ch.isdigit())
    return bool(digits) and int(digits) >= 80


def tensor_core_config(cfg, roles):
    """`cfg` with one fragment per warp when its block tiles would give fewer than
    `cfg.tensor_core_min_blocks` thread blocks (a 128-token linear layer: 24 blocks of 64 x 64
    for 768 columns, 96 of 32 x 32) or do not divide the rows and columns, else `cfg`."""
    import dataclasses

    extents = [it.extent for it in (*roles.batch, *roles.i, *roles.j)]
    if None in extents or (cfg.frags_i == 1 and cfg.frags_j == 1):
        return cfg
    blocks = 1
    for it in roles.batch:
        blocks *= it.extent
    rows, cols = cfg.warps_i * cfg.frags_i * TILE, cfg.warps_j * cfg.frags_j * TILE
    blocks *= -(-roles.i[0].extent // rows) * -(-roles.j[0].extent // cols)
    divides = roles.i[0].extent % rows == 0 and roles.j[0].extent % cols == 0
    if blocks >= cfg.tensor_core_min_blocks and divides:
        return cfg
    return dataclasses.replace(cfg, frags_i=1, frags_j=1)


def fits(sch: Schedule, roles, cfg, target) -> bool:
    """Whether the matched product can take the tensor-core schedule (module docstring)."""
    block = sch.get(roles.info.block_rv)
    reads = block.reads
    if len(roles.i) != 1 or len(roles.j) != 1:
        return False
    a, b = (reads[n].buffer for n in roles.reads)
    dtypes = (str(a.dtype), str(b.dtype), str(block.writes[0].buffer.dtype))
    if dtypes not in (("float16", "float16", "float32"), ("bfloat16", "bfloat16", "float32")):
        return False
    # both operands read row-major (A[.., i, k], B[.., k, j]), as the intrinsics load them
    # A read row-major (A[.., i, k]); B either way (B[.., k, j], or B[.., j, k] as nn.Linear's weight)
    if not _last_index_is(sch, roles, reads[roles.reads[0]], roles.k):
        return False
    if not (_last_index_is(sch, roles, reads[roles.reads[1]], roles.j[0])
            or _last_index_is(sch, roles, reads[roles.reads[1]], roles.k)):
        return False
    rows, cols = cfg.warps_i * cfg.frags_i * TILE, cfg.warps_j * cfg.frags_j * TILE
    for it, size in ((roles.i[0], rows), (roles.j[0], cols), (roles.k, cfg.k_tile)):
        if it.extent is None or it.extent % size:
            return False
    return shared_bytes(cfg) <= target.max_shared_memory_per_block


def shared_bytes(cfg) -> int:
    """The shared memory of the schedule: the 16-bit A and B tiles (two copies of each when
    double-buffered) and the float32 output tile."""
    rows, cols = cfg.warps_i * cfg.frags_i * TILE, cfg.warps_j * cfg.frags_j * TILE
    copies = 2 if cfg.double_buffer else 1
    return copies * 2 * cfg.k_tile * (rows + cols) + 4 * rows * cols


def _last_index_is(sch: Schedule, roles, region, loop_info) -> bool:
    """Whether the innermost index of `region` is the block iter bound to `loop_info`'s loop."""
    from ...tir.analysis.var_use import uses_var
    from ..base.analysis import block_realize

    realize = block_realize(sch, roles.info.block_rv)
    ivs = [iv.var for iv, v in zip(realize.block.iter_vars, realize.iter_values) if v is loop_info.var]
    return len(ivs) == 1 and uses_var(region.region[-1].min, ivs[0])


def tile_tensor_core(sch: Schedule, infos: list, roles, cfg) -> None:
    """Schedule the product (and its epilogue) on tensor cores; ScheduleError when it cannot."""
    from ...tir import tensor_intrin as ti

    block = roles.info.block_rv
    batch = [it.loop_rv for it in roles.batch if it.extent != 1]
    units = [it.loop_rv for it in roles.batch if it.extent == 1]
    sch.reorder(*units, *batch, roles.i[0].loop_rv, roles.j[0].loop_rv, roles.k.loop_rv)  # units outermost
    reads = sch.get(block).reads
    a_buf, b_buf = (reads[n].buffer for n in roles.reads)
    b_trans = _last_index_is(sch, roles, reads[roles.reads[1]], roles.k)
    names = ti.wmma_intrinsics(str(a_buf.dtype))
    load_a = names["load_a"]
    suffix = "_trans" if b_trans else ""
    load_b, mma = names["load_b" + suffix], names["sync" + suffix]
    # the output tile in shared memory (float32), then the fragments that accumulate it
    out_shared = sch.cache_write(block, 0, "shared")
    for info in infos[1:]:
        try:
            sch.reverse_compute_inline(info.block_rv)
        except ScheduleError:
            pass
    acc = sch.cache_write(block, 0, "wmma.accumulator")
    # unit loops are left out: compaction cannot tell `(k_0 + k_1) * 16` with a unit `k_1` outside
    # a fragment's allocation from the `k_0 * 16` of another access
    bi, wi, fi, ii = _split(sch, roles.i[0].loop_rv, [None, cfg.warps_i, cfg.frags_i, TILE])
    bj, wj, fj, jj = _split(sch, roles.j[0].loop_rv, [None, cfg.warps_j, cfg.frags_j, TILE])
    ko, kf, kk = _split(sch, roles.k.loop_rv, [None, cfg.k_tile // TILE, TILE])
    # the k steps outside the warps: every thread of the block stages the tiles of a step
    sch.reorder(*[lp for lp in (*batch, bi, bj, ko, wi, wj, kf, fi, fj, ii, jj, kk) if lp is not None])
    outer = [*batch, bi, bj]
    bx = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    sch.bind(bx, "blockIdx.x")
    warp = _fuse_present(sch, wi, wj)
    sch.bind(warp, "threadIdx.y")
    threads_y = cfg.warps_i * cfg.warps_j
    # fragments -> the shared output tile, each warp its own
    sch.reverse_compute_at(acc, bx)
    loops = [lp for lp in loops_below(sch, acc, bx) if not is_unit_loop(sch, lp)]
    if len(loops) != 2:
        raise ScheduleError("the accumulator's store is not a 2-D tile")
    swi, sfi, sri = _split(sch, loops[0], [cfg.warps_i, cfg.frags_i, TILE])
    swj, sfj, srj = _split(sch, loops[1], [cfg.warps_j, cfg.frags_j, TILE])
    sch.reorder(*[lp for lp in (swi, swj, sfi, sfj, sri, srj) if lp is not None])
    sch.bind(_fuse_present(sch, swi, swj), "threadIdx.y")
    sch.tensorize(sri, ti.WMMA_STORE)
    # the shared output tile -> the output, the epilogue folded in, by all threads
    sch.reverse_compute_at(out_shared, bx)
    for info in infos[1:]:
        if block_exists(sch, info.name):
            sch.reverse_compute_at(sch.get_block(info.name), bx)
            _spread(sch, sch.get_block(info.name), bx, threads_y)
    _spread(sch, out_shared, bx, threads_y)
    # the fragments zeroed once, before the k loop, each warp its own
    init = sch.decompose_reduction(block, ko)
    iloops = sch.get_loops(init)  # ..., the warps, frags_i, frags_j, 16, 16
    if len(iloops) < 3 or any(sch.get(lp).extent.value != TILE for lp in iloops[-2:]):
        raise ScheduleError("the accumulator's init is not a tile of fragments per warp")
    sch.tensorize(iloops[-2], ti.WMMA_FILL)
    # stage A and B in shared memory at each k step, then their fragments per warp
    for buf, which in ((a_buf, load_a), (b_buf, load_b)):
        index = next(n for n, r in enumerate(sch.get(block).reads) if r.buffer is buf)
        staged = sch.cache_read(block, index, "shared", consumer_blocks=[block])
        sch.compute_at(staged, ko)
        _spread(sch, staged, ko, threads_y, contiguous=8)
        staged_buf = sch.get(staged).writes[0].buffer
        index = next(n for n, r in enumerate(sch.get(block).reads) if r.buffer is staged_buf)
        frag = sch.cache_read(block, index, "wmma.matrix_a" if which == load_a else "wmma.matrix_b")
        at = kf if kf is not None else warp
        sch.compute_at(frag, at)
        floops = [lp for lp in loops_below(sch, frag, at) if not is_unit_loop(sch, lp)]
        if len(floops) != 2:
            raise ScheduleError("a fragment load is not a 2-D tile")
        r0, r1 = sch.split(floops[0], [None, TILE])
        c0, c1 = sch.split(floops[1], [None, TILE])
        sch.reorder(r0, c0, r1, c1)
        sch.tensorize(r1, which)
    sch.tensorize(ii, mma)
    if cfg.double_buffer:  # fits() asked for whole k steps
        sch.annotate(ko, "double_buffer", 1)


def _split(sch: Schedule, loop, factors: list) -> list:
    """`sch.split(loop, factors)` without the unit factors after the first: their loops are None."""
    kept = [f for f in factors[1:] if f != 1]
    parts = iter(sch.split(loop, [factors[0], *kept]))
    first = next(parts)
    return [first, *(next(parts) if f != 1 else None for f in factors[1:])]


def _fuse_present(sch: Schedule, *loops):
    """The loops `_split` kept (a warp count of 1 leaves None) fused into one; ScheduleError for
    one warp per block, which has no loop to bind."""
    present = [lp for lp in loops if lp is not None]
    if not present:
        raise ScheduleError("one warp per block: no warp loop to bind to threadIdx.y")
    return sch.fuse(*present) if len(present) > 1 else present[0]


def _spread(sch: Schedule, block, loop, threads_y: int, contiguous: int = 1) -> None:
    """Bind the loops of `block` under `loop` over the block's threads (32 x threads_y). With
    `contiguous`, each thread copies that many neighbours in one unrolled run where the sizes
    allow: one thread-bound statement, which needs no barrier between steps (a serial loop
    around the thread-bound copy gets one after every step)."""
    loops = loops_below(sch, block, loop)
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = sch.get(fused).extent
    threads = 32 * threads_y
    if contiguous > 1 and isinstance(extent, IntImm) and extent.value % threads == 0:
        per = extent.value // threads
        if per <= contiguous:
            ty, tx, inner = sch.split(fused, [threads_y, 32, per])
            sch.bind(ty, "threadIdx.y")
            sch.bind(tx, "threadIdx.x")
            sch.vectorize(inner)
            return
    _, ty, tx = sch.split(fused, [None, threads_y, 32])
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")


__all__ = ["fits", "tensor_core_config", "tensor_core_target", "tile_tensor_core"]
