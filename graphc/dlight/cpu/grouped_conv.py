"""`cpu.GroupedConv`: grouped 1x1 convolutions as per-group GEMMs vectorized along the pixels.

ShuffleNet's pointwise convolutions have 3 or 4 groups of 28, 34, 68 or 136 channels. `cpu.Conv2d`
vectorizes along a group's output channels, which for those counts means 4-lane vectors (or no
rule at all for 34). A 1x1, stride-1 convolution reads its input at the output's own pixel, so
per group it is the matmul `out[g*M + m, p] = sum_c W[g*M + m, c] * X[g*K + c, p]` over the `H*W`
pixels `p`, contiguous in NCHW on both sides. This rule runs it as that GEMM, the weight the
broadcast operand and the pixels the vector one:

    W_packed[o // MR, c, MR] = W                # once, at compile time, for a constant weight
    for (n, g, m_0) in parallel:                # MR output channels of group g
        for (h_0, w_0) in tiles:                # R whole rows, or one row's piece of P pixels
            acc[MR, R, P] = 0                   # MR * R * P / V vectors of V pixels: registers
            for c in K:                         # MR broadcasts of W, R * P / V loads of X
                for (m_1, h_1, v_0) in unroll(MR, R, P / V):
                    for v_1 in vectorized(V):
                        acc[m_1, h_1, p] += W_packed[...] * X[n, g*K + c, h, w]
            out[n, o tile, h tile, w tile] = epilogue(acc)

`V` divides `P` (a vector straddling two rows would gather) and is at most the target's lanes
(14 pixels take one 14-lane vector), `MR` divides `M`. `pixel_tile` picks the tile that needs the
fewest cycles per useful multiply-add by a count of its FMAs, loads and broadcasts; the rule
applies only where that beats `cpu.Conv2d`'s channel vectors. A small plane (7x7) is one flat
vector loop of 3 x 16 + 1 pixels (its index `(p // 7) * 7 + p % 7` folds to `p`): 136 channels a
group at 7x7 took 73-97 us against 142-159 us on 8-lane channel vectors (one thread, znver5).

>>> from graphc import te, topi
>>> from graphc.target import Target
>>> x = te.placeholder((1, 272, 14, 14), name="x"); w = te.placeholder((272, 68, 1, 1), name="w")
>>> func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, groups=4)])
>>> sch = GroupedConv().apply(func, Target("llvm -mcpu=x86-64 -mattr=+avx2,+avx512f"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("conv2d_update"))][-3:]
['unroll', 'unroll', 'vectorized']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...tir.expr import Add, IntImm
from ...tir.function import PrimFunc
from ...tir.schedule import BlockRV, Schedule
from ..base import ScheduleRule, get_block_info, try_inline
from ..base.analysis import block_regions, is_output_block
from .conv import _layout_free, _roles, conv_lanes
from .matmul import PREPROC_ANNOTATION, SERIAL_FLOPS, _loops_by_var, _vectorize_inner, sampled
from .utils import one_reduction, output_dtype, vector_lanes, vector_registers

MAX_ACCUMULATORS = 24  # as cpu.Conv2d: 28 zmm accumulators spill


@dataclass(frozen=True)
class PixelTile:
    """`mr` output channels by `rows` output rows of `cols` pixels, in vectors of `v` pixels
    (`v` divides `cols`: a vector straddling two rows would gather). A whole small plane is
    one tile (`v` then is all its pixels, vectorized as one flat loop: the code generator cuts
    it into vectors of `lanes` and a scalar tail; 7x7 = 3 x 16 + 1)."""

    mr: int
    rows: int
    cols: int
    v: int
    lanes: int = 0  # a plane's: the vectors it is cut into

    @property
    def pixels(self) -> int:
        return self.rows * self.cols

    @property
    def plane(self) -> bool:
        return self.v > self.cols

    @property
    def vectors(self) -> int:
        return -(-self.pixels // self.lanes) if self.plane else self.pixels // self.v

    def cost(self) -> float:
        """Cycles per useful multiply-add, in half cycles: the FMAs, or the loads when there are
        more of them (two of each issue per cycle; a load of the input, streamed from L2, counts
        twice, a broadcast of the packed weight, in L1, once). The input is re-read once per `mr`
        channels: 17 x 14 pixels and 4 x 2 x 14 took 60% of the time of 2 x 4 x 28 (a load per
        FMA) on 34- and 68-channel groups."""
        return max(self.mr * self.vectors, 2 * self.vectors + self.mr) / (self.mr * self.pixels)


def pixel_tile(channels: int, height: int, width: int, lanes: int, registers: int) -> PixelTile | None:
    """The cheapest register tile (`PixelTile.cost`) for a group of `channels` output channels
    over an `height` x `width` output: whole rows (`rows` dividing the height) or a piece of a
    row (`cols` dividing the width), vectors of `v <= lanes` pixels dividing the row's, `mr`
    dividing the channels, at most 24 accumulators (12 with 16 registers).

    >>> pixel_tile(68, 14, 14, 16, 32), pixel_tile(34, 28, 28, 16, 32)
    (PixelTile(mr=4, rows=2, cols=14, v=14, lanes=0), PixelTile(mr=17, rows=1, cols=14, v=14, lanes=0))
    >>> pixel_tile(136, 7, 7, 16, 32)  # 3 x 16 + 1 pixels by 4 channels
    PixelTile(mr=4, rows=7, cols=7, v=49, lanes=16)
    """
    limit = MAX_ACCUMULATORS if registers >= 32 else registers - 4
    pieces = [(1, c) for c in range(1, width) if width % c == 0]
    pieces += [(r, width) for r in range(1, height + 1) if height % r == 0]
    best = None
    for rows, cols in pieces + [(height, width)]:
        pixels = rows * cols
        v = max(d for d in range(1, min(lanes, cols) + 1) if cols % d == 0)
        plane = (rows, cols) == (height, width) and best is not None and cols < pixels <= 4 * lanes
        if plane:  # the last candidate: the whole plane as one flat vector loop
            v = pixels
        elif v < 4 and cols >= 4:
            continue
        for mr in range(1, channels + 1):
            tile = PixelTile(mr, rows, cols, v, lanes if plane else 0)
            if channels % mr or mr * tile.vectors > limit:
                continue
            key = (tile.cost(), -tile.mr * tile.vectors)
            if best is None or key < best[0]:
                best = (key, tile)
    return best[1] if best else None


class GroupedConv(ScheduleRule):
    """Grouped 1x1 stride-1 convolutions as per-group GEMMs over the pixels (see the module doc)."""

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        found = one_reduction(func, target)
        if found is None or output_dtype(found[0], found[2]) not in ("float32", "float64"):
            return None
        sch = found[0]
        infos = try_inline(sch)
        if not infos or any(not i.is_injective() for i in infos if not i.reduction_block):
            return None
        conv = next(i for i in infos if i.reduction_block).block_rv
        shape = _pointwise_grouped(sch, conv)
        if shape is None:
            return None
        lanes = vector_lanes(target, output_dtype(sch, get_block_info(sch, conv)))
        per_group, height, width = shape[1], shape[3], shape[4]
        tile = pixel_tile(per_group, height, width, lanes, vector_registers(target))
        channel_lanes = conv_lanes(per_group, lanes) if per_group % conv_lanes(per_group, lanes) == 0 else 0
        if tile is None or tile.cost() * channel_lanes >= 1:
            return None  # cpu.Conv2d's channel vectors are as good (one op per channel_lanes FMAs)
        try:
            schedule_grouped(sch, conv, tile, shape, target, _layout_free(func, sch, _roles(sch, conv)))
        except ScheduleError:
            if sampled(sch):
                raise
            return None
        return sch


def _pointwise_grouped(sch: Schedule, conv: BlockRV):
    """(groups, channels per group, batch var..., height, width) and the roles' vars of a grouped
    1x1 stride-1 convolution block `[n, o, h, w] += X[n, o // M * K + c, h, w] * W[o, c, 0, 0]`,
    else None."""
    roles = _roles(sch, conv)
    if roles is None or not roles.j_group or roles.plain(roles.a):
        return None
    block = sch.get(conv)
    ext = {iv.var: iv.dom.extent for iv in block.iter_vars}
    if not all(isinstance(e, IntImm) for e in ext.values()):
        return None
    out = list(roles.out.indices)
    if len(out) != 4 or out[1] is not roles.j_var or len(roles.i_vars) != 3:
        return None
    if any(ext[r].value != 1 for r in roles.r_vars[1:]):
        return None  # a 1x1 kernel: the reduce iters past the channels are unit
    x = roles.a.indices
    units = {r for r in roles.r_vars[1:]}
    if len(x) != 4 or x[0] is not out[0] or not all(_at(x[k], out[k], units) for k in (2, 3)):
        return None  # stride 1, no padding: the input read at the output's own pixel
    channels = ext[roles.j_var].value
    per_group = roles.j_group
    if channels % per_group or channels == per_group:
        return None
    return channels // per_group, per_group, roles, ext[out[2]].value, ext[out[3]].value


def _at(index, var, units) -> bool:
    """Whether `index` is `var`, or `var + r` with `r` a unit reduce iter (a 1x1 window)."""
    if index is var:
        return True
    return isinstance(index, Add) and index.a is var and index.b in units


def _block_names(sch: Schedule) -> list:
    return [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_block("root"))]


def schedule_grouped(sch: Schedule, conv: BlockRV, tile: PixelTile, shape, target, layout_free: bool) -> None:
    """Schedule the grouped pointwise convolution `conv` and its epilogue on register tile `tile`."""
    groups, per_group, roles, height, width = shape
    write_back = sch.cache_write(conv, 0, "local")
    if sch.get_consumers(write_back) and not is_output_block(sch, write_back):
        sch.compute_inline(write_back)
    names = _block_names(sch)
    epilogue = [sch.get_block(n) for n in names[names.index(sch.get(conv).name_hint) + 1 :]]

    loops = _loops_by_var(sch, conv)
    n, h, w = (loops[v] for v in (roles.out.indices[0], roles.out.indices[2], roles.out.indices[3]))
    reduce = [loops[v] for v in roles.r_vars]
    g, m = sch.split(loops[roles.j_var], [groups, per_group])
    m_0, m_1 = sch.split(m, [None, tile.mr])
    h_0, h_1 = sch.split(h, [None, tile.rows])
    w_0, w_1 = sch.split(w, [None, tile.cols])
    outer = [h_0, w_0] if tile.cols < width else [h_0]
    if tile.plane:  # one flat loop over the plane: its index (p // W) * W + p % W folds to p
        sch.reorder(n, g, m_0, h_0, w_0, *reduce, m_1, h_1, w_1)
        v_1 = sch.fuse(h_1, w_1)
    else:
        v_0, v_1 = sch.split(w_1, [None, tile.v])  # vectors within a row: a straddling one gathers
        sch.reorder(n, g, m_0, h_0, w_0, *reduce, m_1, h_1, v_0, v_1)
    anchor = outer[-1]
    for blk in epilogue:
        sch.reverse_compute_at(blk, anchor)
    init = sch.decompose_reduction(conv, reduce[0])
    sch.unroll(m_1)
    if not tile.plane:
        sch.unroll(h_1)
        sch.unroll(v_0)
    sch.vectorize(v_1)
    _vectorize_tile(sch, init, tile, anchor)
    for blk in epilogue:
        _vectorize_tile(sch, blk, tile, anchor)

    # the weight packed into panels of MR output channels: its MR broadcasts are adjacent
    w_index = [r.buffer for r in block_regions(sch.get(conv))[0]].index(roles.b.buffer)
    pack = sch.cache_read(conv, w_index, "global")
    b_pos = next(k for k, e in enumerate(roles.b.indices) if e is roles.j_var)
    mr = tile.mr
    sch.transform_layout(pack, ("write", 0),
                         lambda *i: (i[b_pos] // mr, *i[:b_pos], *i[b_pos + 1 :], i[b_pos] % mr))
    if layout_free:
        sch.annotate(pack, PREPROC_ANNOTATION, True)
    _vectorize_inner(sch, pack, 4)

    batch = sch.get(n).extent.value
    flops = batch * groups * per_group * height * width * _reduce_size(sch, conv)
    if sch.sample_categorical([True, False], decision=0 if flops >= SERIAL_FLOPS else 1):
        sch.parallel(sch.fuse(n, g, m_0))


def _reduce_size(sch: Schedule, block: BlockRV) -> int:
    out = 1
    for iv in sch.get(block).iter_vars:
        if iv.iter_type.name == "COMM_REDUCE":
            out *= iv.dom.extent.value
    return out


def _vectorize_tile(sch: Schedule, block: BlockRV, tile: PixelTile, anchor) -> None:
    """Vectorize the init's or an epilogue's row of the tile (its innermost loop, `tile.cols`
    pixels) in vectors of `tile.v`."""
    loops = sch.get_loops(block)
    own = loops[[lp.var for lp in loops].index(anchor.var) + 1 :]
    if not own:
        return
    trial = sch.copy()
    try:
        inner = own[-1]
        if tile.plane and len(own) >= 2:
            inner = trial.fuse(own[-2], own[-1])
        ext = trial.get(inner).extent.value  # static: the rule checked
        if ext > tile.v and ext % tile.v == 0:
            _, inner = trial.split(inner, [None, tile.v])
        elif ext > tile.v:
            return
        trial.vectorize(inner)
    except ScheduleError:
        return
    sch._mod, sch._trace = trial._mod, trial._trace  # noqa: SLF001 - adopt the trial's state


__all__ = ["GroupedConv", "PixelTile", "pixel_tile", "schedule_grouped"]
