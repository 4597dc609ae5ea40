"""TensorIR lowering passes (TVM's `tvm.tir.transform`) and the lowering pipeline."""

from .compact_buffer_region import CompactBufferAllocation, compact_buffer_allocation
from .flatten_buffer import FlattenBuffer, flat_index, flat_size, flatten_buffer
from .function_pass import PrimFuncPass, prim_func_pass
from .inject_double_buffer import InjectDoubleBuffer, inject_double_buffer
from .inject_thread_sync import InjectThreadSync, inject_thread_sync
from .lower_blocks import (
    ConvertBlocksToOpaque,
    LowerBlocks,
    LowerOpaqueBlock,
    convert_blocks_to_opaque,
    lower_blocks,
    lower_opaque_block,
)  # fmt: skip
from .lower_cross_thread_reduction import LowerCrossThreadReduction, lower_cross_thread_reduction
from .lower_thread_allreduce import LowerThreadAllreduce, lower_thread_allreduce
from .lower_thread_binding import LowerThreadBinding, lower_thread_binding
from .pad_operand_tile import PadConflictingOperandTile, pad_conflicting_operand_tiles
from .pipeline import lower_pipeline, lower_primfunc
from .plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation, plan_buffer_allocation
from .promote_accumulator import PromoteReductionAccumulator, promote_reduction_accumulators
from .remove_no_op import RemoveNoOp, remove_no_op
from .simplify import Simplify, simplify_primfunc
from .split_host_device import SplitHostDevice, split_host_device
from .thread_guard_partition import PartitionThreadGuard, partition_thread_guard
from .unroll_loop import UnrollConfig, UnrollLoop, unroll_stmt
from .verify_gpu_code import verify_gpu_code

__all__ = [
    "InjectDoubleBuffer",
    "InjectThreadSync",
    "LowerCrossThreadReduction",
    "LowerThreadAllreduce",
    "LowerThreadBinding",
    "PartitionThreadGuard",
    "SplitHostDevice",
    "inject_double_buffer",
    "inject_thread_sync",
    "lower_cross_thread_reduction",
    "lower_thread_allreduce",
    "lower_thread_binding",
    "partition_thread_guard",
    "split_host_device",
    "verify_gpu_code",
    "CompactBufferAllocation",
    "PlanAndUpdateBufferAllocationLocation",
    "compact_buffer_allocation",
    "plan_buffer_allocation",
    "ConvertBlocksToOpaque",
    "FlattenBuffer",
    "LowerBlocks",
    "LowerOpaqueBlock",
    "PadConflictingOperandTile",
    "PrimFuncPass",
    "PromoteReductionAccumulator",
    "RemoveNoOp",
    "Simplify",
    "UnrollConfig",
    "UnrollLoop",
    "convert_blocks_to_opaque",
    "flat_index",
    "flat_size",
    "flatten_buffer",
    "lower_blocks",
    "lower_opaque_block",
    "lower_pipeline",
    "lower_primfunc",
    "pad_conflicting_operand_tiles",
    "prim_func_pass",
    "promote_reduction_accumulators",
    "remove_no_op",
    "simplify_primfunc",
    "unroll_stmt",
]
