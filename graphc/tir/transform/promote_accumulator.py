"""`PromoteReductionAccumulator`: accumulate a reduction's small output tile in a local buffer.

A reduction block with a loop over its reduction outside one of its spatial loops reads,
updates and writes the same output tile on every reduction step. The notebook's blocked
matmul is the example: in `for yo, xo, k, yi, xi` the 32x32 tile `C[yo*32 + yi, xo*32 + xi]`
is loaded and stored 1024 times, once per `k`. Its rows lie a whole row of C apart (4 KB at
N = 1024); so many rows at a power-of-two stride share a few L1 sets, the tile does not stay
in L1, and every update goes to L2.

This pass gives such a block the effect of

    cache = sch.cache_write(block, 0, "local")   # the block accumulates into C_local
    sch.reverse_compute_at(cache, L)              # C_local -> C once per iteration of L

where `L` is the loop just outside the outermost loop that drives a reduction iter. After
`CompactBufferAllocation` the accumulator is a dense tile (32x32 floats, 4 KB) allocated
inside `L`, and C is written once per element instead of once per reduction step.

It applies to a block of the block form when all of these hold, and leaves it alone
otherwise:
- it has an `init` (a reduction) and writes exactly one buffer, of scope "global"
  (a block already writing a "local"/"shared" buffer has been staged by its schedule);
- a loop driving a reduction iter lies outside a loop driving a spatial iter, and some loop
  is outside that reduction loop (`L`); no loop drives both kinds of iter;
- `L` is not vectorized and no parallel loop lies between `L` and the block (the tile would
  be shared by threads);
- the tile written during one iteration of `L` has constant extents and is at most
  `max_bytes` (default 16 KiB, a fraction of L1); the reduction repeats at least twice in it;
- the function has no GPU thread bindings and no non-CPU "target" attribute;
- the schedule primitives accept the two steps (a ScheduleError leaves the block as it was).
Results are unchanged: the primitives check their preconditions and rewrite only where legal.

Options, from `PassContext.config["tir.PromoteReductionAccumulator"]` or given to the pass:
`enabled` (default True) and `max_bytes`. The pass is also skipped by name through
`PassContext(disabled_pass=["PromoteReductionAccumulator"])`.

>>> from graphc import te, tir
>>> k = te.reduce_axis((0, 64), "k")
>>> A = te.placeholder((64, 64), name="A"); B = te.placeholder((64, 64), name="B")
>>> C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> sch = tir.Schedule(te.create_prim_func([A, B, C]))
>>> i, j, kk = sch.get_loops(sch.get_block("C"))
>>> io, ii = sch.split(i, [None, 16]); sch.reorder(io, kk, ii, j)
>>> func = promote_reduction_accumulators(sch.mod["main"])
>>> [b.name for b in func.body.block.alloc_buffers], [b.scope for b in func.body.block.alloc_buffers]
(['C_local'], ['local'])
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.dtype import DataType
from ...ir.module import IRModule
from ..analysis.block_access import affine_difference, relaxed_bounds
from ..analysis.var_use import uses_var
from ..expr import IntImm, Range, Var
from ..function import PrimFunc
from ..functor import substitute
from ..schedule.blocks import access
from ..schedule.state import find_block_path, loops_above, walk
from ..stmt import AttrStmt, BlockRealize, For, ForKind, IterType
from .function_pass import prim_func_pass
from .schedule_rewrite import check_options, configured_options, rewrite_each

CONFIG_KEY = "tir.PromoteReductionAccumulator"
DEFAULT_MAX_BYTES = 16 * 1024
_CPU_TARGET_KINDS = ("llvm", "c")


@dataclass(frozen=True)
class Promotion:
    """Where to promote: block `block` accumulates a `tile_bytes` tile under loop `loop`."""

    block: str
    loop: Var
    tile_bytes: int


def _const_extent(loop: For) -> int | None:
    return loop.extent.value if isinstance(loop.extent, IntImm) else None


def targets_cpu(func: PrimFunc) -> bool:
    """False for functions bound to GPU threads or carrying a non-CPU "target" attribute."""
    target = func.attrs.get("target")
    if target is not None:
        kind = getattr(target, "kind", None) or str(target).split()[0]
        if str(kind) not in _CPU_TARGET_KINDS:
            return False
    for stmt in walk(func.body):
        if isinstance(stmt, For) and stmt.kind == ForKind.THREAD_BINDING:
            return False
        if isinstance(stmt, AttrStmt) and stmt.attr_key in ("thread_extent", "virtual_thread"):
            return False
    return True


def region_extents(realize: BlockRealize, region, inner: list) -> list[int] | None:
    """Per dimension, how many indices of `region` (a region `realize`'s block accesses) the
    loops `inner` sweep (clipped to the buffer's constant dims); None where not constant."""
    vmap = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    dom = {lp.loop_var: Range(lp.min, lp.extent) for lp in inner}
    extents = []
    for rng, dim in zip(region.region, region.buffer.shape):
        lo_hi = relaxed_bounds(substitute(rng.min, vmap), dom)
        width = rng.extent.value if isinstance(rng.extent, IntImm) else None
        if lo_hi is None or width is None:
            return None
        spread = affine_difference(lo_hi[1], lo_hi[0])
        if spread is None:
            return None
        extent = spread + width
        extents.append(min(extent, dim.value) if isinstance(dim, IntImm) else extent)
    return extents


def region_bytes(realize: BlockRealize, region, inner: list) -> int | None:
    """Bytes of the part of `region` that the loops `inner` sweep, when constant."""
    extents = region_extents(realize, region, inner)
    if extents is None:
        return None
    count = 1
    for extent in extents:
        count *= extent
    return count * DataType(region.buffer.dtype).itemsize


@dataclass(frozen=True)
class ReductionNest:
    """The loops above a reduction block (inside its scope), what each drives, and `first`, the
    position of the outermost loop driving a reduction iter that has a spatial loop inside it."""

    realize: BlockRealize
    loops: list
    kinds: list  # per loop: IterType.DATA_PAR, IterType.COMM_REDUCE, or None (drives nothing)
    first: int


def reduction_nest(func: PrimFunc, realize: BlockRealize) -> ReductionNest | None:
    """The nest of a reduction block (with `init`) whose outermost reduction loop has a loop
    outside it and a spatial loop of extent > 1 inside it; None for any other block."""
    block = realize.block
    if block.init is None:
        return None
    loops = loops_above(find_block_path(func.body, block.name_hint))
    kinds = []
    for loop in loops:
        driven = {
            iv.iter_type
            for iv, value in zip(block.iter_vars, realize.iter_values)
            if uses_var(value, loop.loop_var)
        }
        if len(driven) > 1 or not driven <= {IterType.DATA_PAR, IterType.COMM_REDUCE}:
            return None  # a loop driving both kinds (or a scan/opaque iter): not a plain nest
        kinds.append(driven.pop() if driven else None)
    reduce_at = [k for k, kind in enumerate(kinds) if kind == IterType.COMM_REDUCE]
    if not reduce_at or reduce_at[0] == 0:
        return None  # no reduction loop, or none with a loop outside it
    first = reduce_at[0]
    if not any(kind == IterType.DATA_PAR and _const_extent(lp) != 1
               for lp, kind in zip(loops[first:], kinds[first:])):
        return None  # no spatial loop inside the reduction loop: one point per reduction step
    return ReductionNest(realize, loops, kinds, first)


def _candidate(func: PrimFunc, realize: BlockRealize, max_bytes: int) -> Promotion | None:
    """The promotion of `realize`'s block, or None when it does not qualify (module docstring)."""
    writes = access(realize.block)[1]
    if len(writes) != 1 or writes[0].buffer.scope not in ("global", ""):
        return None
    nest = reduction_nest(func, realize)
    if nest is None:
        return None
    outer, inner = nest.loops[nest.first - 1], nest.loops[nest.first:]
    if outer.kind == ForKind.VECTORIZED or any(lp.kind == ForKind.PARALLEL for lp in inner):
        return None  # no write-back nest inside a vector lane, no tile shared by threads
    steps = 1
    for lp, kind in zip(inner, nest.kinds[nest.first:]):
        if kind == IterType.COMM_REDUCE:
            extent = _const_extent(lp)
            steps = steps * extent if extent is not None and steps is not None else None
    if steps is not None and steps < 2:
        return None
    size = region_bytes(realize, writes[0], inner)
    if size is None or size > max_bytes:
        return None
    return Promotion(realize.block.name_hint, outer.loop_var, size)


def unique_realizes(func: PrimFunc) -> list:
    """The BlockRealizes under the root block whose block name is unique (handles name blocks;
    an ambiguous name cannot be scheduled safely)."""
    realizes = [s for s in walk(func.body.block) if isinstance(s, BlockRealize)]
    names = [r.block.name_hint for r in realizes]
    return [r for r in realizes if names.count(r.block.name_hint) == 1]


def find_promotions(func: PrimFunc, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Promotion]:
    """The blocks of `func` this pass would promote, in program order (module docstring)."""
    if not isinstance(func.body, BlockRealize) or not targets_cpu(func):
        return []
    found = []
    for realize in unique_realizes(func):
        promotion = _candidate(func, realize, max_bytes)
        if promotion is not None:
            found.append(promotion)
    return found


def _promote(func: PrimFunc, promotion: Promotion) -> PrimFunc:
    """cache_write(local) + reverse_compute_at; raises ScheduleError where either is illegal."""
    from ..schedule import Schedule

    sch = Schedule(IRModule({"main": func}))
    block = sch.get_block(promotion.block)
    loop = next(lp for lp in sch.get_loops(block) if lp.var is promotion.loop)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, loop)
    return sch.mod["main"]


def promote_reduction_accumulators(func: PrimFunc, max_bytes: int = DEFAULT_MAX_BYTES) -> PrimFunc:
    """`func` with every qualifying reduction accumulating in a local tile (module docstring)."""
    return rewrite_each(func, lambda f: find_promotions(f, max_bytes), lambda p: p.block, _promote)


@prim_func_pass(opt_level=1, name="PromoteReductionAccumulator")
class PromoteReductionAccumulator:
    """Accumulate small output tiles of reductions in local buffers; options given here
    override `config["tir.PromoteReductionAccumulator"]` (`enabled`, `max_bytes`)."""

    def __init__(self, **options):
        check_options("PromoteReductionAccumulator", options)
        self.options = options

    def transform_function(self, func: PrimFunc, mod, ctx) -> PrimFunc:
        options = configured_options("PromoteReductionAccumulator", CONFIG_KEY, ctx, self.options)
        if not options.get("enabled", True):
            return func
        return promote_reduction_accumulators(func, int(options.get("max_bytes", DEFAULT_MAX_BYTES)))


__all__ = [
    "CONFIG_KEY",
    "DEFAULT_MAX_BYTES",
    "Promotion",
    "PromoteReductionAccumulator",
    "find_promotions",
    "promote_reduction_accumulators",
]
