"""TOPI: tensor operator computes in TE, one module per family (TVM's `topi`).

These are the legalizations' building blocks: `relax.transform.LegalizeOps` turns a Relax
operator call into `bb.call_te(topi.X, ...)`. Only `te` and `tir` are used here.

>>> from graphc import te, topi
>>> x = te.placeholder((2, 3), "float32", name="x")
>>> topi.nn.relu(x).op.name
'compute'
"""

# fmt: off
from . import generic_op_impl, image, image_regions, nn  # generic_op_impl: arithmetic operators on te.Tensor
from .broadcast import (
    add,
    atan2,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    broadcast_to,
    copysign,
    divide,
    equal,
    floor_divide,
    floor_mod,
    greater,
    greater_equal,
    hypot,
    left_shift,
    less,
    less_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    right_shift,
    subtract,
    where,
)
from .create import arange, shape_to_tensor, trilu
from .einsum import *  # noqa: F403
from .elemwise import (
    abs,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    bitwise_not,
    cast,
    ceil,
    clip,
    cos,
    cosh,
    elemwise,
    erf,
    erfinv,
    exp,
    exp2,
    expm1,
    fast_erf,
    fast_erf_value,
    floor,
    full,
    full_like,
    identity,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    log2,
    log10,
    logical_not,
    negative,
    reinterpret,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    tan,
    tanh,
    trunc,
)
from .float_formats import FLOAT_FORMATS, decode_float, encode_float
from .linalg import matmul
from .reduce import argmax, argmin, dynamic_reduce, max, mean, min, prod, std, sum, variance
from .scan import *  # noqa: F403
from .scatter_gather import *  # noqa: F403
from .sort import *  # noqa: F403
from .transform import (
    INDEX_MODES,
    checked_index,
    concatenate,
    dynamic_slice_bounds,
    expand_dims,
    flatten,
    flip,
    index_message,
    repeat,
    reshape,
    slice_extent,
    slice_window,
    split,
    squeeze,
    stack,
    strided_slice,
    take,
    tile,
    transpose,
)

# fmt: on

__all__ = [name for name in dir() if not name.startswith("_")]
