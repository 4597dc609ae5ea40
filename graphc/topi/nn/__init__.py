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
    prelu,
    relu,
    relu6,
    selu,
    silu,
    softmax,
    softplus,
)
from .attention import *  # noqa: F403
from .conv import *  # noqa: F403
from .dense import batch_flatten, dense
from .loss import *  # noqa: F403
from .norm import *  # noqa: F403
from .pad import *  # noqa: F403
from .pooling import *  # noqa: F403
from .upsampling import upsampling

__all__ = [name for name in dir() if not name.startswith("_")]
