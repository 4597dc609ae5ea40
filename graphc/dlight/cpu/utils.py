"""CPU scheduling helpers: vector width from the target, contiguity checks, parallel and vector loops.

The CPU rules share three moves: split a block's innermost spatial loop by the vector
lanes and vectorize it (when the loop walks the output contiguously), fuse the outer
spatial loops into one parallel loop (when the function does enough work to pay for the
thread pool), and hoist a reduction's init out of its reduce loops.

>>> from graphc.target import Target
>>> vector_lanes(Target("llvm -mcpu=x86-64 -mattr=+avx2"), "float32")
8
>>> vector_lanes(Target("llvm -mcpu=x86-64 -mattr=+avx512f"), "float32")
16
"""

from __future__ import annotations

import functools
import os

from ...errors import ScheduleError
from ...ir import DataType
from ...tir.analysis.block_access import to_affine
from ...tir.function import PrimFunc
from ...tir.schedule import BlockRV, LoopRV, Schedule
from ..base import normalize_prim_func
from ..base.analysis import BlockInfo, block_realize, block_regions, get_block_info, uses_var

# Below this many loop iterations (over all loops of a block) a block stays serial: the
# thread pool's wake-up costs more than the work.
PARALLEL_MIN_WORK = 16384
# Fuse outer spatial loops until the parallel loop has at least this many iterations.
PARALLEL_MIN_EXTENT = 64
# A vectorized loop covers up to this many registers. In a reduction that accumulates
# across the vector loop (a column sum, a matmul's `i, k, j` order) that gives as many
# independent accumulator chains, which hides the FP add latency (measured 1.5-2x over one
# register); for elementwise loops it is neutral. (Before vector code generation, LLVM fully
# unrolled a one-register loop and vectorized the loop around it with gathers, 2-4x slower.)
VECTOR_UNROLL = 4

_AVX512_CPUS = ("avx512", "skylake-avx512", "cascadelake", "cooperlake", "icelake", "tigerlake",
                "sapphirerapids", "graniterapids", "emeraldrapids", "rocketlake", "znver4", "znver5",
                "knl", "knm", "cannonlake")  # fmt: skip
_AVX2_CPUS = ("haswell", "broadwell", "skylake", "kabylake", "coffeelake", "alderlake", "raptorlake",
              "znver1", "znver2", "znver3", "x86-64-v3", "bdver4")  # fmt: skip


def vector_bits(target) -> int:
    """The SIMD register width in bits the target's features (-mattr, else -mcpu) give."""
    mattr = set(target.mattr)
    if mattr:
        if "+avx512f" in mattr:
            return 512
        if "+avx" in mattr or "+avx2" in mattr:
            return 256
        if mattr & {"+sse", "+sse2", "+neon", "+simd128", "+altivec"}:
            return 128
    mcpu = target.mcpu.lower()
    if mcpu.startswith(_AVX512_CPUS) or mcpu == "x86-64-v4":
        return 512
    if mcpu.startswith(_AVX2_CPUS):
        return 256
    return 128


def vector_registers(target) -> int:
    """How many SIMD registers the target has: 32 with AVX-512 (zmm0-31) and on AArch64, 16 with
    AVX/AVX2 or SSE on x86-64.

    >>> from graphc.target import Target
    >>> avx512, avx2 = Target("llvm -mcpu=x86-64 -mattr=+avx512f"), Target("llvm -mcpu=haswell")
    >>> vector_registers(avx512), vector_registers(avx2)
    (32, 16)
    """
    if vector_bits(target) == 512 or target.triple.startswith(("aarch64", "arm64")):
        return 32
    return 16


def num_cores(target) -> int:
    """The cores parallel loops will share: the target's `-num-cores`, else the cores this process
    may run on."""
    cores = target.options.get("num-cores")
    if cores:
        return int(cores)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_DEFAULT_CACHES = {1: 32 << 10, 2: 1 << 20, 3: 8 << 20}


@functools.lru_cache(maxsize=1)
def _host_caches() -> dict:
    """{level: bytes} of the host's data/unified caches, read from Linux's sysfs."""
    found = {}
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return dict(_DEFAULT_CACHES)
    for entry in entries:
        try:
            with open(f"{root}/{entry}/level") as f:
                level = int(f.read())
            with open(f"{root}/{entry}/type") as f:
                kind = f.read().strip()
            with open(f"{root}/{entry}/size") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
        found[level] = int(text.rstrip("KMG")) * scale
    return {**_DEFAULT_CACHES, **found}


def cache_bytes(target, level: int) -> int:
    """The size of the level-`level` data cache (per core for L1/L2): read from the machine when
    `target` is the host CPU, else a common size (32 KiB, 1 MiB, 8 MiB)."""
    from ...target.target import host_cpu

    if "mcpu" not in target.options or target.options["mcpu"] == host_cpu()[0]:
        return _host_caches().get(level, _DEFAULT_CACHES.get(level, 1 << 20))
    return _DEFAULT_CACHES.get(level, 1 << 20)


def vector_lanes(target, dtype: str) -> int:
    """How many `dtype` elements one vector register holds on `target` (at least 1)."""
    bits = DataType(dtype).bits * DataType(dtype).lanes
    return max(1, vector_bits(target) // max(bits, 8))


def one_reduction(func, target) -> tuple | None:
    """(schedule, block infos, the reduction's info) of a CPU PrimFunc with exactly one
    reduction block, its blocks normalized; None for anything else (the rules' first test)."""
    if not isinstance(func, PrimFunc) or not target.is_cpu:
        return None
    sch = Schedule(func)
    infos = normalize_prim_func(sch)
    if not infos:
        return None
    reductions = [i for i in infos if i.reduction_block]
    if len(reductions) != 1:
        return None
    return sch, infos, reductions[0]


def written_buffer(sch: Schedule, block: BlockRV):
    """The one buffer `block` writes (None when it writes several)."""
    writes = block_regions(sch.get(block))[1]
    return writes[0].buffer if len(writes) == 1 else None


def output_dtype(sch: Schedule, info: BlockInfo) -> str:
    _, writes = block_regions(sch.get(info.block_rv))
    return writes[0].buffer.dtype if writes else "float32"


def write_contiguous(sch: Schedule, info: BlockInfo, loop_var) -> bool:
    """Whether loop `loop_var` walks the block's output buffer(s) with stride 1 in the last axis."""
    realize = block_realize(sch, info.block_rv)
    driven = []
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if uses_var(value, loop_var):
            form = to_affine(value)
            if form is None or form[0].get(loop_var) != 1:
                return False
            driven.append(iv.var)
    if len(driven) != 1:
        return False
    (var,) = driven
    _, writes = block_regions(realize.block)
    for region in writes:
        *outer, last = [r.min for r in region.region] or [None]
        if last is None or any(uses_var(e, var) for e in outer):
            return False
        form = to_affine(last)
        if form is None or form[0].get(var) != 1:
            return False
    return bool(writes)


def enough_work(info: BlockInfo) -> bool:
    """Whether a block does enough work to run in parallel (symbolic sizes count as large)."""
    work = info.total_work()
    return work is None or work >= PARALLEL_MIN_WORK


def vector_factor(extent: int | None, lanes: int, unroll: int = 1) -> int | None:
    """The extent of the vectorized loop for a loop of `extent` iterations, or None.

    Prefers `lanes * unroll` (several registers per step), then smaller powers of two down
    to `lanes`, whichever divides `extent`; a long loop none divides gets the largest with
    a predicated tail; a loop shorter than `lanes` (or short and not divisible) gets None.

    >>> vector_factor(1024, 16, 4), vector_factor(32, 16, 4), vector_factor(100, 16, 4), vector_factor(8, 16)
    (64, 32, 16, None)
    """
    if lanes <= 1:
        return None
    factors = [lanes * u for u in (8, 4, 2, 1) if u <= unroll]
    if extent is None:
        return factors[0]
    for f in factors:
        if extent % f == 0 and f <= extent:
            return f
    for f in factors:
        if extent >= 4 * f:
            return f
    return None


def split_for_vector(sch: Schedule, loop: LoopRV, extent, lanes: int, unroll: int = 1) -> LoopRV | None:
    """Split `loop` so its inner part has `vector_factor(...)` iterations; returns the inner loop.

    A loop already that long is returned as is; a short loop the lanes do not divide is
    left alone (None); longer ones get a predicated tail.
    """
    factor = vector_factor(extent, lanes, unroll)
    if factor is None:
        return None
    if extent is not None and extent == factor:
        return loop
    _, inner = sch.split(loop, factors=[None, factor])
    return inner


def parallelize_outer(sch: Schedule, loops: list, min_extent: int = PARALLEL_MIN_EXTENT) -> LoopRV | None:
    """Fuse the leading `loops` (spatial, perfectly nested) until the fused extent reaches
    `min_extent` (enough to share among threads), and make the result parallel. Returns it, or None."""
    if not loops:
        return None
    chosen, extent = [], 1
    for it in loops:
        chosen.append(it)
        if it.extent is None:
            extent = None
            break
        extent *= it.extent
        if extent >= min_extent:
            break
    if extent is not None and extent < 2:
        return None
    loop = chosen[0].loop_rv if len(chosen) == 1 else sch.fuse(*[it.loop_rv for it in chosen])
    sch.parallel(loop)
    return loop


# the tuning candidates of the sampled choices below (sampling instructions, see graphc.tune)
PARALLEL_EXTENTS = [None, 1, 16, PARALLEL_MIN_EXTENT, 256, 4096]
VECTOR_UNROLLS = [1, 2, 4, 8]


def sample_parallel_extent(sch: Schedule, parallel: bool) -> int | None:
    """How far to fuse outer loops into the parallel loop (`parallelize_outer`'s `min_extent`),
    or None to stay serial; by default `PARALLEL_MIN_EXTENT` when `parallel` else None."""
    default = PARALLEL_MIN_EXTENT if parallel else None
    return sch.sample_categorical(PARALLEL_EXTENTS, decision=PARALLEL_EXTENTS.index(default))


def sample_vector_unroll(sch: Schedule, unroll: int) -> int:
    """How many vector registers a vectorized loop covers per step (`vector_factor`'s `unroll`);
    by default `unroll`."""
    choices = VECTOR_UNROLLS if unroll in VECTOR_UNROLLS else [*VECTOR_UNROLLS, unroll]
    return sch.sample_categorical(choices, decision=choices.index(unroll))


def leading_spatial(info: BlockInfo, stop_var=None) -> list:
    """The block's outermost loops up to its first non-spatial loop (or loop `stop_var`)."""
    out = []
    for it in info.iters:
        if it.kind != "S" or it.var is stop_var:
            break
        out.append(it)
    return out


def decompose_at_first_reduce(sch: Schedule, info: BlockInfo) -> None:
    """Hoist a reduction block's init before its first reduce loop (no-op when that fails)."""
    info = get_block_info(sch, info.block_rv)
    first = next((it for it in info.iters if it.kind == "R"), None)
    if first is None or sch.get(info.block_rv).init is None:
        return
    try:
        sch.decompose_reduction(info.block_rv, first.loop_rv)
    except ScheduleError:
        pass


__all__ = [
    "cache_bytes",
    "VECTOR_UNROLL",
    "PARALLEL_MIN_EXTENT",
    "PARALLEL_MIN_WORK",
    "decompose_at_first_reduce",
    "enough_work",
    "leading_spatial",
    "num_cores",
    "output_dtype",
    "parallelize_outer",
    "PARALLEL_EXTENTS",
    "sample_parallel_extent",
    "sample_vector_unroll",
    "VECTOR_UNROLLS",
    "split_for_vector",
    "vector_factor",
    "vector_bits",
    "vector_lanes",
    "vector_registers",
    "write_contiguous",
]
