"""`cpu.Depthwise`: depthwise convolutions, one channel's plane at a time, a tile of rows in registers.

A depthwise convolution (`out[n, c, h, w] += X[n, c, h*s + kh, w*s + kw] * W[c, 0, kh, kw]`,
ShuffleNet's and MobileNet's 3x3, stride 1 or 2) does 9 multiply-adds per output and reads each
input a few times: it is bound by loads and by what runs around it. The schedule keeps a
channel's work together:

    for (n, c) in parallel:                     # one channel's plane (serial under 128 K MACs)
        pad[c] = X[n, c] padded                 # a local plane, vectorized (masked at the border)
        for (h_0, w_0) in tiles:                # R rows of P pixels
            acc[R, P] = 0                       # R * P / V vectors of V pixels: registers
            for (kh, kw) in unroll(KH, KW):     # a broadcast of W, R * P / V loads of the plane
                for (h_1, v_0) in unroll(R, P / V):
                    for v_1 in vectorized(V):
                        acc[h_1, w] += pad[h*s + kh, w*s + kw] * W[c, 0, kh, kw]
            out[n, c, h tile, w tile] = epilogue(acc)   # batch norm, ReLU, from the registers

With stride 2 the plane's columns are stored even ones first, then odd ones
(`pad[h, w % 2, w // 2]`): the row read `w*2 + kw` is then contiguous again (planes up to 64
columns: the copy is scalar; wider ones, and wider strides, stay with `cpu.Reduction`). Before this rule
`cpu.Window` vectorized the rows in 4-pixel vectors (28 = 7 x 4), materialized the padding and
the whole convolution in global buffers and ran the epilogue as a third parallel loop; it
declined stride 2, left to `cpu.Reduction`. (In the default rules this one comes before
`cpu.Window`, which keeps pooling and narrow groups.)

>>> from graphc import te, topi
>>> from graphc.target import Target
>>> x = te.placeholder((1, 136, 28, 28), name="x"); w = te.placeholder((136, 1, 3, 3), name="w")
>>> func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, padding=1, groups=136)])
>>> sch = Depthwise().apply(func, Target("llvm -mcpu=x86-64 -mattr=+avx2,+avx512f"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("conv2d_update"))][-2:]
['unroll', 'vectorized']
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ScheduleError
from ...tir.analysis.block_access import affine_difference
from ...tir.analysis.var_use import uses_var
from ...tir.expr import IntImm
from ...tir.function import PrimFunc
from ...tir.functor import substitute
from ...tir.schedule import BlockRV, Schedule
from ..base import ScheduleRule, try_inline
from ..base.analysis import is_output_block
from .matmul import _loops_by_var, sampled
from .utils import one_reduction, output_dtype, vector_lanes, written_buffer

# below this many multiply-adds a depthwise convolution runs on one thread: waking the pool
# costs ~5 us, two threads gain once a kernel takes over ~10 us (ShuffleNet's 544 channels at
# 7x7, 0.24 M, took 12 us serial; 136 at 28 -> 14 with its scalar deinterleaving copy, 31 us)
SERIAL_MACS = 1 << 17
# a stride-2 plane's rows are deinterleaved by a scalar copy: up to 58 columns (ShuffleNet's 56
# plus padding) it pays (MobileNetV2's 192 channels at 28 -> 14: 0.054 -> 0.021 ms, 144 at 56:
# even), at 114 it does not (96 channels at 112 -> 56: 0.121 ms with cpu.Reduction, 0.569 here)
MAX_STRIDED_ROW = 64
MAX_VECTORS = 8  # the tile's accumulators: loads, not FMAs, bound it; 8 leave room for the rows


@dataclass(frozen=True)
class RowTile:
    """`rows` output rows of `cols` pixels, in vectors of `v` pixels."""

    rows: int
    cols: int
    v: int


def row_tile(height: int, width: int, lanes: int) -> RowTile:
    """The tile for an `height` x `width` output plane: vectors of the largest `v <= lanes`
    dividing the width (at least 4 unless the row is shorter), `cols` the whole row unless it
    takes more than `MAX_VECTORS` vectors, then as many rows as keep the vectors within it.

    >>> row_tile(28, 28, 16), row_tile(14, 14, 16)
    (RowTile(rows=4, cols=28, v=14), RowTile(rows=7, cols=14, v=14))
    >>> row_tile(7, 7, 16), row_tile(56, 56, 8)
    (RowTile(rows=7, cols=7, v=7), RowTile(rows=1, cols=56, v=8))
    """
    divisors = [d for d in range(1, min(lanes, width) + 1) if width % d == 0]
    v = max(divisors)
    vectors = width // v
    cols = width
    while vectors > MAX_VECTORS:
        k = next(k for k in range(2, vectors + 1) if vectors % k == 0)
        vectors //= k
        cols //= k
    rows = max(r for r in range(1, height + 1) if height % r == 0 and r * vectors <= MAX_VECTORS)
    return RowTile(rows, cols, v)


class Depthwise(ScheduleRule):
    """Depthwise convolutions with fused epilogues (see the module docstring)."""

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        found = one_reduction(func, target)
        if found is None:
            return None
        sch, infos, reduction = found
        if output_dtype(sch, reduction) not in ("float32", "float64"):
            return None
        conv = reduction.block_rv
        found = _depthwise(sch, conv)
        if found is None:
            return None
        x_buf = found[0]
        keep = {i.name for i in infos if not i.reduction_block and written_buffer(sch, i.block_rv) is x_buf}
        infos = try_inline(sch, keep=keep)
        if not infos or any(not i.is_injective() for i in infos if not i.reduction_block):
            return None
        names = [i.name for i in infos]
        conv = sch.get_block(reduction.name)
        if names.index(reduction.name) > len(keep):
            return None  # something else before the convolution
        found = _depthwise(sch, conv)
        if found is None:
            return None
        pad = sch.get_block(next(iter(keep))) if keep else None
        try:
            schedule_depthwise(sch, conv, pad, found, target)
        except ScheduleError:
            if sampled(sch):
                raise
            return None
        return sch


def _depthwise(sch: Schedule, conv: BlockRV):
    """(input buffer, weight buffer, (n, c, h, w) iter vars, reduce vars, stride) of a depthwise
    convolution block, else None: the output indexed `[n, c, h, w]`, the input read at the
    output's channel (`c`, or `c // multiplier`), a row `h*s + ...` and a column `w*s + kw*d`, the
    weight at `c` and the reduce iters only."""
    block = sch.get(conv)
    store = block.body
    if block.init is None or not hasattr(store, "indices") or len(store.indices) != 4:
        return None
    ext = {iv.var: iv.dom.extent for iv in block.iter_vars}
    if not all(isinstance(e, IntImm) for e in ext.values()):
        return None
    out = list(store.indices)
    reduce = [iv.var for iv in block.iter_vars if iv.iter_type.name == "COMM_REDUCE"]
    if len(reduce) + 4 != len(block.iter_vars) or not reduce:
        return None
    n, c, h, w = out
    loads = _product_loads(store, block)
    if loads is None:
        return None
    x, wt = loads
    if len(x.indices) != 4 or len(wt.indices) != 4:
        x, wt = wt, x
    if len(x.indices) != 4 or len(wt.indices) != 4:
        return None
    if x.indices[0] is not n:
        return None
    chan = x.indices[1]
    if not uses_var(chan, c) or any(uses_var(chan, v) for v in (n, h, w)):
        return None
    if any(uses_var(chan, r) and ext[r].value != 1 for r in reduce):
        return None  # a grouped convolution of several channels a group: not depthwise
    row, col = x.indices[2], x.indices[3]
    if uses_var(row, w) or uses_var(col, h) or not uses_var(col, w):
        return None
    if any(uses_var(e, v) for e in wt.indices for v in (n, h, w)):
        return None
    if not any(uses_var(e, c) for e in wt.indices):
        return None
    stride = affine_difference(substitute(col, {w: w + 1}), col)
    if not isinstance(stride, int) or stride < 1 or stride > 2:
        return None  # wider strides keep cpu.Reduction's gathers
    if stride == 2 and int(x.buffer.shape[3]) > MAX_STRIDED_ROW:
        return None  # the scalar deinterleaving copy would cost more than the gathers it saves
    return x.buffer, wt.buffer, (n, c, h, w), reduce, stride


def _product_loads(store, block):
    from .gemm_analysis import _factors_of

    found = _factors_of(block)
    return None if found is None else (found[1], found[2])


def schedule_depthwise(sch: Schedule, conv: BlockRV, pad: BlockRV | None, found, target) -> None:
    """Schedule depthwise convolution `conv` (`_depthwise`'s `found`), its padding `pad` and its
    epilogue as the module docstring shows."""
    x_buf, _, (n_var, c_var, h_var, w_var), r_vars, stride = found
    lanes = vector_lanes(target, x_buf.dtype)
    ext = {iv.var: iv.dom.extent.value for iv in sch.get(conv).iter_vars}
    height, width = ext[h_var], ext[w_var]
    tile = row_tile(height, width, lanes)
    if tile.v < min(4, width) or tile.v < 2:
        raise ScheduleError("no vector of 4 or more pixels divides the output row (cpu.Window's)")

    write_back = sch.cache_write(conv, 0, "local")
    if sch.get_consumers(write_back) and not is_output_block(sch, write_back):
        sch.compute_inline(write_back)
    names = [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_block("root"))]
    epilogue = [sch.get_block(nm) for nm in names[names.index(sch.get(conv).name_hint) + 1 :]]

    loops = _loops_by_var(sch, conv)
    n, c, h, w = (loops[v] for v in (n_var, c_var, h_var, w_var))
    reduce = [loops[v] for v in r_vars]
    h_0, h_1 = sch.split(h, [None, tile.rows])
    w_0, w_1 = sch.split(w, [None, tile.cols])
    v_0, v_1 = sch.split(w_1, [None, tile.v])
    sch.reorder(n, c, h_0, w_0, *reduce, h_1, v_0, v_1)
    anchor = w_0 if tile.cols < width else h_0
    for blk in epilogue:
        sch.reverse_compute_at(blk, anchor)
    init = sch.decompose_reduction(conv, reduce[0])
    for lp in (*reduce, h_1, v_0):
        sch.unroll(lp)
    sch.vectorize(v_1)
    from .grouped_conv import PixelTile, _vectorize_tile

    rows = PixelTile(1, tile.rows, tile.cols, tile.v)
    _vectorize_tile(sch, init, rows, anchor)
    for blk in epilogue:
        _vectorize_tile(sch, blk, rows, anchor)

    if pad is not None:
        if stride == 2:  # even columns, then odd ones: a stride-2 row read is contiguous
            sch.transform_layout(pad, ("write", 0), lambda a, b, i, j: (a, b, i, j % 2, j // 2))
        sch.compute_at(pad, c)
        sch.set_scope(pad, 0, "local")
        if stride != 2:  # (a deinterleaving copy's stores scatter: scalar code is faster)
            _vectorize_pad(sch, pad, lanes)

    macs = ext[n_var] * ext[c_var] * height * width
    for r in r_vars:
        macs *= ext[r]
    if sch.sample_categorical([True, False], decision=0 if macs >= SERIAL_MACS else 1):
        sch.parallel(sch.fuse(n, c))


def _vectorize_pad(sch: Schedule, pad: BlockRV, lanes: int) -> None:
    """Vectorize the padded plane's rows (masked loads at the border) by the largest divisor of
    the row up to `lanes`, or by `lanes` with a scalar tail when that is under 4."""
    loops = sch.get_loops(pad)
    inner = loops[-1]
    ext = sch.get(inner).extent
    if not isinstance(ext, IntImm) or ext.value < 2:
        return
    v = max(d for d in range(1, min(lanes, ext.value) + 1) if ext.value % d == 0)
    trial = sch.copy()
    try:
        if v >= 4 and v < ext.value:
            _, inner = trial.split(inner, [None, v])
        trial.vectorize(inner)
    except ScheduleError:
        return
    sch._mod, sch._trace = trial._mod, trial._trace  # noqa: SLF001 - adopt the trial's state


__all__ = ["Depthwise", "RowTile", "row_tile", "schedule_depthwise"]
