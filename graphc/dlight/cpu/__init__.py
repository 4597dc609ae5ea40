"""CPU default-schedule rules: `Matmul` for GEMM-like kernels, `Conv2d` for convolutions,
`Attention` for fused attention, `Window` for depthwise convolutions and pooling, `Reduction`
for row/column reductions, `Fallback` for
everything else."""

from .attention import Attention
from .conv import Conv2d
from .fallback import Fallback
from .matmul import Matmul
from .reduction import Reduction
from .window import Window

__all__ = ["Attention", "Conv2d", "Fallback", "Matmul", "Reduction", "Window"]
