"""GPU default-schedule rules (TVM's dlight.gpu), tried in this order by `default_rules`:

Matmul, GEMV, LowBatchGEMV, Reduction, GeneralReduction, Transpose, Fallback.

Each is a `graphc.dlight.ScheduleRule` whose `apply(func, target, tunable)` returns a
`tir.Schedule` binding loops to blockIdx/threadIdx, or None when it does not apply; each
keeps its decisions (thread extents, tile sizes) in one small config object. `Fallback`
applies to every PrimFunc.
"""

from .fallback import Fallback, FallbackConfig
from .low_batch_gemv import LowBatchGEMV, LowBatchGEMVConfig
from .matmul import GEMV, GEMVConfig, Matmul, MatmulConfig, match_matmul
from .reduction import GeneralReduction, Reduction, ReductionConfig
from .transpose import Transpose, TransposeConfig

__all__ = [
    "GEMV",
    "Fallback",
    "FallbackConfig",
    "GEMVConfig",
    "GeneralReduction",
    "LowBatchGEMV",
    "LowBatchGEMVConfig",
    "Matmul",
    "MatmulConfig",
    "Reduction",
    "ReductionConfig",
    "Transpose",
    "TransposeConfig",
    "match_matmul",
]
