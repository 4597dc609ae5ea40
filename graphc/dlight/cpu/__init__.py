"""CPU default-schedule rules: `Matmul` for GEMM-like kernels, `Conv2d` for convolutions,
`Attention` for fused attention, `Reduction` for row/column reductions, `Fallback` for
everything else."""

from .attention import Attention
from .conv import Conv2d
from .fallback import Fallback
from .matmul import Matmul
from .reduction import Reduction

__all__ = ["Attention", "Conv2d", "Fallback", "Matmul", "Reduction"]
