"""The GPU rules' decisions as sampling instructions: what `graphc.tune` searches on a GPU target.

Each rule asks its schedule for its decisions (`sch.sample_categorical`, see
`graphc.tir.schedule.sampling`) with today's choice as the decision, so the DefaultSampler
gives exactly the untuned schedule and a tuner's sampler a variant:

- `Matmul`'s SIMT tiles (`sample_matmul_config`): the thread block `[threads_y, threads_x]`,
  the register tile of a thread `[tile_i, tile_j]` (at most 32 accumulators), the k tile
  staged in shared memory per step, and the vector width of the copies into shared memory;
- its tensor-core variant (`sample_tensor_core_config`): warps per block, fragments per warp
  and the k tile, one categorical of the combinations the product's shape takes;
- the threads of one row (`sample_threads`): `GEMV`, `LowBatchGEMV`, `Reduction`,
  `GeneralReduction` and `Fallback`.

Every candidate respects the target's limits, so no candidate over a limit is ever built or
measured: at most `max_num_threads` threads per block, a multiple of the warp size, shared
tiles within `max_shared_memory_per_block` (the k tile is sampled after the block and register
tiles, among those that fit). The default is always a candidate (appended when a rule's config
is outside the usual choices).

>>> from graphc.target import Target
>>> thread_candidates(Target("opencl"), 256), thread_candidates(Target("cuda"), 128)
([32, 64, 128, 256], [32, 64, 128, 256, 512, 1024])
>>> block_shapes(Target("opencl"))[:4]
[[4, 8], [4, 16], [4, 32], [8, 8]]
"""

from __future__ import annotations

import dataclasses

from ...errors import ScheduleError
from .utils import max_threads, warp_size

THREAD_COUNTS = (32, 64, 128, 256, 512, 1024)
_BLOCK_SIDES_Y = (4, 8, 16, 32)
_BLOCK_SIDES_X = (8, 16, 32)
_REGISTER_SIDES = (1, 2, 4, 8)
_MAX_ACCUMULATORS = 32  # a thread's register tile, tile_i * tile_j
_K_TILES = (4, 8, 16, 32)
_VECTORS = (1, 2, 4)
_TC_SIDES = (1, 2, 4)  # fragments per warp along the rows / the columns
_TC_WARPS = (1, 2, 4)  # warps along the rows / the columns (not a single warp per block)


def _choose(sch, candidates: list, default):
    """`sch.sample_categorical(candidates)` with `default` as the decision (appended when it is
    not among them); no instruction when there is nothing to choose."""
    candidates = list(candidates)
    if default not in candidates:
        candidates.append(default)
    if len(candidates) == 1:
        return default
    return sch.sample_categorical(candidates, decision=candidates.index(default))


def thread_candidates(target, default: int) -> list:
    """Threads per block a rule may use on `target`: powers of two from a warp (32) up to the
    limit, multiples of the warp size; `default` among them."""
    limit, warp = max_threads(target), warp_size(target)
    out = [t for t in THREAD_COUNTS if t <= limit and t % warp == 0]
    return out if default in out else [*out, default]


def sample_threads(sch, target, default: int) -> int:
    """The threads per block of a row / element rule (`default`: today's choice)."""
    return _choose(sch, thread_candidates(target, default), default)


def block_shapes(target) -> list:
    """Thread blocks `[threads_y, threads_x]` a tiled product may use on `target`."""
    limit, warp = max_threads(target), warp_size(target)
    return [[ty, tx] for ty in _BLOCK_SIDES_Y for tx in _BLOCK_SIDES_X
            if ty * tx <= limit and (ty * tx) % warp == 0]


def matmul_shared_bytes(threads_y: int, threads_x: int, tile_i: int, tile_j: int, k_tile: int) -> int:
    """The shared memory of the SIMT tiles (float32 A and B tiles, as `Matmul` counts it)."""
    return 4 * k_tile * (threads_y * tile_i + threads_x * tile_j)


def sample_matmul_config(sch, cfg, target):
    """`cfg` (a `MatmulConfig`, today's SIMT tiles) with its block shape, register tile, k tile
    and vector width taken by the schedule's sampler (module docstring)."""
    limit = target.max_shared_memory_per_block
    ty, tx = _choose(sch, block_shapes(target), [cfg.threads_y, cfg.threads_x])
    tiles = [[ti, tj] for ti in _REGISTER_SIDES for tj in _REGISTER_SIDES if ti * tj <= _MAX_ACCUMULATORS
             and matmul_shared_bytes(ty, tx, ti, tj, _K_TILES[0]) <= limit]  # some k tile fits
    ti, tj = _choose(sch, tiles, [cfg.tile_i, cfg.tile_j])
    k_tiles = [k for k in _K_TILES if matmul_shared_bytes(ty, tx, ti, tj, k) <= limit]
    if [ty, tx, ti, tj] == [cfg.threads_y, cfg.threads_x, cfg.tile_i, cfg.tile_j]:
        default_k = cfg.k_tile  # the rule's own tiles (which it checked against the limit)
    elif not k_tiles:
        raise ScheduleError(f"no k tile fits {limit} bytes of shared memory with a {ty}x{tx} thread block "
                            f"and {ti}x{tj} register tiles")
    else:
        default_k = cfg.k_tile if cfg.k_tile in k_tiles else k_tiles[-1]
    k = _choose(sch, k_tiles, default_k)
    vector = _choose(sch, list(_VECTORS), cfg.vector)
    return dataclasses.replace(cfg, threads_y=ty, threads_x=tx, tile_i=ti, tile_j=tj, k_tile=k, vector=vector)


def sample_tensor_core_config(sch, cfg, roles, target):
    """`cfg` (the tensor-core config the rule picked, which fits) with warps per block,
    fragments per warp and k tile taken by the sampler, among the combinations that fit the
    product's shape, the threads and the shared memory (`tensor_core.fits`)."""
    from .tensor_core import TILE, fits

    k_extent = roles.k.extent
    k_tiles = [k for k in (TILE, 2 * TILE, 4 * TILE) if k_extent is not None and k_extent % k == 0]
    combos = []
    for wi in _TC_WARPS:
        for wj in _TC_WARPS:
            if wi * wj == 1 or 32 * wi * wj > max_threads(target):
                continue
            for fi in _TC_SIDES:
                for fj in _TC_SIDES:
                    for k in k_tiles:
                        trial = dataclasses.replace(cfg, warps_i=wi, warps_j=wj, frags_i=fi, frags_j=fj,
                                                    k_tile=k)
                        if fits(sch, roles, trial, target):
                            combos.append([wi, wj, fi, fj, k])
    default = [cfg.warps_i, cfg.warps_j, cfg.frags_i, cfg.frags_j, cfg.k_tile]
    wi, wj, fi, fj, k = _choose(sch, combos, default)
    return dataclasses.replace(cfg, warps_i=wi, warps_j=wj, frags_i=fi, frags_j=fj, k_tile=k)


__all__ = ["block_shapes", "matmul_shared_bytes", "sample_matmul_config", "sample_tensor_core_config",
           "sample_threads", "thread_candidates"]
