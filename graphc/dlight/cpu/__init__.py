"""CPU default-schedule rules: `Matmul` for GEMM-like kernels, `GroupedConv` for grouped pointwise
convolutions (per-group GEMMs over the pixels), `Conv2d` for convolutions,
`Attention` for fused attention, `Depthwise` for depthwise convolutions, `Window` for the
sliding windows left (pooling, narrow groups), `Reduction`
for row/column reductions, `Fallback` for
everything else."""

from .attention import Attention
from .conv import Conv2d
from .depthwise import Depthwise
from .fallback import Fallback
from .grouped_conv import GroupedConv
from .matmul import Matmul
from .reduction import Reduction
from .window import Window

__all__ = ["Attention", "Conv2d", "Depthwise", "Fallback", "GroupedConv", "Matmul", "Reduction", "Window"]
