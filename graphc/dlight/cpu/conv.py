"""`cpu.Conv2d`: convolutions as implicit GEMMs on a register tile of pixels by output channels.

It applies to a function whose one reduction block is a convolution-like implicit GEMM
(`gemm_roles(..., vector_operand="plain")`: `out[n, o, h, w] += X[n, c, h*s + r, ...] *
W[o, c, r, ...]`, the weight indexed by plain iters, one output iter `o` only the weight
uses), the padded input before it (kept materialized: it is read KH*KW times) and
injective epilogues after it (batch norm, residual add, ReLU). The layout stays NCHW:

    W_packed[o // NR, c, kh, kw, o % NR] = W   # once, at compile time, for a constant weight
    for (n, o_0, h) in parallel:              # panels of NR output channels, output rows
        for w_0 in W_out / TW:                # TW pixels of the row
            acc[TW, NR] = 0                   # stored channels-last: a row of NR is vectors
            for c, kh, kw:                    # TW broadcasts of X, NR / lanes loads of W
                for w_1 in unroll(TW):
                    for o_1 in unroll(NR / lanes):
                        for o_2 in vectorized(lanes):
                            acc[w_1, o] += X[n, c, h*s + kh, (w_0*TW + w_1)*s + kw] * W_packed[...]
            out[n, o_0 tile, h, w_0 tile] = epilogue(acc)

`TW` divides the output width (56 takes 4 pixels by 64 channels, 7 takes 7 by 32) and `NR` the output
channels; `TW * NR / lanes` accumulators stay at or under 24 (`conv_tile`). The vector runs
along output channels, so every output size uses full vectors. A weight listed in the
function's ``layout_free_buffers`` keeps its packing whole at the root, annotated for
`relax.transform.SplitLayoutRewritePreproc` (a constant weight is then packed once at compile
time). When the weight panel would not fit a quarter of L2 the input channels are blocked,
accumulating a whole output row's tile in L1. A grouped convolution (the input read at the
output channel's group, `o // (O/G)`) is scheduled the same way when a group's channels are
whole vectors (a panel then stays in one group); a grouped 1x1 one whose groups are not goes to
`cpu.GroupedConv` (per-group GEMMs vectorized along the pixels); depthwise ones are declined.

The register tile `[tw, nv]` (`conv_tiles`), the input-channel block (None or a divisor of the
channels) and running in parallel or not are sampling instructions with these choices as
their decisions (see `graphc.tune`).

>>> from graphc import te, topi
>>> from graphc.target import Target
>>> x = te.placeholder((1, 32, 14, 14), name="x"); w = te.placeholder((64, 32, 3, 3), name="w")
>>> func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, padding=1)])
>>> sch = Conv2d().apply(func, Target("llvm -mcpu=x86-64 -mattr=+avx2,+avx512f"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("conv2d_update"))][-3:]
['unroll', 'unroll', 'vectorized']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...ir import DataType
from ...tir.expr import IntImm
from ...tir.function import PrimFunc
from ...tir.schedule import BlockRV, Schedule
from ..base import ScheduleRule, get_block_info, try_inline
from ..base.analysis import block_regions, is_output_block
from .fallback import guarded, schedule_block_generic
from .gemm_analysis import GemmRoles, gemm_roles
from .matmul import (
    PREPROC_ANNOTATION,
    SERIAL_FLOPS,
    _k_candidates,
    _loops_by_var,
    _static_product,
    _vectorize_inner,
    sampled,
)
from .utils import cache_bytes, one_reduction, output_dtype, vector_lanes, vector_registers, written_buffer

# measured (one thread, znver5): 28 zmm accumulators spill (171 vs 244 GFLOP/s on 3x3 64-ch). A tile
# of part of a row with 22-24 runs 15-35% slower than 16-21 (3x3 16->64 at 55x55: 11x2 177, 5x4 222
# GFLOP/s; 64->64 at 24x24: 6x4 198, 4x4 249; 256->384 at 12x12: 6x4 211, 6x3 254; 64->192 at 56x56:
# 8x3 208, 7x3 257); 21 (7 x 3 vectors) runs as fast as 7 x 2 (246-260 at 7, 14 and 28). A tile of
# a whole row in 2 or more vectors keeps 24 (1x1 528->256 at 6x6: 6x4 228, 3x4 180 GFLOP/s).
MAX_ACCUMULATORS = 24
MAX_PART_ROW_ACCUMULATORS = 21


def _fits(tw: int, nv: int, width: int, registers: int) -> bool:
    if registers < 32:
        return tw * nv <= registers - 4
    return tw * nv <= (MAX_ACCUMULATORS if tw == width and nv > 1 else MAX_PART_ROW_ACCUMULATORS)


@dataclass(frozen=True)
class ConvTile:
    """`tw` pixels of an output row by `nv` vectors of `lanes` output channels."""

    tw: int
    nv: int
    lanes: int

    @property
    def nr(self) -> int:
        return self.nv * self.lanes


def conv_tile(width: int, channels: int, lanes: int, registers: int) -> ConvTile | None:
    """The register tile for an output row of `width` pixels and `channels` output channels.

    Among pixel counts dividing the width and vector counts dividing the channels' vectors,
    the most accumulators (with 32 registers at most 24 for a whole row in 2 or more vectors,
    else 21; 12 with 16),
    then the most vectors.

    >>> conv_tile(56, 64, 16, 32), conv_tile(7, 512, 16, 32), conv_tile(56, 64, 8, 16)
    (ConvTile(tw=4, nv=4, lanes=16), ConvTile(tw=7, nv=2, lanes=16), ConvTile(tw=2, nv=4, lanes=8))
    """
    if channels % lanes:
        return None
    vectors = channels // lanes
    best = None
    for nv in (4, 3, 2, 1):
        if vectors % nv:
            continue
        for tw in range(width, 0, -1):
            if width % tw == 0 and _fits(tw, nv, width, registers):
                key = (tw * nv, nv)
                if best is None or key > best[0]:
                    best = (key, ConvTile(tw, nv, lanes))
                break
    return best[1] if best else None


def conv_lanes(channels: int, lanes: int) -> int:
    """The vector length for `channels` output channels (a group's): the target's `lanes` when
    they divide the channels, else the largest power-of-two part of them down to 4 (1000
    channels take 8 lanes: half vectors beat the Window rule's per-channel rows 5 to 1).

    >>> conv_lanes(64, 16), conv_lanes(1000, 16), conv_lanes(28, 16), conv_lanes(34, 16), conv_lanes(8, 4)
    (16, 8, 4, 16, 4)
    """
    lane = lanes
    while lane > 4 and channels % lane:
        lane //= 2
    return lane if channels % lane == 0 else lanes


def conv_tiles(width: int, channels: int, lanes: int, registers: int) -> list:
    """Every register tile `[tw, nv]` `conv_tile` could take: `tw` dividing the width, `nv` (up
    to 4) the channels' vectors, at most as many accumulators as `conv_tile` allows.

    >>> conv_tiles(7, 64, 16, 32)
    [[1, 1], [7, 1], [1, 2], [7, 2], [1, 4]]
    """
    if channels % lanes:
        return []
    vectors = channels // lanes
    return [[tw, nv] for nv in (1, 2, 3, 4) if vectors % nv == 0
            for tw in range(1, width + 1) if width % tw == 0 and _fits(tw, nv, width, registers)]  # fmt: skip


class Conv2d(ScheduleRule):
    """Convolutions (and other implicit GEMMs) with fused epilogues (see the module docstring)."""

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_cpu:
            return None
        from .grouped_conv import GroupedConv  # a grouped 1x1 one of few channels per group

        grouped = GroupedConv().apply(func, target, tunable)
        if grouped is not None:
            return grouped
        found = one_reduction(func, target)
        if found is None:
            return None
        sch, infos, reduction = found
        conv = reduction.block_rv
        roles = _roles(sch, conv)
        if roles is None or roles.plain(roles.a):
            return None  # plain operands on both sides: a matmul (cpu.Matmul's)
        if output_dtype(sch, reduction) not in ("float32", "float64"):
            return None
        # keep the padded input: inlined, every one of KH*KW reads would test the border
        keep = {i.name for i in infos
                if not i.reduction_block and written_buffer(sch, i.block_rv) is roles.a.buffer}
        infos = try_inline(sch, keep=keep)
        if not infos or any(not i.is_injective() for i in infos if i.name != sch.get(conv).name_hint):
            return None
        roles = _roles(sch, conv)
        if roles is None:
            return None
        try:
            schedule_conv(sch, conv, roles, target, _layout_free(func, sch, roles))
        except ScheduleError:
            if sampled(sch):
                raise  # a tuner's decisions failed: the candidate fails, saying why
            return None
        names = _block_names(sch)
        for info in infos[: next(k for k, i in enumerate(infos) if i.reduction_block)]:
            if info.name in names:  # the padding (and other prologues): parallel, vectorized
                sch = guarded(sch, schedule_block_generic, get_block_info(sch, info.block_rv), target)
        return sch


def _roles(sch: Schedule, block: BlockRV) -> GemmRoles | None:
    reads, _ = block_regions(sch.get(block))
    return gemm_roles(sch.get(block), reads, vector_operand="plain")


def _block_names(sch: Schedule) -> list:
    return [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_block("root"))]


def _layout_free(func: PrimFunc, sch: Schedule, roles: GemmRoles) -> bool:
    bmap = sch.mod[sch.func_name].buffer_map
    params = sch.mod[sch.func_name].params
    return any(0 <= int(i) < len(params) and bmap.get(params[int(i)]) is roles.b.buffer
               for i in func.attrs.get("layout_free_buffers", ()))  # fmt: skip


def schedule_conv(sch: Schedule, conv: BlockRV, roles: GemmRoles, target, layout_free: bool) -> None:
    """Schedule convolution block `conv` (implicit-GEMM roles `roles`) and its epilogue."""
    dtype = roles.out.buffer.dtype
    lanes = vector_lanes(target, dtype)
    weight_pad = copy_out = None
    if roles.j_group is None and padded_channels(sch.get(conv), roles.j_var, lanes) is not None:
        # whole vectors of output channels: the weight gets zero channels (packed once with it),
        # the tile computes them and the copy-out drops them (SqueezeNet's 1000 classes: 1008)
        before = _block_names(sch)
        w_name, out_name = roles.b.buffer.name, roles.out.buffer.name
        sch.pad_einsum(conv, [lanes if iv.var is roles.j_var else 1 for iv in sch.get(conv).iter_vars])
        added = [n for n in _block_names(sch) if n not in before]
        weight_pad = sch.get_block(f"{w_name}_pad") if f"{w_name}_pad" in added else None
        copy_out = f"{out_name}_pad" if f"{out_name}_pad" in added else None
        roles = _roles(sch, conv)
        if roles is None:
            raise ScheduleError("the padded convolution is not an implicit GEMM")
    ivs = {iv.var: iv.dom.extent for iv in sch.get(conv).iter_vars}
    out_idx = list(roles.out.indices)
    pixel = next((v for v in reversed(out_idx) if v in roles.i_vars), None)
    channels, width = ivs[roles.j_var], ivs.get(pixel)
    if pixel is None or not isinstance(channels, IntImm) or not isinstance(width, IntImm):
        raise ScheduleError("the output channels or the row width is symbolic")
    # a grouped convolution's tile stays within one group: its broadcasts are the group's inputs
    per_group = roles.j_group or channels.value
    lanes = conv_lanes(per_group, lanes)
    tile = conv_tile(width.value, per_group, lanes, vector_registers(target))
    if tile is None:
        raise ScheduleError("the output channels do not split into whole vectors")
    tiles = conv_tiles(width.value, per_group, lanes, vector_registers(target))
    tw, nv = sch.sample_categorical(tiles, decision=tiles.index([tile.tw, tile.nv]))
    tile = ConvTile(tw, nv, lanes)

    # accumulate a tile channels-last in registers; the epilogue reads it directly
    write_back = sch.cache_write(conv, 0, "local")
    if sch.get_consumers(write_back) and not is_output_block(sch, write_back):
        sch.compute_inline(write_back)
        if copy_out is not None and not is_output_block(sch, sch.get_block(copy_out)):
            sch.compute_inline(sch.get_block(copy_out))
    names = _block_names(sch)
    epilogue = [sch.get_block(n) for n in names[names.index(sch.get(conv).name_hint) + 1 :]]

    loops = _loops_by_var(sch, conv)
    outer = [loops[v] for v in out_idx if v is not roles.j_var and v is not pixel]
    reduce = [loops[v] for v in roles.r_vars]
    j_loop, groups = loops[roles.j_var], []
    if roles.j_group and roles.j_group < channels.value:
        # the group a serial loop of its own, outside the parallel ones: the input index
        # `o // (O/G)` then simplifies to it, a broadcast (`(o_0 * NR + o_2) // (O/G)` gathered
        # per lane when a group holds several panels; fused into the parallel loop, it did too)
        g, j_loop = sch.split(j_loop, [None, roles.j_group])
        groups = [g]
    o_0, o_1, o_2 = sch.split(j_loop, [None, tile.nv, tile.lanes])
    w_0, w_1 = sch.split(loops[pixel], [None, tile.tw])
    c_0 = None
    kc = _channel_block(sch, reduce, tile.nr * DataType(dtype).bits // 8, target)
    if reduce:
        kcs = _k_candidates(sch.get(reduce[0]).extent, kc, smallest=1)
        kc = sch.sample_categorical(kcs, decision=kcs.index(kc)) if len(kcs) > 1 else kc
    if kc is not None:
        c_0, c_1 = sch.split(reduce[0], [None, kc])
        reduce = [c_1, *reduce[1:]]
    pos = [lp.var for lp in sch.get_loops(conv)]
    outer.sort(key=lambda lp: pos.index(lp.var))
    # (n, h) stay outside; a blocked input channel loop goes outside the row's pixel tiles
    order = [*groups, outer[0], o_0, *outer[1:], *([c_0] if c_0 else []), w_0, *reduce, w_1, o_1, o_2]
    sch.reorder(*order)
    anchor = w_0 if c_0 is None else (outer[-1] if outer else o_0)
    for blk in epilogue:
        sch.reverse_compute_at(blk, anchor)
    j_pos = out_idx.index(roles.j_var)  # channels last: a row of NR accumulators is whole vectors
    sch.transform_layout(conv, ("write", 0), lambda *i: (*i[:j_pos], *i[j_pos + 1 :], i[j_pos]))
    init = sch.decompose_reduction(conv, c_0 or reduce[0])
    sch.unroll(w_1)
    sch.unroll(o_1)
    sch.vectorize(o_2)
    _vectorize_inner(sch, init, tile.lanes)
    for blk in epilogue:
        _vectorize_row(sch, blk, anchor)

    # the weight packed into panels of NR output channels
    if weight_pad is not None:  # the zero-padding copy is the packing
        pack = weight_pad
    else:
        w_index = [r.buffer for r in block_regions(sch.get(conv))[0]].index(roles.b.buffer)
        pack = sch.cache_read(conv, w_index, "global")
    b_pos = next(k for k, e in enumerate(roles.b.indices) if e is roles.j_var)
    nr = tile.nr
    sch.transform_layout(pack, ("write", 0),
                         lambda *i: (i[b_pos] // nr, *i[:b_pos], *i[b_pos + 1 :], i[b_pos] % nr))
    if layout_free:
        sch.annotate(pack, PREPROC_ANNOTATION, True)
    _vectorize_inner(sch, pack, tile.lanes)

    flops = _static_product(list(ivs.values()))
    if sch.sample_categorical([True, False], decision=0 if flops is None or flops >= SERIAL_FLOPS else 1):
        par_loops = [outer[0], o_0, *outer[1:]]  # the group outside: its index stays a plain loop
        sch.parallel(par_loops[0] if len(par_loops) == 1 else sch.fuse(*par_loops))


def padded_channels(block, j_var, lanes: int) -> int | None:
    """The output channel count padded to whole vectors of `lanes`, when a convolution block's
    `channels` (static) are not whole vectors and the zero channels cost at most an eighth of
    the work; else None. Half vectors run at half the FMA rate: the 1x1 512->1000 at 13x13 in 125
    vectors of 8 ran at 116 GFLOP/s (one thread, znver5), 2.2x ONNX Runtime.

    >>> from graphc import te, topi, tir
    >>> x = te.placeholder((1, 8, 5, 5), name="x"); w = te.placeholder((1000, 8, 1, 1), name="w")
    >>> blk = tir.Schedule(te.create_prim_func([x, w, topi.nn.conv2d(x, w)]))
    >>> b = blk.get(blk.get_block("conv2d")); padded_channels(b, b.iter_vars[1].var, 16)
    1008
    """
    extent = next((iv.dom.extent for iv in block.iter_vars if iv.var is j_var), None)
    if not isinstance(extent, IntImm) or extent.value % lanes == 0:
        return None
    padded = -(-extent.value // lanes) * lanes
    return padded if (padded - extent.value) * 8 <= extent.value else None


def _vectorize_row(sch: Schedule, block: BlockRV, anchor) -> None:
    """Vectorize an epilogue's innermost loop (a tile's pixels: contiguous in the output) whatever
    its length: a few lanes beat scalar code, and the tile's rows are short."""
    loops = sch.get_loops(block)
    own = loops[[lp.var for lp in loops].index(anchor.var) + 1 :]
    if not own:
        return
    trial = sch.copy()
    try:
        ext = trial.get(own[-1]).extent
        if isinstance(ext, IntImm) and ext.value > 16:
            _vectorize_inner(trial, block, 16)
        elif isinstance(ext, IntImm) and ext.value > 1:
            trial.vectorize(own[-1])
    except ScheduleError:
        return
    sch._mod, sch._trace = trial._mod, trial._trace  # noqa: SLF001 - adopt the trial's state


def _channel_block(sch: Schedule, reduce: list, panel_row_bytes: int, target) -> int | None:
    """A block of the outer reduce loop (input channels) when the weight panel (all of K by NR
    channels) would not fit a quarter of L2: about an eighth of L2's worth of K."""
    extents = [sch.get(lp).extent for lp in reduce]
    if not all(isinstance(e, IntImm) for e in extents) or len(reduce) < 1:
        return None
    per_channel = panel_row_bytes
    for e in extents[1:]:
        per_channel *= e.value
    channels, l2 = extents[0].value, cache_bytes(target, 2)
    if channels * per_channel <= l2 // 4:
        return None
    want = max(1, l2 // 8 // per_channel)
    for kc in range(min(want, channels - 1), max(1, want // 2) - 1, -1):
        if kc >= 1 and channels % kc == 0:
            return kc
    return None


__all__ = ["Conv2d", "ConvTile", "conv_lanes", "conv_tile", "conv_tiles", "padded_channels", "schedule_conv"]
