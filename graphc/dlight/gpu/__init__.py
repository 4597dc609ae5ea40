"""GPU default-schedule rules (TVM's dlight.gpu), tried in this order by `default_rules`:

Matmul, Conv2d, GEMV, LowBatchGEMV, Reduction, GeneralReduction, Transpose, Fallback

(TVM's order, with `Conv2d`, which TVM's dlight does not have, after `Matmul`: before
`Reduction`, which would take a convolution as a row reduction per output pixel).

Each is a `graphc.dlight.ScheduleRule` whose `apply(func, target, tunable)` returns a
`tir.Schedule` binding loops to blockIdx/threadIdx, or None when it does not apply; each
keeps its decisions (thread extents, tile sizes) in one small config object. `Fallback`
applies to every PrimFunc.
"""

from .conv import Conv2d, ConvConfig
from .fallback import Fallback, FallbackConfig
from .low_batch_gemv import LowBatchGEMV, LowBatchGEMVConfig
from .matmul import GEMV, GEMVConfig, Matmul, MatmulConfig, match_matmul
from .reduction import GeneralReduction, Reduction, ReductionConfig
from .transpose import Transpose, TransposeConfig

__all__ = [
    "Conv2d",
    "ConvConfig",
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
