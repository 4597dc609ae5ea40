"""`cpu.Attention`: scores, softmax and the weighted sum of values fused per tile of query rows.

It applies to the five blocks `topi.nn.attention` makes (and anything shaped like them):

    score[b, h, i, j] = sum_d Q[.., i, .., d] * K[.., j, .., d]     a GEMM
    max[b, h, i]      = max_j logit(score, ...)                    reductions over j and
    e[b, h, i, j]     = exp(logit - max)                           injective blocks over
    sum[b, h, i]      = sum_j e                                    (rows, keys), in any order
    p[b, h, i, j]     = e / sum
    out[b, i, h, e]   = sum_j p[b, h, i, j] * V[.., j, .., e]       a GEMM reading p

and schedules them as one loop nest over tiles of TI query rows (TI a multiple of the vector
lanes), so no score or probability matrix leaves the cache:

    for (b, h) in parallel:
        for i_0 in S / TI:
            Q_t[d, TI] = Q[tile, h, :]^T                     # the tile's queries, transposed
            score_t[j, TI]: for groups of MR keys, for d:  # register-blocked, vectors along i
                                score_t[j, i] += K[j, h, d] * Q_t[d, i]
            max, e_t[j, TI], sum, p_t[j, TI]: vectors along i (16 rows side by side), no
                                                            horizontal reductions
            for sub-tiles of MR rows: out[MR, D] += p_t[j, i] * V[j, h, :]   # cpu.Matmul's
                                                                            # micro-kernel

The score and probability tiles are stored key-major (`transform_layout`), so the row
reductions and the normalisation run on whole vectors whatever the key count (197 for
ViT): only the last group of keys and the last tile of queries are partial, and those are
peeled into loops of their own. Each head's K and V rows are read once per tile from L2.
The rule declines functions of another shape or dtype. The row tile TI, the weighted sum's
register tile `[mr, nv]` and the score kernel's group of keys are sampling instructions with
these choices as their decisions (see `graphc.tune`).

>>> from graphc import te
>>> from graphc.target import Target
>>> from graphc.topi.nn.attention import attention
>>> q, k, v = (te.placeholder((1, 64, 2, 32), name=n) for n in "qkv")
>>> func = te.create_prim_func([q, k, v, attention(q, k, v)])
>>> sch = Attention().apply(func, Target("llvm -mcpu=x86-64 -mattr=+avx2,+fma"), False)
>>> [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("T_attention_update"))]
['parallel', 'serial', 'serial', 'serial', 'serial', 'unroll', 'unroll', 'vectorized']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...tir.expr import IntImm
from ...tir.function import PrimFunc
from ...tir.schedule import BlockRV, LoopRV, Schedule
from ..base import ScheduleRule, get_block_info, normalize_prim_func
from ..base.analysis import block_realize, block_regions, uses_var
from .gemm_analysis import GemmRoles, gemm_roles
from .matmul import _dividing_rows, _loops_by_var, _vectorize_inner, sampled, tile_shape
from .utils import decompose_at_first_reduce, output_dtype, vector_lanes, vector_registers, written_buffer


class Attention(ScheduleRule):
    """Attention (GEMM, row reductions, softmax, GEMM) fused per tile of query rows."""

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | None:
        if not isinstance(func, PrimFunc) or not target.is_cpu:
            return None
        sch = Schedule(func)
        infos = normalize_prim_func(sch)
        parts = _match(sch, infos) if infos else None
        if parts is None or output_dtype(sch, infos[-1]) != "float32":
            return None
        try:
            _schedule(sch, parts, target)
        except ScheduleError:
            if sampled(sch):
                raise  # a tuner's decisions failed: the candidate fails, saying why
            return None
        return sch


def _reads(sch: Schedule, block: BlockRV) -> set:
    return {r.buffer for r in block_regions(sch.get(block))[0]}


def _gemm(sch: Schedule, block: BlockRV) -> GemmRoles | None:
    return gemm_roles(sch.get(block), block_regions(sch.get(block))[0])


def _match(sch: Schedule, infos) -> dict | None:
    """The blocks by role, when the function is a GEMM, row reductions and injective blocks over
    its result, then a GEMM reading the last of those as its broadcast operand."""
    if len(infos) < 4:
        return None
    first, last = infos[0], infos[-1]
    score_roles, out_roles = _gemm(sch, first.block_rv), _gemm(sch, last.block_rv)
    if score_roles is None or out_roles is None:
        return None
    if len(out_roles.r_vars) != 1 or len(out_roles.i_vars) != 1 or len(score_roles.i_vars) != 1:
        return None
    middle = infos[1:-1]
    probs = middle[-1]
    if not probs.is_injective() or written_buffer(sch, probs.block_rv) is not out_roles.a.buffer:
        return None
    if not all(b.is_injective() or (b.is_reduction() and b.dom_kind().endswith("R")) for b in middle):
        return None
    score = score_roles.out.buffer
    if not any(score in _reads(sch, b.block_rv) for b in middle):
        return None
    rows = [b for b in middle if b.is_injective()]  # (rows, keys) blocks: stored key-major
    reductions = [b for b in middle if not b.is_injective()]
    return {"score": first.block_rv, "score_roles": score_roles, "probs": probs.block_rv,
            "middle": [b.block_rv for b in middle], "rows": [b.block_rv for b in rows],
            "reductions": [r.block_rv for r in reductions], "out": last.block_rv, "out_roles": out_roles}


def _schedule(sch: Schedule, parts: dict, target) -> None:
    out, roles = parts["out"], parts["out_roles"]
    lanes = vector_lanes(target, "float32")
    registers = vector_registers(target)
    ivs = {iv.var: iv.dom.extent for iv in sch.get(out).iter_vars}
    head_dim = ivs[roles.j_var]
    if not isinstance(head_dim, IntImm) or head_dim.value % lanes:
        raise ScheduleError("the value head dimension does not split into whole vectors")
    # the weighted sum's register tile: MR rows by NR <= D columns, NR dividing D
    tile = tile_shape(registers, lanes, None, head_dim.value)
    nv = tile.nv
    while (head_dim.value // lanes) % nv:
        nv -= 1
    mr = tile_shape(registers, lanes, None, nv * lanes).mr if nv != tile.nv else tile.mr
    mr = 4 if mr >= 4 else mr  # a power of two, so that it divides the row tile
    row_tile = 2 * lanes if registers >= 32 else lanes  # TI query rows, vectors along them
    row_tiles = [lanes, 2 * lanes, 4 * lanes]
    row_tile = sch.sample_categorical(row_tiles, decision=row_tiles.index(row_tile))
    tiles = [[m, v] for v in range(1, 5) if (head_dim.value // lanes) % v == 0
             for m in (1, 2, 4, 8) if lanes % m == 0 and m * v + v + 1 <= registers]  # fmt: skip
    if [mr, nv] not in tiles:
        tiles.append([mr, nv])
    mr, nv = sch.sample_categorical(tiles, decision=tiles.index([mr, nv]))

    # -- the weighted sum: batch (parallel), row tiles, sub-tiles of MR rows, the micro-kernel
    write_back = sch.cache_write(out, 0, "local")
    loops = _loops_by_var(sch, out)
    batch = [loops[v] for v in roles.batch]
    i_0, i_1, i_2 = sch.split(loops[roles.i_vars[0]], [None, row_tile // mr, mr])
    e_0, e_1, e_2 = sch.split(loops[roles.j_var], [None, nv, lanes])
    j = loops[roles.r_vars[0]]
    sch.reorder(*batch, i_0, i_1, e_0, j, i_2, e_1, e_2)
    sch.reverse_compute_at(write_back, e_0)
    sch.decompose_reduction(out, j)
    sch.unroll(i_2)
    sch.unroll(e_1)
    sch.vectorize(e_2)
    _vectorize_inner(sch, write_back, lanes)

    # -- everything a row tile needs, under the row-tile loop (consumers first)
    for block in reversed(parts["middle"]):
        sch.compute_at(block, i_0)
    sch.compute_at(parts["score"], i_0)
    # score and (rows, keys) intermediates stored key-major, so that rows lie side by side in vectors
    for block in (parts["score"], *parts["rows"]):
        sch.transform_layout(block, ("write", 0), _swap_last_two)
    for block in parts["middle"]:
        _rows_side_by_side(sch, block, i_0, lanes, spatial_keys=block not in parts["reductions"])
    queries = _score_kernel(sch, parts["score"], parts["score_roles"], i_0, lanes, registers)

    par = batch[0] if len(batch) == 1 else sch.fuse(*batch)
    sch.parallel(par)
    if queries is not None:  # the tile's queries, transposed once per tile
        sch.compute_at(queries[0], i_0)
        sch.transform_layout(queries[0], ("write", 0), queries[1])
        _vectorize_inner(sch, queries[0], lanes)
    if not _divides(row_tile, ivs[roles.i_vars[0]]):
        _peel_last(sch, i_0)


def _divides(factor: int, extent) -> bool:
    return isinstance(extent, IntImm) and extent.value % factor == 0


def _swap_last_two(*idx):
    return (*idx[:-2], idx[-1], idx[-2])


def _own_loops(sch: Schedule, block: BlockRV, anchor: LoopRV) -> tuple[list, dict]:
    """The block's loops below `anchor`, and iter var -> the one of them its binding uses."""
    realize = block_realize(sch, block)
    loops = sch.get_loops(block)
    own = loops[[lp.var for lp in loops].index(anchor.var) + 1 :]
    by_iter = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        used = [lp for lp in own if uses_var(value, lp.var)]
        if len(used) == 1:
            by_iter[iv.var] = used[0]
    return own, by_iter


def _rows_side_by_side(sch: Schedule, block: BlockRV, anchor: LoopRV, lanes: int, spatial_keys: bool) -> None:
    """Loops `keys, rows (vectorized)` for a block over (rows, keys) under the row tile: a
    reduction over keys then keeps one vector of partial results per `lanes` rows."""
    own, _ = _own_loops(sch, block, anchor)
    if len(own) != 2:
        return
    rows, keys = own
    trial = sch.copy()
    try:
        trial.reorder(keys, rows)
        vec = rows
        ext = trial.get(rows).extent
        if not (isinstance(ext, IntImm) and ext.value == lanes):
            _, vec = trial.split(rows, [None, lanes])
        trial.vectorize(vec)
        if not spatial_keys:
            decompose_at_first_reduce(trial, get_block_info(trial, block))
    except ScheduleError:
        return
    sch._mod, sch._trace = trial._mod, trial._trace  # noqa: SLF001 - adopt the trial's state


def _score_kernel(sch: Schedule, score: BlockRV, roles: GemmRoles, anchor: LoopRV, lanes: int,
                  registers: int):  # fmt: skip
    """Register-block the key-major score tile: groups of MR keys (broadcasts of K) by the row
    tile (vectors of Q^T), reduced over d. Returns the query-transposing block and its layout."""
    _, loops = _own_loops(sch, score, anchor)
    if roles.j_var not in loops or roles.i_vars[0] not in loops or any(v not in loops for v in roles.r_vars):
        raise ScheduleError("the score block's loops are not its own")
    rows, keys = loops[roles.i_vars[0]], loops[roles.j_var]
    red = [loops[v] for v in roles.r_vars]
    row_ext = sch.get(rows).extent.value
    nvq = max(1, row_ext // lanes)
    key_ext = sch.get(keys).extent
    static_keys = key_ext.value if isinstance(key_ext, IntImm) else None
    most = max(1, min(12, (registers - nvq - 1) // nvq))
    mr = _dividing_rows(most, static_keys)
    groups = list(range(1, most + 1)) if mr <= most else [*range(1, most + 1), mr]
    mr = sch.sample_categorical(groups, decision=groups.index(mr))
    k_0, k_1 = sch.split(keys, [None, mr])
    r_0, r_1 = sch.split(rows, [None, lanes]) if nvq > 1 else (None, rows)
    sch.reorder(k_0, *red, k_1, *([r_0] if r_0 is not None else []), r_1)
    sch.decompose_reduction(score, red[0])
    sch.unroll(k_1)
    if r_0 is not None:
        sch.unroll(r_0)
    sch.vectorize(r_1)
    a_index = [r.buffer for r in block_regions(sch.get(score))[0]].index(roles.a.buffer)
    queries = sch.cache_read(score, a_index, "global")
    i_pos = next(k for k, e in enumerate(roles.a.indices) if e is roles.i_vars[0])
    if not _divides(mr, key_ext):
        _peel_last(sch, k_0)

    def transposed(*idx):  # Q[.., i, .., d] -> Q_t[.., d, i]: i last
        return (*[x for k, x in enumerate(idx) if k != i_pos], idx[i_pos])

    return queries, transposed


def _peel_last(sch: Schedule, loop: LoopRV) -> None:
    """Give the last iteration of `loop` (a partial tile, when one is) a loop of its own."""
    try:
        ext = sch.get(loop).extent
        if isinstance(ext, IntImm) and ext.value < 2:
            return
        trial = sch.copy()
        trial.loop_partition(loop, [ext - 1, None])
    except ScheduleError:
        return
    sch._mod, sch._trace = trial._mod, trial._trace  # noqa: SLF001


__all__ = ["Attention"]
