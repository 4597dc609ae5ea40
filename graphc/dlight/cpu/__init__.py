"""CPU default-schedule rules: `Matmul` for GEMM-like kernels, `Attention` for fused attention,
`Reduction` for row/column reductions, `Fallback` for everything else."""

from .attention import Attention
from .fallback import Fallback
from .matmul import Matmul
from .reduction import Reduction

__all__ = ["Attention", "Fallback", "Matmul", "Reduction"]
