"""TensorIR schedules: `Schedule` and its primitives.

`tir.Schedule(mod_or_func)` holds the current IRModule (`sch.mod`) and the trace of the
primitives applied (`sch.trace`, replayable with `sch.trace.apply_to(other)`). Handles:
`BlockRV` (a block, by name) and `LoopRV` (a loop, by its Var).

- look-up: get_block / get_sblock, get_loops, get_child_blocks, get_producers, get_consumers,
  get_output_blocks, get
- loops (loops.py, merge.py): split, fuse, reorder, merge, add_unit_loop
- loop kinds (for_kind.py): parallel, vectorize, unroll, bind
- annotations (annotate.py): annotate, unannotate
- block placement (compute_at.py, compute_inline.py): compute_at, reverse_compute_at,
  compute_inline, reverse_compute_inline
- caching and scopes (cache.py, reindex_cache.py): cache_read, cache_write, reindex_cache_read,
  reindex_cache_write, set_scope
- reductions (reduction.py): decompose_reduction, rfactor
- restructuring (schedule_layout.py): blockize (blockize.py), transform_layout (layout.py),
  pad_einsum (pad.py), reindex (reindex.py), tensorize (tensorize.py: `TensorIntrin.register`)
- storage_align records the "buffer_dim_align" block annotation, which lowering
  (CompactBufferAllocation) turns into padded strides of the buffer, as in TVM

Every primitive checks its preconditions before building anything (the checks TVM makes:
scope.py for stage pipelines and complete/reduction blocks, affine.py for affine bindings):
an illegal one raises `ScheduleError` naming the primitive, the block or loop and the failed
condition, and the schedule stays exactly as it was. Wherever a primitive takes a block, a
block name does too. sampling.py adds the sampling instructions a tuner searches over
(sample_perfect_tile, sample_categorical, sample_compute_location) and the samplers that take
their decisions; trace_json.py gives traces a JSON form (`Trace.to_json`). testing.py has
TVM's `verify_trace_roundtrip`.
"""

from ...errors import ScheduleError
from .sampling import (
    DefaultSampler,
    RandomSampler,
    ReplaySampler,
    SampleInfo,
    Sampler,
    current_sampler,
    mutate_decision,
    use_sampler,
)
from .schedule import Schedule
from .tensorize import TensorIntrin
from .trace import BlockRV, IndexMap, Instruction, LoopRV, Trace

__all__ = [
    "BlockRV",
    "DefaultSampler",
    "IndexMap",
    "Instruction",
    "LoopRV",
    "RandomSampler",
    "ReplaySampler",
    "SampleInfo",
    "Sampler",
    "Schedule",
    "ScheduleError",
    "TensorIntrin",
    "Trace",
    "current_sampler",
    "mutate_decision",
    "use_sampler",
]
