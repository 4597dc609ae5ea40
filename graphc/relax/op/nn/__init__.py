"""Neural-network operators (`relax.op.nn`): activations, softmax, dropout, normalizations.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.nn.relu(x)).struct_info
R.Tensor((2, 3), dtype="float32")
"""

from .activation import (
    dropout,
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
    "batch_norm", "dropout", "elu", "gelu", "gelu_tanh", "hardsigmoid", "hardswish", "layer_norm",
    "leaky_relu", "log_softmax", "relu", "rms_norm", "selu", "silu", "softmax", "softplus",
]
