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

from . import op, spec
from .core import Module, Parameter, Tensor
from .modules import GELU, Conv2D, Embedding, LayerNorm, Linear, ReLU, SiLU

__all__ = ["GELU", "Conv2D", "Embedding", "LayerNorm", "Linear", "Module", "Parameter", "ReLU", "SiLU",
           "Tensor", "op", "spec"]
