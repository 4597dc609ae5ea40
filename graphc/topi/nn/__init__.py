"""Neural-network TE computes (`topi.nn`): activations, softmax and normalizations.

>>> from graphc import te, topi
>>> x = te.placeholder((2, 3), "float32", name="x")
>>> [t.op.name for t in (topi.nn.relu(x), topi.nn.softmax(x))]
['compute', 'T_softmax_norm']
"""

from .activation import (
    elu,
    gelu,
    gelu_tanh,
    hardsigmoid,
    hardswish,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    silu,
    softmax,
    softplus,
)
from .norm import batch_norm, layer_norm, rms_norm

__all__ = [
    "batch_norm",
    "elu",
    "gelu",
    "gelu_tanh",
    "hardsigmoid",
    "hardswish",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "relu",
    "rms_norm",
    "selu",
    "silu",
    "softmax",
    "softplus",
]
