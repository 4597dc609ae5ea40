"""`cpu.Matmul`: a register-blocked micro-kernel for dense, batched and fused matmuls.

It applies to a function with one GEMM-like block (`gemm_analysis`: `C += A * B`, batch / I
/ J / R iters) and only injective blocks besides: prologues (a cast, a transpose) inline
into the GEMM's reads, epilogues (bias, GELU, residual add, scaling) run on each register
tile right after it is computed. The schedule is the one `benchmarks/matmul.py`'s hand-written
micro-kernel proved (0.92x numpy), sized from the target:

    B_packed[j // NR, k, j % NR] = B[k, j]   # panels of NR columns; zero past N (pad_einsum)
    for task in parallel(batch * N/NR panels [* row chunks]):
        for m_0 in M / MR:                     # MR rows per register tile
            C_local[MR, NR] = 0
            for k:                             # MR broadcasts of A, NR/lanes vector loads
                for m_1 in unroll(MR):             # of the packed panel, MR*NR/lanes FMAs
                    for n_1 in unroll(NR / lanes):
                        for n_2 in vectorized(lanes):
                            C_local[m_1, n] += A[m, k] * B_packed[n_0, k, n]
            out[tile] = epilogue(C_local)      # only the rows < M and columns < N

- The tile: `NR = nv * lanes` columns and `MR` rows hold `MR * nv` accumulators; with the `nv`
  panel loads they fill the target's vector registers (32 on AVX-512: 6 x 4 x 16 floats; 16
  on AVX2: 3 x 2 x 8 ...), see `tile_shape`. A short static M (a batch-1 linear layer) gets
  MR = M, a short N fewer vectors.
- B is packed into panels (`pad_einsum` pads N to whole panels with zeros, `transform_layout`
  gives the copy the panel layout), so the micro-kernel streams one contiguous panel. When B
  is a layout-free buffer (a weight: the function attribute ``layout_free_buffers`` lists its
  parameter), the packing block stays whole at the top of the function, annotated
  ``meta_schedule.layout_rewrite_preproc`` (TVM's key), for
  `relax.transform.SplitLayoutRewritePreproc` to hoist out of the kernel and `FoldConstant`
  to run once at compile time. Otherwise each task packs its own panel.
- M rows that do not fill a tile are guarded; the last tile is peeled off the row loop
  (`loop_partition`) so the full tiles run unguarded. A symbolic M is padded to whole tiles
  instead (its A copied per call): a loop of unknown length cannot be peeled.
- Parallel tasks: the batch and panel loops, fused; when they do not split evenly over the
  cores, the rows are cut into chunks as well. A kernel doing less than `SERIAL_FLOPS`
  multiply-adds stays serial (waking the thread pool costs more).

Every choice above is a sampling instruction with today's choice as its decision (so the
DefaultSampler gives this schedule and a tuner searches around it, see `graphc.tune`): the
register tile `[mr, nv]` among those that fit the registers (`tile_candidates`), packing B
or not where it is not required, the row-tile unroll, the reduce-loop block `kc` (None or a
divisor of K), and the parallel row chunks (None: serial).

>>> from graphc import te
>>> from graphc.target import Target
>>> A = te.placeholder((64, 32), name="A"); W = te.placeholder((32, 48), name="W")
>>> k = te.reduce_axis((0, 32), "k")
>>> C = te.compute((64, 48), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="C")
>>> sch = Matmul().apply(te.create_prim_func([A, W, C]), Target("llvm -mcpu=x86-64 -mattr=+avx2,+fma"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("C_update"))]
['serial', 'serial', 'serial', 'unroll', 'unroll', 'vectorized']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...ir import DataType
from ...tir.expr import IntImm, Var
from ...tir.function import PrimFunc
from ...tir.schedule import BlockRV, LoopRV, Schedule
from ..base import ScheduleRule, get_block_info, try_inline
from ..base.analysis import block_realize, block_regions, is_output_block
from .fallback import guarded, schedule_block_generic
from .gemm_analysis import GemmRoles, gemm_roles
from .utils import (
    cache_bytes,
    enough_work,
    leading_spatial,
    num_cores,
    output_dtype,
    parallelize_outer,
    split_for_vector,
    vector_lanes,
    vector_registers,
)

# Below this many multiply-adds a matmul runs on one thread: waking the pool costs ~5 us.
SERIAL_FLOPS = 1 << 19
# Above this many, a tuner is not offered the serial schedule (see schedule_gemm).
PARALLEL_FLOPS = 1 << 23
# The annotation on a packing block a layout rewrite may hoist out of the kernel.
PREPROC_ANNOTATION = "meta_schedule.layout_rewrite_preproc"  # TVM's key
_FLOAT_DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Tile:
    """A register tile: `mr` rows by `nv` vectors of `lanes` elements (`nr` columns)."""

    mr: int
    nv: int
    lanes: int

    @property
    def nr(self) -> int:
        return self.nv * self.lanes


def tile_shape(registers: int, lanes: int, m: int | None, n: int | None) -> Tile:
    """The register tile for an M x N output (None: symbolic) on a machine with `registers`
    vector registers of `lanes` elements.

    `nv` panel vectors and `mr * nv` accumulators must fit with one register to spare (the
    broadcast of A); among those that fit, 4 panel vectors and 6 rows (AVX-512) or 2 and 3 (16
    registers), as measured on the 1024^3 and BERT shapes. A short static N takes fewer
    vectors, a short static M fewer rows.

    >>> tile_shape(32, 16, 128, 768), tile_shape(16, 8, 128, 768)
    (Tile(mr=6, nv=4, lanes=16), Tile(mr=4, nv=3, lanes=8))
    >>> tile_shape(32, 16, 1, 768), tile_shape(32, 16, 128, 10)
    (Tile(mr=1, nv=4, lanes=16), Tile(mr=12, nv=1, lanes=16))
    """
    nv = 4 if registers >= 32 else 3
    if n is not None:
        nv = max(1, min(nv, -(-n // lanes)))
    mr = max(1, min(registers - nv - 1, 28) // nv)
    if registers >= 32:
        mr = min(mr, 6 if nv == 4 else 12)
    if m is not None and m <= mr:
        mr = m
    return Tile(mr, nv, lanes)


def tile_candidates(registers: int, lanes: int, m: int | None, n: int | None) -> list:
    """Every register tile `[mr, nv]` whose `mr * nv` accumulators and `nv` panel vectors fit
    the registers with one to spare (at most 28 accumulators; `nv` up to what N needs, `mr` up
    to a static M).

    >>> len(tile_candidates(16, 8, 128, 768)), tile_candidates(32, 16, 2, 20)
    (24, [[1, 1], [2, 1], [1, 2], [2, 2]])
    """
    nv_max = 4 if registers >= 32 else 3
    if n is not None:
        nv_max = max(1, min(nv_max, -(-n // lanes)))
    out = []
    for nv in range(1, nv_max + 1):
        mr_max = max(1, min(registers - nv - 1, 28) // nv)
        out += [[mr, nv] for mr in range(1, mr_max + 1) if m is None or mr <= m]
    return out


class Matmul(ScheduleRule):
    """Dense and batched matmuls with fused prologues and epilogues (see the module docstring)."""

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_cpu:
            return None
        sch = Schedule(func)
        infos = try_inline(sch)
        if not infos:
            return None
        gemms = [i for i in infos if i.reduction_block]
        if len(gemms) != 1 or any(not i.is_injective() for i in infos if i is not gemms[0]):
            return None
        block = gemms[0].block_rv
        roles = _roles(sch, block)
        if roles is None or output_dtype(sch, gemms[0]) not in _FLOAT_DTYPES:
            return None
        layout_free = _layout_free(func, sch, roles)
        if not roles.i_vars and not layout_free and roles.b.indices[-1] is not roles.j_var:
            return None  # dot products along B's rows (a GEMV): the Reduction rule's case
        before = [i for i in infos[: infos.index(gemms[0])]]
        try:
            schedule_gemm(sch, block, roles, target, layout_free)
        except ScheduleError:
            if sampled(sch):
                raise  # a tuner's decisions failed: the candidate fails, saying why
            return None
        for info in before:  # prologues that did not inline (e.g. used twice)
            sch = guarded(sch, schedule_block_generic, get_block_info(sch, info.block_rv), target)
        for name in _block_names(sch):  # copies of A at the root (padded, reindexed): in parallel
            if name.startswith(roles.a.buffer.name) and name != roles.a.buffer.name:
                block_rv = sch.get_block(name)
                if not sch.get_loops(block_rv) or sch.get(sch.get_loops(block_rv)[0]).kind.value != "serial":
                    continue
                sch = guarded(sch, _parallel_copy, block_rv)
        return sch


def _is_unit(extent) -> bool:
    return isinstance(extent, IntImm) and extent.value == 1


def sampled(sch: Schedule) -> bool:
    """Whether a sampler other than the default takes the schedule's decisions (a tuner's)."""
    return not getattr(sch.sampler, "is_default", False)


def _parallel_copy(sch: Schedule, block: BlockRV) -> None:
    """Run a root-level copy's outer loops in parallel when it is large enough."""
    info = get_block_info(sch, block)
    if enough_work(info):
        parallelize_outer(sch, leading_spatial(info))


def _roles(sch: Schedule, block: BlockRV) -> GemmRoles | None:
    reads, _ = block_regions(sch.get(block))
    return gemm_roles(sch.get(block), reads)


def _layout_free(func: PrimFunc, sch: Schedule, roles: GemmRoles) -> bool:
    """Whether B is a parameter listed in the function's ``layout_free_buffers`` (a weight)."""
    indices = func.attrs.get("layout_free_buffers", ())
    params = sch.mod[sch.func_name].params
    bmap = sch.mod[sch.func_name].buffer_map
    for i in indices:
        if 0 <= int(i) < len(params) and bmap.get(params[int(i)]) is roles.b.buffer:
            return True
    return False


# -- the schedule ----------------------------------------------------------------------------


def schedule_gemm(sch: Schedule, block: BlockRV, roles: GemmRoles, target, layout_free: bool) -> None:
    """Schedule GEMM-like `block` (roles `roles`) and its epilogue as the module docstring shows."""
    dtype = roles.out.buffer.dtype
    lanes = vector_lanes(target, dtype)
    # operands indexed by anything but plain iters are first copied into plain buffers
    reindexed = not roles.plain(roles.b)
    if not roles.plain(roles.a):
        sch.reindex(block, ("read", roles.a_read))
    if reindexed:
        sch.reindex(block, ("read", _roles(sch, block).b_read))
    roles = _roles(sch, block)
    if roles is None:
        raise ScheduleError("the block stopped being GEMM-like after reindexing")
    m_ext = _static_product(_extents(sch, block, roles.i_vars))
    n_ext = _static_product(_extents(sch, block, (roles.j_var,)))
    tile = tile_shape(vector_registers(target), lanes, m_ext, n_ext)
    tile = Tile(_dividing_rows(tile.mr, m_ext), tile.nv, tile.lanes)
    tiles = tile_candidates(vector_registers(target), lanes, m_ext, n_ext)
    if [tile.mr, tile.nv] not in tiles:
        tiles.append([tile.mr, tile.nv])
    mr, nv = sch.sample_categorical(tiles, decision=tiles.index([tile.mr, tile.nv]))
    tile = Tile(mr, nv, lanes)
    j_pos = next(k for k, e in enumerate(roles.b.indices) if e is roles.j_var)
    contiguous = j_pos == len(roles.b.indices) - 1
    # a panel is worth packing when several row tiles stream it, and needed when B's columns
    # are not contiguous; a weight's packing is free (done once, see SplitLayoutRewritePreproc)
    packed = layout_free or reindexed or not contiguous or m_ext is None or m_ext > tile.mr
    if not (layout_free or reindexed or not contiguous):  # a choice, not a necessity
        packed = sch.sample_categorical([False, True], decision=int(packed))

    # pad N to whole panels (zero columns), pack B into panels; a symbolic M is padded to whole
    # row tiles (a copy of A): a guarded last tile cannot be peeled off a loop of unknown length,
    # and guards on every tile's rows keep LLVM from holding the accumulators in registers
    row_pad = roles.i_vars[-1] if m_ext is None and roles.i_vars else None
    padding = [tile.nr if iv.var is roles.j_var else tile.mr if iv.var is row_pad else 1
               for iv in sch.get(block).iter_vars]  # fmt: skip
    names_before = _block_names(sch)
    b_source, a_source = roles.b.buffer.name, roles.a.buffer.name
    sch.pad_einsum(block, padding)
    added = [n for n in _block_names(sch) if n not in names_before]
    roles = _roles(sch, block)
    params = {buf.name for buf in sch.mod[sch.func_name].buffer_map.values()}
    a_plain = None  # (A's name, the position of m in its indices) when A may be packed (_pack_a)
    if (roles.a.buffer.name == a_source and a_source in params and roles.plain(roles.a)
            and len(roles.a.indices) == 2 and len(roles.i_vars) == 1 and len(roles.r_vars) == 1):
        a_plain = (a_source, next(k for k, e in enumerate(roles.a.indices) if e is roles.i_vars[0]))
    if roles.a.buffer.name in added and roles.a.buffer.name != a_source:
        if a_source in names_before:  # a reindexed A: one copy, not two
            sch.compute_inline(sch.get_block(a_source))
        _vectorize_inner(sch, sch.get_block(roles.a.buffer.name), lanes)
    b_name = roles.b.buffer.name
    pack = None
    if b_name in added:  # pad_einsum's copy: B_pad[k, n] = n < N ? B[k, n] : 0
        pack = sch.get_block(b_name)
        if reindexed:
            sch.compute_inline(sch.get_block(b_source))
        if not packed:
            sch.compute_inline(pack)
            pack = None
    elif reindexed:
        pack = sch.get_block(b_name)
    elif packed:
        pack = sch.cache_read(block, roles.b_read, "global")
    batch_pos = [k for k, e in enumerate(roles.b.indices) if any(e is v for v in roles.batch)]
    nr = tile.nr

    def panel_layout(*idx):
        rest = [x for k, x in enumerate(idx) if k != j_pos and k not in batch_pos]
        return (*[idx[k] for k in batch_pos], idx[j_pos] // nr, *rest, idx[j_pos] % nr)

    pad_out = f"{roles.out.buffer.name}" if roles.out.buffer.name in added else None

    # accumulate in a local tile; the epilogue reads it directly
    write_back = sch.cache_write(block, 0, "local")
    epilogue = _fold_write_back(sch, block, write_back, pad_out)

    # the loop nest: batch, n_0, m_0, r..., m_1, n_1, n_2
    loops = _loops_by_var(sch, block)
    batch = [loops[v] for v in roles.batch]
    rows = [loops[v] for v in roles.i_vars]
    reduce = [loops[v] for v in roles.r_vars]
    col = loops[roles.j_var]
    n_0, n_1, n_2 = sch.split(col, [None, tile.nv, tile.lanes])
    m_0 = m_1 = None
    units = []
    if m_ext is not None and m_ext % tile.mr and len(rows) > 1:
        # a last tile of fewer rows is guarded: a unit row loop (ViT's batch of 1, 197 tokens) fused
        # in would be bound through a division by the rows under that guard, not an affine binding
        units = [lp for lp in rows if _is_unit(sch.get(lp).extent)]
        units = units if len(units) < len(rows) else []
        rows = [lp for lp in rows if not any(lp is u for u in units)]
    if rows:
        row = rows[0] if len(rows) == 1 else sch.fuse(*_in_loop_order(sch, block, rows))
        m_0, m_1 = sch.split(row, [None, tile.mr])
    chunks = _parallel_chunks(sch, block, roles, batch, n_0, m_0, target)
    chunk_choices, chunks = _chunk_candidates(sch, m_0, chunks, num_cores(target))
    macs = _static_product(_extents(sch, block, (*roles.batch, *roles.i_vars, roles.j_var, *roles.r_vars)))
    if chunks is not None and macs is not None and macs >= PARALLEL_FLOPS:
        # a large kernel is never run serially: a busy machine makes one thread look faster than
        # two (the other engineers' load stalls one of them), a quiet machine never does
        chunk_choices = [c for c in chunk_choices if c is not None]
    chunks = sch.sample_categorical(chunk_choices, decision=chunk_choices.index(chunks))
    m_block = None
    if m_0 is not None and not batch and chunks in (None, 1):
        # cache blocking of M: row blocks outermost, so that a block of A stays in L2 while every
        # panel streams past it (GotoBLAS' mc); None (today's default): the rows innermost
        blocks = _m_block_candidates(sch.get(m_0).extent, tile, sch.get(reduce[0]).extent, dtype, target)
        rows_per_block = sch.sample_categorical(blocks, decision=0) if len(blocks) > 1 else None
        if rows_per_block is not None:
            m_block, m_0 = sch.split(m_0, [None, rows_per_block])
    chunk = None
    if chunks is not None and chunks > 1:
        chunk, m_0 = sch.split(m_0, [chunks, None])
    k_0 = None
    kc = _k_block(sch.get(reduce[0]).extent, tile.nr * DataType(dtype).bits // 8, target)
    if len(reduce) == 1:
        kcs = _k_candidates(sch.get(reduce[0]).extent, kc)
        kc = sch.sample_categorical(kcs, decision=kcs.index(kc)) if len(kcs) > 1 else kc
    if len(reduce) == 1 and kc is not None:
        k_0, k_1 = sch.split(reduce[0], [None, kc])
        reduce = [k_1]
    tile_loops = ([m_1] if m_1 is not None else []) + [n_1, n_2]
    outer = [*([m_block] if m_block else []), *units, *batch, n_0, *([chunk] if chunk else []),
             *([k_0] if k_0 else []), *([m_0] if m_0 else [])]
    sch.reorder(*outer, *reduce, *tile_loops)
    anchor = m_0 if m_0 is not None and k_0 is None else (chunk or n_0)
    for blk in epilogue:
        sch.reverse_compute_at(blk, anchor)
    init = sch.decompose_reduction(block, k_0 or reduce[0])
    if m_1 is not None and sch.sample_categorical([True, False], decision=0):
        sch.unroll(m_1)
    sch.unroll(n_1)
    sch.vectorize(n_2)
    _vectorize_inner(sch, init, lanes)
    for blk in epilogue:
        _vectorize_inner(sch, blk, lanes)

    # parallel tasks over batch and panels (and row chunks when those split unevenly)
    par = None
    if chunks is not None:
        loops = [*batch, n_0, *([chunk] if chunk else [])]
        par = loops[0] if len(loops) == 1 else sch.fuse(*loops)
        sch.parallel(par)
    at_root = False
    if pack is not None:
        if not layout_free:  # each task packs its panel (a tuner may move it: the root, a k block)
            home = sch.get(par if par is not None else n_0)
            loops = [sch.get(lp) for lp in sch.get_loops(block)]
            last = sch.get(m_0) if m_0 is not None else home  # not inside the register tile
            where = sch.sample_compute_location(
                pack, decision=next(k for k, lp in enumerate(loops) if lp is home), check=False,
                outermost=next(k for k, lp in enumerate(loops) if lp is last) + 1)
            if where is not None:
                sch.compute_at(pack, where)
            at_root = where is None
        else:  # packed once, outside the kernel (see SplitLayoutRewritePreproc)
            sch.annotate(pack, PREPROC_ANNOTATION, True)
        sch.transform_layout(pack, ("write", 0), panel_layout)
        if at_root:  # all of B packed before the tasks start, by all the cores
            _parallel_copy(sch, pack)
        _vectorize_inner(sch, pack, lanes)
    if not batch and m_ext is not None and m_ext % tile.mr == 0 and a_plain is not None:
        _pack_a(sch, block, a_plain, tile, lanes)
    _peel_last_row_tile(sch, m_0, m_ext, tile)


def _pack_a(sch: Schedule, block: BlockRV, a_plain: tuple, tile: Tile, lanes: int) -> None:
    """A tuner's choice (the default: no): copy A into row-tile panels at the root, by all the
    cores, ``A_packed[m // mr, k, m % mr] = A[m, k]``, so the micro-kernel's broadcasts of A read
    one contiguous stream per row tile (GotoBLAS' packing of A) instead of `mr` rows of A. Only
    for a plain A (a parameter indexed `[m, k]` or `[k, m]`: `a_plain` = (its name, the
    position of m)), whole row tiles and no batch."""
    name, i_pos = a_plain
    reads = [k for k, r in enumerate(sch.get(block).reads) if r.buffer.name == name]
    if len(reads) != 1 or not sch.sample_categorical([False, True], decision=0):
        return
    mr = tile.mr
    pack = sch.cache_read(block, reads[0], "global")
    sch.transform_layout(pack, ("write", 0), lambda *idx: (idx[i_pos] // mr, idx[1 - i_pos], idx[i_pos] % mr))
    _parallel_copy(sch, pack)
    _vectorize_inner(sch, pack, lanes)


def _dividing_rows(mr: int, rows: int | None) -> int:
    """`mr`, or a tile of at least 4 rows a little smaller that leaves no partial tile.

    >>> _dividing_rows(6, 128), _dividing_rows(6, 197), _dividing_rows(6, None)
    (4, 6, 6)
    """
    if rows is None or rows % mr == 0:
        return mr
    for cand in range(mr - 1, 3, -1):
        if rows % cand == 0:
            return cand
    return mr


def _block_names(sch: Schedule) -> list:
    return [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_block("root"))]


def _extents(sch: Schedule, block: BlockRV, vars_) -> list:
    ivs = {iv.var: iv.dom.extent for iv in sch.get(block).iter_vars}
    return [ivs[v] for v in vars_]


def _static_product(extents) -> int | None:
    out = 1
    for e in extents:
        if not isinstance(e, IntImm):
            return None
        out *= e.value
    return out


def _loops_by_var(sch: Schedule, block: BlockRV) -> dict:
    """Iter var -> the loop (LoopRV) it is bound to (after pad_einsum each iter has its own)."""
    realize = block_realize(sch, block)
    by_loop = {lp.var: lp for lp in sch.get_loops(block)}
    out = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if not isinstance(value, Var) or value not in by_loop:
            raise ScheduleError(f"iter {iv.var.name} is not bound to a loop of its own")
        out[iv.var] = by_loop[value]
    return out


def _in_loop_order(sch: Schedule, block: BlockRV, loops: list) -> list:
    order = [lp.var for lp in sch.get_loops(block)]
    return sorted(loops, key=lambda lp: order.index(lp.var))


def _fold_write_back(sch: Schedule, block: BlockRV, write_back: BlockRV, pad_out: str | None) -> list:
    """Inline the local tile's write-back (and pad_einsum's copy-out) into the consumers, so
    they read the tile directly. Returns the blocks to run under each tile, in order: every
    block after the GEMM (the rule admits only injective ones there)."""
    if not is_output_block(sch, write_back) and sch.get_consumers(write_back):
        sch.compute_inline(write_back)
        if pad_out is not None:
            copy_out = sch.get_block(pad_out)
            if not is_output_block(sch, copy_out):
                sch.compute_inline(copy_out)
    names = _block_names(sch)
    after = names[names.index(sch.get(block).name_hint) + 1 :]
    return [sch.get_block(n) for n in after]


def _vectorize_inner(sch: Schedule, block: BlockRV, lanes: int) -> None:
    """Vectorize a copy/init/epilogue block's innermost loop by whole vectors when it is spatial."""
    info = get_block_info(sch, block)
    if not info.iters or info.iters[-1].kind != "S":
        return
    inner = info.iters[-1]
    if sch.get(inner.loop_rv).kind.value != "serial":
        return
    try:
        vec = split_for_vector(sch, inner.loop_rv, inner.extent, lanes, 4)
        if vec is not None:
            sch.vectorize(vec)
    except ScheduleError:
        pass


def _parallel_chunks(sch: Schedule, block: BlockRV, roles: GemmRoles, batch: list, n_0: LoopRV,
                     m_0: LoopRV | None, target) -> int | None:  # fmt: skip
    """How many chunks of row tiles each parallel task over (batch, panel) takes on: 1 when
    those tasks split evenly over the cores, more when they do not; None when the kernel is small
    enough to stay serial."""
    flops = _static_product(_extents(sch, block, (*roles.batch, *roles.i_vars, roles.j_var, *roles.r_vars)))
    if flops is not None and flops < SERIAL_FLOPS:
        return None
    cores = num_cores(target)
    tasks = _static_product([sch.get(lp).extent for lp in (*batch, n_0)])
    if m_0 is None or cores < 2 or (tasks is not None and not _uneven(tasks, cores)):
        return 1
    rows = sch.get(m_0).extent
    return _row_chunks(tasks, rows.value if isinstance(rows, IntImm) else None, cores)


def _chunk_candidates(sch: Schedule, m_0: LoopRV | None, chosen: int | None, cores: int) -> tuple:
    """The parallel row chunks a tuner may take: None (serial), 1 (tasks over batch and panels
    only), or up to 4 chunks per core that divide a static number of row tiles (an uneven cut
    leaves a guard the per-task packing cannot be placed under; chunks of a symbolic row count
    leave a binding reorder cannot move), and the rule's own choice; (candidates, choice)."""
    out = [None, 1]
    rows = sch.get(m_0).extent if m_0 is not None else None
    if isinstance(rows, IntImm):
        out += [c for c in range(2, 4 * max(cores, 1) + 1) if rows.value % c == 0]
    elif chosen is not None and chosen > 1 and sampled(sch):
        chosen = 1  # the default's choice fails here (the rule declines): not a tuning candidate
    if chosen not in out:
        out.append(chosen)
    return out, chosen


def _m_block_candidates(row_tiles, tile: Tile, k_extent, dtype: str, target) -> list:
    """The row blocks (in row tiles) a tuner may cut M into, for cache blocking: None (no block,
    the default) or a divisor of a static number of row tiles whose block of A (`rows x K`)
    takes between an eighth of L2 and L2 (at most 6 sizes).

    >>> from graphc.target import Target
    >>> _m_block_candidates(IntImm("int64", 256), Tile(4, 4, 16), IntImm("int64", 1024), "float32",
    ...                     Target("llvm -mcpu=x86-64"))
    [None, 8, 16, 32, 64]
    """
    if not isinstance(row_tiles, IntImm) or not isinstance(k_extent, IntImm):
        return [None]
    l2 = cache_bytes(target, 2)
    tile_bytes = tile.mr * k_extent.value * DataType(dtype).bits // 8
    fits = [d for d in range(1, row_tiles.value)
            if row_tiles.value % d == 0 and l2 // 8 <= d * tile_bytes <= l2]
    return [None, *fits[-6:]]


def _k_candidates(extent, chosen: int | None, smallest: int = 16) -> list:
    """The reduce-loop blocks a tuner may take: None (no block) or a divisor of a static K of at
    least `smallest` (and below K).

    >>> _k_candidates(IntImm("int64", 768), None)
    [None, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384]
    """
    out = [None]
    if isinstance(extent, IntImm):
        k = extent.value
        out += [d for d in range(max(smallest, 2), k) if k % d == 0]
    if chosen not in out:
        out.append(chosen)
    return out


def _uneven(tasks: int, cores: int) -> bool:
    """Whether `tasks` equal tasks leave a core idle for more than an eighth of the time."""
    rounds = -(-tasks // cores)
    return tasks < cores or (rounds * cores - tasks) / (rounds * cores) > 0.125


def _row_chunks(tasks: int | None, rows: int | None, cores: int) -> int:
    """How many chunks to cut the row tiles into so that tasks * chunks split evenly."""
    if tasks is None:
        return 1
    for chunks in range(2, 4 * cores + 1):
        if rows is not None and chunks > rows:
            break
        if not _uneven(tasks * chunks, cores):
            return chunks
    return min(cores, rows) if rows is not None else cores


def _k_block(extent, panel_row_bytes: int, target) -> int | None:
    """The reduce-loop block for a panel whose rows take `panel_row_bytes`: None while the whole
    panel fits in a quarter of L2 (it stays there while every row tile streams it), else a
    divisor of the extent near what fills an eighth of L2 (the tile then re-reads a block that
    stays in L2 while its A rows stream from further out).

    >>> from graphc.target import Target
    >>> t = Target("llvm -mcpu=x86-64")   # a common 1 MiB L2
    >>> _k_block(IntImm("int64", 768), 256, t), _k_block(IntImm("int64", 3072), 256, t)
    (None, 512)
    """
    if not isinstance(extent, IntImm):
        return None
    k, l2 = extent.value, cache_bytes(target, 2)
    if k * panel_row_bytes <= l2 // 4:
        return None
    want = max(16, l2 // 8 // panel_row_bytes)
    for kc in range(want, want // 2, -1):
        if k % kc == 0:
            return kc
    return None


def _peel_last_row_tile(sch: Schedule, m_0: LoopRV | None, m_ext: int | None, tile: Tile) -> None:
    """Run the last (partial) row tile in a loop of its own so the full tiles are unguarded."""
    if m_0 is None or (m_ext is not None and m_ext % tile.mr == 0):
        return
    try:
        loop = sch.get(m_0)
    except ScheduleError:
        return
    ext = loop.extent
    if isinstance(ext, IntImm) and ext.value < 2:
        return
    try:
        sch.loop_partition(m_0, [ext - 1, None])
    except ScheduleError:
        pass


__all__ = [
    "Matmul",
    "PREPROC_ANNOTATION",
    "SERIAL_FLOPS",
    "Tile",
    "sampled",
    "schedule_gemm",
    "tile_candidates",
    "tile_shape",
]
