"""CPU default-schedule rules: `Matmul` for GEMM-like kernels, `Reduction` for row/column
reductions, `Fallback` for everything else."""

from .fallback import Fallback
from .matmul import Matmul
from .reduction import Reduction

__all__ = ["Fallback", "Matmul", "Reduction"]
