"""`gpu.Matmul` and `gpu.GEMV`: matrix products, tiled through shared memory or reduced across threads.

Both look for one reduction block computing `C[b.., i, j] += f(A[.., i, k], B[.., k, j])`
(either operand may be read transposed, batch axes may be shared or broadcast): exactly one
reduce iter `k`, an `i` only the left operand uses, a `j` only the right one uses; the other
spatial iters are batch axes. Injective blocks after it (bias, activation) are its epilogue.

`Matmul` (when `i` and `j` are both long or symbolic) tiles the output in blocks of
`(threads_y * tile_i) x (threads_x * tile_j)` elements: the block loops are fused into
blockIdx.x, each thread accumulates a `tile_i x tile_j` register tile in a "local" buffer,
and each `k_tile` step stages the A and B tiles in shared memory (double-buffered where `k_tile`
divides a static k: the next step's tiles load into a second copy while this step multiplies,
one barrier per step), loaded
by all the block's threads together, each thread copying `vector` (4, or 2) neighbouring
elements at once where the tile's and the operand's rows allow (one 128- or 64-bit load). The
register tile is zeroed once before the reduction; the epilogue is folded into its write-back.

`GEMV` (when `i` or `j` has a constant extent of 1: a batch-1 linear layer, the decode step
of a language model) gives each output element a thread block whose threads split `k` and
fold their partial sums with an allreduce (the `Reduction` rule's schedule).

A function holding several products (attention: scores, softmax, weighted sum) is `Matmul`'s
too: each product tiled as its own kernel, the blocks between them as rows (`products.py`).

>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((64, 32), name="A"); B = te.placeholder((32, 48), name="B")
>>> k = te.reduce_axis((0, 32), "k")
>>> C = te.compute((64, 48), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> sch = Matmul().apply(te.create_prim_func([A, B, C]), Target("cuda"), False)
>>> sorted(b.name for b in sch.get_child_blocks(sch.get_block("root")))[:2]
['A_shared', 'B_shared']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...ir.dtype import DataType
from ...tir.analysis.var_use import uses_var
from ...tir.expr import IntImm, Var
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ...tir.stmt import IterType
from ..base import ScheduleRule, get_block_info, try_inline
from ..base.analysis import BlockInfo, block_realize
from .decisions import sample_matmul_config, sample_tensor_core_config, sample_threads
from .reduction import schedule_rows
from .tensor_core import fits, tensor_core_config, tensor_core_target, tile_tensor_core
from .utils import block_exists, is_unit_loop, loops_below, max_threads, prepare


@dataclass(frozen=True)
class MatmulConfig:
    """Every decision of the tiled schedule: threads per block (y, x), the register tile of one
    thread (i, j) and the reduce tile staged in shared memory per step."""

    threads_y: int = 16
    threads_x: int = 16
    tile_i: int = 2
    tile_j: int = 2
    k_tile: int = 16
    # a `large_tile x large_tile` register tile instead when the rows and columns are static and
    # still give `large_min_blocks` thread blocks (enough to fill a GPU's multiprocessors)
    large_tile: int = 4
    large_min_blocks: int = 512
    # elements each thread copies at once into the shared tiles (a 128-bit load of float32) where
    # the tile's rows and the operand's rows are multiples of it
    vector: int = 4
    # two copies of each shared tile: the next k step's tiles are fetched into one while this
    # step multiplies the other, one barrier per step (InjectDoubleBuffer lowers the annotation);
    # not where a static k leaves a partial last step (`whole_steps`)
    double_buffer: bool = True
    # the tensor-core variant (tensor_core.py): "auto" (CUDA sm_80+), "always" (any GPU target;
    # OpenCL emulates the intrinsics) or "never"; its warps per block and fragments per warp
    tensor_cores: str = "auto"
    warps_i: int = 2
    warps_j: int = 2
    frags_i: int = 2
    frags_j: int = 2
    # one fragment per warp (32 x 32 block tiles) when 64 x 64 tiles give fewer thread blocks
    tensor_core_min_blocks: int = 128


@dataclass(frozen=True)
class GEMVConfig:
    """The threads that split the reduction of one output element."""

    threads: int = 128


@dataclass(frozen=True)
class _Roles:
    info: BlockInfo
    batch: list  # loop infos of the batch axes
    i: list  # loop infos of the axes only A reads (fused into one row axis)
    j: list  # loop infos of the axes only B reads (fused into one column axis)
    k: object
    reads: tuple  # (index of A in block.reads, index of B)
    i_first: bool  # C's row axis comes before its column axis


def _direct_loops(sch: Schedule, info: BlockInfo) -> dict | None:
    """{iter var: the loop info binding it} when every loop binds exactly one iter, directly."""
    realize = block_realize(sch, info.block_rv)
    by_loop = {it.var: it for it in info.iters}
    out = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if isinstance(value, IntImm):
            continue
        if not isinstance(value, Var) or value not in by_loop:
            return None
        out[iv.var] = (iv, by_loop[value])
    if len(out) != len(info.iters):
        return None
    return out


def match_matmul(sch: Schedule, info: BlockInfo) -> _Roles | None:
    """The matmul roles of a block (module docstring), or None."""
    if not info.is_reduction():
        return None
    loops = _direct_loops(sch, info)
    if loops is None:
        return None
    block = sch.get(info.block_rv)
    reduce = [v for v, (iv, _) in loops.items() if iv.iter_type == IterType.COMM_REDUCE]
    spatial = [v for v, (iv, _) in loops.items() if iv.iter_type == IterType.DATA_PAR]
    if len(reduce) != 1 or len(spatial) < 2:
        return None
    (k,) = reduce
    outs = {w.buffer for w in block.writes}
    operands = [(n, r) for n, r in enumerate(block.reads)
                if r.buffer not in outs and any(uses_var(x.min, k) for x in r.region)]
    if len(operands) != 2:
        return None

    def used(region) -> set:
        return {v for v in spatial if any(uses_var(x.min, v) for x in region.region)}

    (ia, ra), (ib, rb) = operands
    only_a, only_b = used(ra) - used(rb), used(rb) - used(ra)
    if not only_a or not only_b:
        return None
    position = {id(it): n for n, it in enumerate(info.iters)}
    order = sorted(spatial, key=lambda v: position[id(loops[v][1])])  # in loop order
    # the row axis is the innermost axis only A reads, the column axis the innermost only B
    # reads; every other spatial axis is a batch axis (fused into the thread blocks)
    i = [v for v in order if v in only_a][-1]
    j = [v for v in order if v in only_b][-1]
    out = [x.min for x in block.writes[0].region]
    if len(block.writes) != 1 or not all(any(x is v for v in spatial) for x in out):
        return None  # the register tile's write-back needs each output axis to be one iter
    if not any(x is i for x in out) or not any(x is j for x in out):
        return None
    batch = [loops[v][1] for v in order if v is not i and v is not j]
    i_first = [n for n, x in enumerate(out) if x is i][0] < [n for n, x in enumerate(out) if x is j][0]
    return _Roles(info, batch, [loops[i][1]], [loops[j][1]], loops[k][1], (ia, ib), i_first)


def _find(sch: Schedule):
    """(block infos, the matmul roles) when the function is one matmul-like reduction followed
    by injective blocks; else None."""
    infos = try_inline(sch)
    if not infos:
        return None
    reductions = [n for n, i in enumerate(infos) if i.reduction_block]
    if len(reductions) != 1 or any(not i.is_injective() for n, i in enumerate(infos) if n != reductions[0]):
        return None
    if reductions[0] != 0:
        return None
    roles = match_matmul(sch, infos[reductions[0]])
    return None if roles is None else (infos, roles)


def _is_one(its: list) -> bool:
    return all(it.extent == 1 for it in its)


def _larger_tiles(cfg: MatmulConfig, roles: _Roles) -> MatmulConfig:
    """`cfg` with the large register tile when the shapes allow (see MatmulConfig), else `cfg`."""
    import dataclasses

    extents = [it.extent for it in (*roles.batch, *roles.i, *roles.j)]
    if cfg.large_tile <= max(cfg.tile_i, cfg.tile_j) or None in extents:
        return cfg
    rows = cfg.threads_y * cfg.large_tile
    cols = cfg.threads_x * cfg.large_tile
    blocks = -(-roles.i[0].extent // rows) * -(-roles.j[0].extent // cols)
    for it in roles.batch:
        blocks *= it.extent
    if blocks < cfg.large_min_blocks:
        return cfg
    return dataclasses.replace(cfg, tile_i=cfg.large_tile, tile_j=cfg.large_tile)


def _few_rows(roles: _Roles) -> bool:
    """A static row count of 2 to 16 against more columns: `LowBatchGEMV` takes it."""
    from .low_batch_gemv import LowBatchGEMVConfig, short_rows

    return (len(roles.i) == 1 and len(roles.j) == 1 and roles.i[0].extent is not None
            and short_rows(roles, LowBatchGEMVConfig().max_rows))


class Matmul(ScheduleRule):
    """Shared-memory tiled matrix products with register tiles (module docstring)."""

    def __init__(self, config: MatmulConfig | None = None):
        self.config = config or MatmulConfig()

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_gpu:
            return None
        func = prepare(func)
        cfg = self.config
        if cfg.threads_x * cfg.threads_y > max_threads(target):
            return None
        sch = Schedule(func)
        try:
            found = _find(sch)
        except ScheduleError:
            return None
        if found is None:  # several products in one function (attention): products.py
            from .products import schedule_products

            return schedule_products(func, target, cfg)
        infos, roles = found
        if _is_one(roles.i) or _is_one(roles.j):
            return None  # GEMV's
        if _few_rows(roles):
            return None  # LowBatchGEMV's
        if cfg.tensor_cores != "never" and (cfg.tensor_cores == "always" or tensor_core_target(target)):
            tc_cfg = tensor_core_config(cfg, roles)
            if fits(sch, roles, tc_cfg, target) and 32 * cfg.warps_i * cfg.warps_j <= max_threads(target):
                tc_cfg = sample_tensor_core_config(sch, tc_cfg, roles, target)  # a tuner's decisions
                trial = sch.copy()
                try:
                    tile_tensor_core(trial, infos, roles, tc_cfg)
                    return trial
                except ScheduleError:
                    pass  # the SIMT tiles below
        cfg = _larger_tiles(cfg, roles)
        shared = 4 * cfg.k_tile * (cfg.threads_y * cfg.tile_i + cfg.threads_x * cfg.tile_j)
        if shared * (2 if cfg.double_buffer else 1) > target.max_shared_memory_per_block:
            return None
        cfg = sample_matmul_config(sch, cfg, target)  # a tuner's decisions (decisions.py)
        trial = sch.copy()
        try:
            tile_matmul(trial, infos, roles, cfg)
        except ScheduleError:
            return None
        return trial


def tile_matmul(sch: Schedule, infos: list, roles: _Roles, cfg: MatmulConfig) -> None:
    block = roles.info.block_rv
    # unit batch axes stay out of the fused block index: `b // 192` beside `b % 192 // 16` would
    # keep buffer compaction from seeing that the staged tiles are one head wide
    batch = [it.loop_rv for it in roles.batch if it.extent != 1]
    i_loops, j_loops = [it.loop_rv for it in roles.i], [it.loop_rv for it in roles.j]
    sch.reorder(*batch, *i_loops, *j_loops, roles.k.loop_rv)
    i = sch.fuse(*i_loops) if len(i_loops) > 1 else i_loops[0]
    j = sch.fuse(*j_loops) if len(j_loops) > 1 else j_loops[0]
    bi, ti, ii = sch.split(i, [None, cfg.threads_y, cfg.tile_i])
    bj, tj, jj = sch.split(j, [None, cfg.threads_x, cfg.tile_j])
    ko, ki = sch.split(roles.k.loop_rv, [None, cfg.k_tile])
    # a symbolic row count goes outermost, so the fused block index divides by constants only
    # (the affine-binding check of `bind` does not follow a division by a symbolic extent); a
    # second symbolic extent (attention's scores over a symbolic sequence) puts the row tiles on
    # blockIdx.y instead, the others fused into blockIdx.x, symbolic outermost
    def static(lp) -> bool:
        return isinstance(sch.get(lp).extent, IntImm)

    if not static(bi) and not all(static(lp) for lp in (*batch, bj)):
        outer = sorted([*batch, bj], key=static)
        sch.reorder(bi, *outer, ko, ti, tj, ki, ii, jj)
        sch.bind(bi, "blockIdx.y")
    else:
        outer = [bi, *batch, bj] if not static(bi) else [*batch, bi, bj]
        sch.reorder(*outer, ko, ti, tj, ki, ii, jj)
    bx = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    sch.bind(bx, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    reads = sch.get(block).reads
    staged_bufs = [reads[n].buffer for n in roles.reads]
    local = sch.cache_write(block, 0, "local")
    for info in infos[1:]:
        try:
            sch.reverse_compute_inline(info.block_rv)
        except ScheduleError:
            pass
    sch.reverse_compute_at(local, bx)
    _bind_tile(sch, loops_below(sch, local, bx), cfg, roles.i_first)
    for info in infos[1:]:  # an epilogue that would not fold: the same threads, after the tile
        if block_exists(sch, info.name):
            sch.reverse_compute_at(sch.get_block(info.name), bx)
            loops = loops_below(sch, sch.get_block(info.name), bx)
            fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
            _, ty, tx = sch.split(fused, [None, cfg.threads_y, cfg.threads_x])
            sch.bind(ty, "threadIdx.y")
            sch.bind(tx, "threadIdx.x")
    try:  # the register tile zeroed once before the k loop rather than tested on every step
        sch.decompose_reduction(block, ko)
    except ScheduleError:
        pass
    for buf in staged_bufs:
        index = next(n for n, r in enumerate(sch.get(block).reads) if r.buffer is buf)
        staged = sch.cache_read(block, index, "shared", consumer_blocks=[block])  # others read it too
        sch.compute_at(staged, ko)
        loops = loops_below(sch, staged, ko)
        width = _vector_width(sch, loops, buf, cfg)
        vec = None
        if width > 1:  # each thread copies `width` neighbours along the tile's rows at once
            loops[-1], vec = sch.split(loops[-1], [None, width])
        fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        _, ty, tx = sch.split(fused, [None, cfg.threads_y, cfg.threads_x])
        if vec is not None:
            sch.vectorize(vec)
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    if cfg.double_buffer and whole_steps(roles.k, cfg.k_tile):
        sch.annotate(ko, "double_buffer", 1)


def whole_steps(k, k_tile: int) -> bool:
    """Whether to double-buffer a reduction `k` staged `k_tile` at a time: not where a static
    extent leaves a partial last step, whose bound checks the prologue and the fetch ahead would
    each repeat (ViT's 197-token attention in float16 then spilled registers); a symbolic
    extent keeps it."""
    return k.extent is None or k.extent % k_tile == 0


def _vector_width(sch: Schedule, loops: list, buf, cfg: MatmulConfig) -> int:
    """The elements each thread copies at once into a shared tile (one 64- or 128-bit load): the
    widest of `cfg.vector`, its halves, ... that divides the tile's rows and the global rows of
    `buf` (so every group starts at an aligned element) and leaves every thread the same whole
    number of groups (no bound check inside the copy); 1 when none does."""
    extents = [sch.get(lp).extent for lp in loops]
    if not all(isinstance(e, IntImm) for e in extents) or buf.strides or not buf.shape:
        return 1
    if not isinstance(buf.shape[-1], IntImm):  # the row length sets the alignment; others may be symbolic
        return 1
    size = 1
    for e in extents:
        size *= e.value
    threads = cfg.threads_x * cfg.threads_y
    width = cfg.vector
    while width > 1:
        if (DataType(buf.dtype).bits * width <= 128 and extents[-1].value % width == 0
                and buf.shape[-1].value % width == 0 and size % (threads * width) == 0):
            return width
        width //= 2
    return 1


def _bind_tile(sch: Schedule, loops: list, cfg: MatmulConfig, i_first: bool) -> None:
    """Bind the write-back of the register tile so each thread copies the elements it owns (the
    batch axes are unit loops under the thread block; `i_first`: C's row axis comes first)."""
    loops = [lp for lp in loops if not is_unit_loop(sch, lp)]
    if len(loops) != 2:
        raise ScheduleError("the register tile's write-back is not a 2-D loop nest")
    li, lj = loops if i_first else loops[::-1]
    ty, _ = sch.split(li, [cfg.threads_y, cfg.tile_i])
    tx, _ = sch.split(lj, [cfg.threads_x, cfg.tile_j])
    sch.reorder(ty, tx)
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")




class GEMV(ScheduleRule):
    """Matrix-vector products: a thread block per output element, threads across `k` (module docstring)."""

    def __init__(self, config: GEMVConfig | None = None):
        self.config = config or GEMVConfig()

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
        if not (_is_one(roles.i) or _is_one(roles.j)):
            return None
        trial = sch.copy()
        try:
            info = roles.info
            spatial = [it.loop_rv for it in info.iters if it.kind == "S"]
            sch_order = [*spatial, roles.k.loop_rv]
            trial.reorder(*sch_order)
            now = [get_block_info(trial, i.block_rv) for i in infos]
            lead = sum(1 for it in now[0].iters if it.kind == "S")
            if any(len(i.iters) < lead for i in now[1:]):
                return None
            schedule_rows(trial, now, lead, sample_threads(trial, target, min(self.config.threads,
                                                                              max_threads(target))))
        except ScheduleError:
            return None
        return trial


__all__ = ["GEMV", "GEMVConfig", "Matmul", "MatmulConfig", "match_matmul", "tile_matmul"]
