"""`PadConflictingOperandTile`: copy a reduction operand's re-read tile into a buffer whose rows
do not collide in the L1 cache.

An L1 data cache of W ways holds at most W lines whose addresses are equal modulo its way
size (4 KiB on x86 and most other CPUs: 32 KiB / 8 ways, 48 KiB / 12 ways). A reduction
loop that, on each step, reads more than W rows of an operand lying a multiple of 4 KiB
apart evicts its own lines before the next step reuses them. The notebook's blocked matmul
(`for yo, xo, k, yi, xi`) does this with A: each k reads `A[yo*32 + yi, k]` for 32 rows 4 KB
apart at K = 1024, and the next 15 values of k read the same 32 lines again, from L2.

This pass gives such an operand the effect of

    copy = sch.cache_read(block, i, "global", consumer_blocks=[block])
    sch.compute_at(copy, L)                                  # one tile per iteration of L
    sch.storage_align(copy, 0, ndim - 2, 4096 // itemsize, 64 // itemsize)

so that the block reads a copy of the tile it uses under `L` whose rows are one cache line
past a multiple of 4 KiB apart (consecutive rows in consecutive L1 sets). `L` is the
outermost loop outside the reduction loop whose tile is at most `max_bytes` (default 256 KiB,
within the L2 cache); the copy is made once per iteration of `L` and re-read by every loop
inside it that does not index the operand.

It applies to a read of a reduction block (with `init`) when all of these hold:
- a loop driving a reduction iter lies outside a spatial loop, with a loop outside it
  (the shape `PromoteReductionAccumulator` looks for);
- the operand is a compact "global" buffer that no block of the function writes, with at
  least two dimensions and rows of constant length a multiple of 4 KiB in bytes (the
  second-to-last dimension's stride; outer dimensions may be symbolic);
- one step of the outermost reduction loop reads more than 8 (`L1_WAYS`) of its rows;
- the tile under `L` has constant extents, fits `max_bytes`, and some loop inside `L` of
  extent > 1 does not index the operand (the copy is re-read); `L` is not vectorized and no
  loop inside it is parallel;
- the function has no GPU thread bindings and no non-CPU "target" attribute;
- the schedule primitives accept the three steps (a ScheduleError leaves the block as it was).
Results are unchanged: the block reads an exact copy of the values it read before.

Options, from `PassContext.config["tir.PadConflictingOperandTile"]` or given to the pass:
`enabled` (default True) and `max_bytes`; or `PassContext(disabled_pass=[...])` by name.

>>> from graphc import te, tir
>>> k = te.reduce_axis((0, 1024), "k")
>>> A = te.placeholder((64, 1024), name="A"); B = te.placeholder((1024, 64), name="B")
>>> C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> sch = tir.Schedule(te.create_prim_func([A, B, C]))
>>> i, j, kk = sch.get_loops(sch.get_block("C"))
>>> io, ii = sch.split(i, [None, 32]); sch.reorder(io, j, kk, ii)
>>> [(s.buffer, s.loop.name, s.tile_bytes) for s in find_stagings(sch.mod["main"])]
[('A', 'i_0', 131072)]
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.dtype import DataType
from ...ir.module import IRModule
from ..analysis.var_use import used_vars
from ..expr import IntImm, Var
from ..function import PrimFunc
from ..functor import substitute
from ..schedule.blocks import access, write_buffers
from ..schedule.state import is_one, walk
from ..stmt import Block, BlockRealize, ForKind
from .function_pass import prim_func_pass
from .promote_accumulator import (
    reduction_nest,
    region_bytes,
    region_extents,
    targets_cpu,
    unique_realizes,
)  # fmt: skip
from .schedule_rewrite import check_options, configured_options, rewrite_each

CONFIG_KEY = "tir.PadConflictingOperandTile"
DEFAULT_MAX_BYTES = 256 * 1024
L1_WAY_BYTES = 4096  # addresses this far apart share an L1 set (the cache size over its ways)
L1_WAYS = 8  # the fewest ways of the L1 data caches this aims at
LINE_BYTES = 64


@dataclass(frozen=True)
class Staging:
    """Stage read `index` (`buffer`) of block `block` under loop `loop`, a `tile_bytes` tile."""

    block: str
    index: int
    buffer: str
    loop: Var
    tile_bytes: int


def _written_buffers(func: PrimFunc) -> set:
    return {b for s in walk(func.body) if isinstance(s, Block) for b in write_buffers(s)}


def _row_bytes(buffer) -> int | None:
    """Byte stride of the second-to-last dimension of a compact buffer whose rows have a
    constant length (the outer dimensions may be symbolic: their strides are multiples of it)."""
    if len(buffer.shape) < 2 or buffer.strides or not isinstance(buffer.shape[-1], IntImm):
        return None
    return buffer.shape[-1].value * DataType(buffer.dtype).itemsize


def _staging(func, realize: BlockRealize, index: int, region, written: set, max_bytes: int) -> Staging | None:
    buffer = region.buffer
    if buffer.scope not in ("global", "") or buffer in written:
        return None
    row = _row_bytes(buffer)
    if row is None or row % L1_WAY_BYTES:
        return None
    nest = reduction_nest(func, realize)
    if nest is None:
        return None
    step = region_extents(realize, region, nest.loops[nest.first + 1:])
    if step is None:
        return None
    rows = 1
    for extent in step[:-1]:
        rows *= extent
    if rows <= L1_WAYS:
        return None  # the rows one reduction step reads fit in one L1 set
    vmap = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    indexing = set()  # the loops the operand's indices depend on
    for rng in region.region:
        indexing.update(used_vars(substitute(rng.min, vmap)))
    for p in range(nest.first):
        inner = nest.loops[p + 1:]
        if nest.loops[p].kind == ForKind.VECTORIZED or any(lp.kind == ForKind.PARALLEL for lp in inner):
            continue  # no copy nest inside a vector lane, no copy shared by threads
        size = region_bytes(realize, region, inner)
        if size is None or size > max_bytes:
            continue
        if not any(lp.loop_var not in indexing and not is_one(lp.extent) for lp in inner):
            return None  # every loop inside moves along the operand: the copy is read once
        return Staging(realize.block.name_hint, index, buffer.name, nest.loops[p].loop_var, size)
    return None


def find_stagings(func: PrimFunc, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Staging]:
    """The operand tiles of `func` this pass would stage, in program order (module docstring)."""
    if not isinstance(func.body, BlockRealize) or not targets_cpu(func):
        return []
    written = _written_buffers(func)
    found = []
    for realize in unique_realizes(func):
        for index, region in enumerate(access(realize.block)[0]):
            staging = _staging(func, realize, index, region, written, max_bytes)
            if staging is not None:
                found.append(staging)
    return found


def _stage(func: PrimFunc, staging: Staging) -> PrimFunc:
    """cache_read + compute_at + storage_align; raises ScheduleError where one is illegal."""
    from ..schedule import Schedule

    sch = Schedule(IRModule({"main": func}))
    block = sch.get_block(staging.block)
    loop = next(lp for lp in sch.get_loops(block) if lp.var is staging.loop)
    copy = sch.cache_read(block, staging.index, "global", consumer_blocks=[block])
    sch.compute_at(copy, loop)
    itemsize = DataType(sch.get(copy).writes[0].buffer.dtype).itemsize
    ndim = len(sch.get(copy).writes[0].buffer.shape)
    sch.storage_align(copy, 0, ndim - 2, L1_WAY_BYTES // itemsize, max(LINE_BYTES // itemsize, 1))
    return sch.mod["main"]


def pad_conflicting_operand_tiles(func: PrimFunc, max_bytes: int = DEFAULT_MAX_BYTES) -> PrimFunc:
    """`func` with every qualifying operand tile staged in a padded copy (module docstring)."""
    return rewrite_each(func, lambda f: find_stagings(f, max_bytes), lambda s: (s.block, s.buffer), _stage)


@prim_func_pass(opt_level=1, name="PadConflictingOperandTile")
class PadConflictingOperandTile:
    """Stage conflicting operand tiles of reductions in padded copies; options given here
    override `config["tir.PadConflictingOperandTile"]` (`enabled`, `max_bytes`)."""

    def __init__(self, **options):
        check_options("PadConflictingOperandTile", options)
        self.options = options

    def transform_function(self, func: PrimFunc, mod, ctx) -> PrimFunc:
        options = configured_options("PadConflictingOperandTile", CONFIG_KEY, ctx, self.options)
        if not options.get("enabled", True):
            return func
        return pad_conflicting_operand_tiles(func, int(options.get("max_bytes", DEFAULT_MAX_BYTES)))


__all__ = [
    "CONFIG_KEY",
    "DEFAULT_MAX_BYTES",
    "PadConflictingOperandTile",
    "Staging",
    "find_stagings",
    "pad_conflicting_operand_tiles",
]
