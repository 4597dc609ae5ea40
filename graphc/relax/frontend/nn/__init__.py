"""Write Relax models like PyTorch modules (TVM's `relax.frontend.nn`, also `graphc.nn`).

>>> from graphc.relax.frontend import nn
>>> class MLP(nn.Module):
...     def __init__(self):
...         self.fc1 = nn.Linear(784, 256)
...         self.relu1 = nn.ReLU()
...         self.fc2 = nn.Linear(256, 10)
...     def forward(self, x):
...         return self.fc2(self.relu1(self.fc1(x)))
>>> mod, params = MLP().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
>>> [name for name, _ in params]
['fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias']
"""

from . import core, modules, op, spec
from .core import Module, Parameter, Tensor
from .modules import (
    GELU,
    Attention,
    Conv1D,
    Conv2D,
    Conv3D,
    ConvTranspose1D,
    Embedding,
    GroupNorm,
    Identity,
    LayerNorm,
    Linear,
    ModuleDict,
    ModuleList,
    ReLU,
    RMSNorm,
    SiLU,
    TimestepEmbedding,
    Timesteps,
)
from .op import *  # noqa: F403  (TVM's nn.add, nn.matmul, ... at the package level)
from .op import __all__ as _op_all

__all__ = ["GELU", "Attention", "Conv1D", "Conv2D", "Conv3D", "ConvTranspose1D", "Embedding", "GroupNorm",
           "Identity", "LayerNorm", "Linear", "Module", "ModuleDict", "ModuleList", "Parameter", "RMSNorm",
           "ReLU", "SiLU", "Tensor", "TimestepEmbedding", "Timesteps", "core", "modules", "op", "spec",
           *_op_all]
