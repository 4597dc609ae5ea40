"""Functions with several matrix products (attention): each product tiled as its own kernel.

`Matmul` proper takes one product and its epilogue. A fused attention function holds two
products (the scores `Q K^T` and the weighted sum `P V`) with a softmax between them: row
reductions (max, sum) and elementwise blocks that cannot all be inlined (the exponentials feed
both the sum and the product). `schedule_products` gives such a function one kernel per block
of its root scope:

- each matrix product (`match_matmul`, neither `i` nor `j` of extent 1) gets `Matmul`'s
  tensor-core schedule where it fits (`tensor_core.py`), else its shared-memory tiled schedule
  (`tile_matmul`), staging only the operands it reads (the
  softmax's output is also read by other blocks, which keep reading global memory);
- each row reduction (`S+R+`) gets `Reduction`'s schedule, a thread block per row;
- each injective block gets a thread per element (`bind_spatial`).

It applies when at least two blocks are matrix products and every other block is one of
those kinds; a product that `tile_matmul` refuses makes it decline (`Fallback` then schedules
the function block by block with the same helpers). A symbolic sequence length, which makes
both of the scores' axes symbolic, is tiled too: the row tiles go to blockIdx.y.

>>> from graphc import te
>>> from graphc.target import Target
>>> Q = te.placeholder((2, 64, 32), name="Q"); K = te.placeholder((2, 64, 32), name="K")
>>> d = te.reduce_axis((0, 32), "d"); j = te.reduce_axis((0, 64), "j")
>>> S = te.compute((2, 64, 64), lambda b, i, k: te.sum(Q[b, i, d] * K[b, k, d], axis=d), name="S")
>>> O = te.compute((2, 64, 32), lambda b, i, e: te.sum(S[b, i, j] * K[b, j, e], axis=j), name="O")
>>> sch = schedule_products(te.create_prim_func([Q, K, O]), Target("cuda"), MatmulConfig())
>>> sorted(b.name for b in sch.get_child_blocks(sch.get_block("root")) if "_shared" in b.name)
['K_shared', 'K_shared_1', 'Q_shared', 'S_shared']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from ..base import get_block_info, try_inline
from .decisions import sample_matmul_config, sample_tensor_core_config, sample_threads
from .matmul import MatmulConfig, match_matmul, tile_matmul
from .reduction import schedule_rows
from .utils import bind_spatial, max_threads


def _kind(sch: Schedule, info) -> str | None:
    roles = match_matmul(sch, info)
    if roles is not None and all(it.extent != 1 for it in (*roles.i, *roles.j)):
        return "product"
    kinds = info.dom_kind()
    if info.is_reduction() and kinds.rstrip("R") and set(kinds.rstrip("R")) == {"S"}:
        return "rows"
    if info.is_injective() and info.iters:
        return "injective"
    return None


def schedule_products(func: PrimFunc, target, cfg: MatmulConfig, threads: int = 256) -> Schedule | None:
    """The schedule of the module docstring, or None when the function is not of that form."""
    if cfg.threads_x * cfg.threads_y > max_threads(target):
        return None
    threads = min(threads, max_threads(target))
    sch = Schedule(func)
    try:
        infos = try_inline(sch)
        if not infos:
            return None
        kinds = [_kind(sch, info) for info in infos]
    except ScheduleError:
        return None
    if None in kinds or kinds.count("product") < 2:
        return None
    if set(kinds) - {"product"}:  # the rows' threads: a tuner's decision (decisions.py)
        threads = sample_threads(sch, target, threads)
    order = sorted(range(len(infos)), key=lambda n: kinds[n] != "product")  # products first: their
    try:  # reverse_compute_at needs the other blocks' regions still in their simple form
        for n in order:
            now = get_block_info(sch, sch.get_block(infos[n].name))
            if kinds[n] == "product":
                sch = _tile_product(sch, now, target, cfg)
            elif kinds[n] == "rows":
                schedule_rows(sch, [now], len(now.dom_kind().rstrip("R")), threads)
            else:
                bind_spatial(sch, now, threads)
    except ScheduleError:
        return None
    return sch


def _tile_product(sch: Schedule, info, target, cfg: MatmulConfig) -> Schedule:
    """`sch` with one product tiled: on tensor cores where they fit (tensor_core.py), else the
    SIMT tiles."""
    from .tensor_core import fits, tensor_core_config, tensor_core_target, tile_tensor_core

    roles = match_matmul(sch, info)
    if cfg.tensor_cores == "always" or (cfg.tensor_cores == "auto" and tensor_core_target(target)):
        tc_cfg = tensor_core_config(cfg, roles)
        if fits(sch, roles, tc_cfg, target):
            tc_cfg = sample_tensor_core_config(sch, tc_cfg, roles, target)  # a tuner's decisions
            trial = sch.copy()
            try:
                tile_tensor_core(trial, [info], roles, tc_cfg)
                return trial
            except ScheduleError:
                pass
    tile_matmul(sch, [info], roles, sample_matmul_config(sch, cfg, target))
    return sch


__all__ = ["schedule_products"]
