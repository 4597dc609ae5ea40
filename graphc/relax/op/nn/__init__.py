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
    leakyrelu,
    log_softmax,
    prelu,
    relu,
    relu6,
    selu,
    silu,
    softmax,
    softplus,
)
from .attention import *  # noqa: F403
from .convolution import *  # noqa: F403
from .layout import *  # noqa: F403
from .loss import *  # noqa: F403
from .norm import *  # noqa: F403
from .pooling import *  # noqa: F403

__all__ = [name for name in dir() if not name.startswith("_")]
