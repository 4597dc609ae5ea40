"""GPU default-schedule rules (TVM's dlight.gpu), tried in this order by `default_rules`:

Matmul, GEMV, LowBatchGEMV, Reduction, GeneralReduction, Transpose, Fallback.

Each is a `graphc.dlight.ScheduleRule` whose `apply(func, target, tunable)` returns a
`tir.Schedule` binding loops to blockIdx/threadIdx, or None when it does not apply; each
keeps its decisions (thread extents, tile sizes) in one small config object. `Fallback`
applies to every PrimFunc.
"""

from .fallback import Fallback, FallbackConfig
from .matmul import GEMV, GEMVConfig, Matmul, MatmulConfig, match_matmul
from .reduction import GeneralReduction, Reduction, ReductionConfig

__all__ = [
    "GEMV",
    "Fallback",
    "FallbackConfig",
    "GEMVConfig",
    "GeneralReduction",
    "Matmul",
    "MatmulConfig",
    "Reduction",
    "ReductionConfig",
    "match_matmul",
]
