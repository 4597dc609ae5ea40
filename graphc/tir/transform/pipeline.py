"""The TensorIR lowering pipeline used by `graphc.lower` and `graphc.build`.

It turns the block form into the lowered form of docs/ir_conventions.md, which code
generators consume. Lowering an already lowered function changes nothing.

Users add passes with TVM's `PassContext(config={"tir.add_lower_pass": [(phase, pass)]})`,
run after the built-in passes of their phase (TVM's numbering):

- phase 0: first, on the block form the schedules left;
- phase 1: after the storage is flattened (`FlattenBuffer`): loops over flat buffers;
- phase 2: after the loop transformations (`UnrollLoop`), before the clean-up;
- phase 3: last, after `Simplify` and `RemoveNoOp`.

>>> from graphc import tir
>>> [p.info.name for p in lower_pipeline().passes]
['PromoteReductionAccumulator', 'PadConflictingOperandTile', 'PlanAndUpdateBufferAllocationLocation',
 'ConvertBlocksToOpaque', 'CompactBufferAllocation', 'LowerOpaqueBlock', 'FlattenBuffer', 'UnrollLoop',
 'Simplify', 'RemoveNoOp']
>>> @tir.transform.prim_func_pass(opt_level=0, name="Mark")
... def mark(func, mod, ctx):
...     return func.with_attr("marked", True)
>>> with PassContext(config={"tir.add_lower_pass": [(1, mark)]}):
...     [p.info.name for p in lower_pipeline().passes][6:9]
['FlattenBuffer', 'Mark', 'UnrollLoop']
>>> f = tir.PrimFunc([], tir.Evaluate(0))
>>> lower_primfunc(f).body.value.value
0
"""

from __future__ import annotations

from ...errors import GraphcError
from ...ir.module import IRModule
from ...ir.transform import Pass, PassContext, Sequential
from ..function import PrimFunc
from .compact_buffer_region import CompactBufferAllocation
from .flatten_buffer import FlattenBuffer
from .lower_blocks import ConvertBlocksToOpaque, LowerOpaqueBlock
from .pad_operand_tile import PadConflictingOperandTile
from .plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation
from .promote_accumulator import PromoteReductionAccumulator
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .unroll_loop import UnrollLoop

ADD_LOWER_PASS = "tir.add_lower_pass"
PHASES = (0, 1, 2, 3)


def lower_pipeline(ctx: PassContext | None = None) -> Sequential:
    """Block form -> lowered form, as one Sequential named "tir.lower".

    The user passes of `ctx` (default: the current PassContext) config "tir.add_lower_pass"
    are inserted at their phases, in the order given.
    """
    user = _user_passes(ctx if ctx is not None else PassContext.current())
    return Sequential(
        [
            *user[0],
            PromoteReductionAccumulator(),  # CPU: accumulate a reduction's small re-read output tile locally
            PadConflictingOperandTile(),  # CPU: re-read operand rows 4 KiB apart -> padded copy of the tile
            PlanAndUpdateBufferAllocationLocation(),  # alloc_buffers to the innermost covering scope
            ConvertBlocksToOpaque(),  # bind block iter vars, init -> if
            CompactBufferAllocation(),  # shrink alloc_buffers to the region their block touches
            LowerOpaqueBlock(),  # blocks -> loops + Allocate + predicate guards
            FlattenBuffer(),  # N-D accesses -> 1-D accesses of flat buffers
            *user[1],
            UnrollLoop(),  # expand small unroll loops (config "tir.UnrollLoop")
            *user[2],
            Simplify(),  # fold indices, drop extent-1 loops and constant branches
            RemoveNoOp(),
            *user[3],
        ],
        name="tir.lower",
    )


def _user_passes(ctx: PassContext) -> dict[int, list[Pass]]:
    """The passes of config "tir.add_lower_pass" by phase; a GraphcError for a malformed entry."""
    by_phase: dict[int, list[Pass]] = {phase: [] for phase in PHASES}
    entries = ctx.config.get(ADD_LOWER_PASS) or ()
    if not isinstance(entries, list | tuple):
        raise GraphcError(f'PassContext config "{ADD_LOWER_PASS}" takes a list of (phase, pass) pairs, '
                          f"got {type(entries).__name__}")
    for entry in entries:
        if not (isinstance(entry, list | tuple) and len(entry) == 2):
            raise GraphcError(f'PassContext config "{ADD_LOWER_PASS}": each entry is a (phase, pass) pair, '
                              f"got {entry!r}")
        phase, user_pass = entry
        if phase not in PHASES or isinstance(phase, bool):
            raise GraphcError(f'PassContext config "{ADD_LOWER_PASS}": phase {phase!r} is not one of '
                              f"{', '.join(map(str, PHASES))} (see graphc.tir.transform.pipeline)")
        if not isinstance(user_pass, Pass):
            raise GraphcError(
                f'PassContext config "{ADD_LOWER_PASS}": {user_pass!r} is not a pass; make one with '
                "graphc.tir.transform.prim_func_pass or graphc.transform.module_pass")
        by_phase[phase].append(user_pass)
    return by_phase


def lower_primfunc(func: PrimFunc, ctx: PassContext | None = None) -> PrimFunc:
    """The lowered form of one PrimFunc (run in `ctx`, or the current PassContext)."""
    mod = IRModule({"main": func})
    pipeline = lower_pipeline(ctx)
    if ctx is None:
        return pipeline(mod)["main"]
    return ctx._run(pipeline, mod)["main"]


__all__ = ["ADD_LOWER_PASS", "PHASES", "lower_pipeline", "lower_primfunc"]
