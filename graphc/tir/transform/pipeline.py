"""The TensorIR lowering pipeline used by `graphc.lower` and `graphc.build`.

It turns the block form into the lowered form of docs/ir_conventions.md, which code
generators consume. Lowering an already lowered function changes nothing.

>>> from graphc import tir
>>> [p.info.name for p in lower_pipeline().passes]
['PromoteReductionAccumulator', 'PadConflictingOperandTile', 'PlanAndUpdateBufferAllocationLocation',
 'LowerCrossThreadReduction', 'ConvertBlocksToOpaque', 'CompactBufferAllocation', 'LowerOpaqueBlock',
 'LowerThreadBinding', 'FlattenBuffer', 'UnrollLoop', 'Simplify', 'RemoveNoOp']
>>> f = tir.PrimFunc([], tir.Evaluate(0))
>>> lower_primfunc(f).body.value.value
0
"""

from __future__ import annotations

from ...ir.module import IRModule
from ...ir.transform import PassContext, Sequential
from ..function import PrimFunc
from .compact_buffer_region import CompactBufferAllocation
from .flatten_buffer import FlattenBuffer
from .lower_blocks import ConvertBlocksToOpaque, LowerOpaqueBlock
from .lower_cross_thread_reduction import LowerCrossThreadReduction
from .lower_thread_binding import LowerThreadBinding
from .pad_operand_tile import PadConflictingOperandTile
from .plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation
from .promote_accumulator import PromoteReductionAccumulator
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .unroll_loop import UnrollLoop


def lower_pipeline() -> Sequential:
    """Block form -> lowered form, as one Sequential named "tir.lower"."""
    return Sequential(
        [
            PromoteReductionAccumulator(),  # CPU: accumulate a reduction's small re-read output tile locally
            PadConflictingOperandTile(),  # CPU: re-read operand rows 4 KiB apart -> padded copy of the tile
            PlanAndUpdateBufferAllocationLocation(),  # alloc_buffers to the innermost covering scope
            LowerCrossThreadReduction(),  # GPU: reductions over threadIdx -> tvm_thread_allreduce
            ConvertBlocksToOpaque(),  # bind block iter vars, init -> if
            CompactBufferAllocation(),  # shrink alloc_buffers to the region their block touches
            LowerOpaqueBlock(),  # blocks -> loops + Allocate + predicate guards
            LowerThreadBinding(),  # GPU: thread-bound loops -> T.launch_thread scopes
            FlattenBuffer(),  # N-D accesses -> 1-D accesses of flat buffers
            UnrollLoop(),  # expand small unroll loops (config "tir.UnrollLoop")
            Simplify(),  # fold indices, drop extent-1 loops and constant branches
            RemoveNoOp(),
        ],
        name="tir.lower",
    )


def lower_primfunc(func: PrimFunc, ctx: PassContext | None = None) -> PrimFunc:
    """The lowered form of one PrimFunc (run in `ctx`, or the current PassContext)."""
    mod = IRModule({"main": func})
    pipeline = lower_pipeline()
    if ctx is None:
        return pipeline(mod)["main"]
    return ctx._run(pipeline, mod)["main"]


__all__ = ["lower_pipeline", "lower_primfunc"]
