"""Neural-network layers that are not convolutions: activations, the softmax family,
normalizations (batch, instance, layer, group, RMS, LRN, mean-variance), Dropout.

Before opset 13, Softmax/LogSoftmax/Hardmax view their input as a 2-d matrix split at
`axis` (default 1); from 13 they work along `axis` (default -1).
"""

from __future__ import annotations

import math

import numpy as np

from ... import relax, tir
from .common import Emitting, const_like, dtype_of, ndim_of, norm_axis, shape_expr, shape_of
from .dtypes import is_float
from .registry import converter

op = Emitting(relax.op)


def _c(value, like):
    return const_like(value, like)


# -- activations ----------------------------------------------------------------------------


@converter("Relu", since=1)
def relu(node):
    node.attr("consumed_inputs", None)
    x = node.input(0)
    if is_float(dtype_of(x)):
        return op.nn.relu(x)
    return op.maximum(x, _c(0, x))


@converter("LeakyRelu", since=1)
def leaky_relu(node):
    node.attr("consumed_inputs", None)
    x = node.input(0)
    alpha = node.attr("alpha")
    return op.where(op.less(x, _c(0, x)), op.multiply(x, _c(alpha, x)), x)


@converter("PRelu", since=1)
def prelu(node):
    node.attr("consumed_inputs", None)
    x, slope = node.input(0), node.input(1)
    if node.version < 7 and ndim_of(slope) == 1 and ndim_of(x) > 2:
        slope = op.reshape(slope, shape_expr([shape_of(slope)[0]] + [1] * (ndim_of(x) - 2)))
    return op.where(op.less(x, _c(0, x)), op.multiply(x, slope), x)


@converter("Elu", since=1)
def elu(node):
    node.attr("consumed_inputs", None)
    x = node.input(0)
    alpha = node.attr("alpha")
    return op.where(op.less(x, _c(0, x)), op.multiply(_c(alpha, x), op.subtract(op.exp(x), _c(1, x))), x)


@converter("Selu", since=1)
def selu(node):
    node.attr("consumed_inputs", None)
    x = node.input(0)
    alpha, gamma = node.attr("alpha"), node.attr("gamma")
    neg = op.multiply(_c(alpha, x), op.subtract(op.exp(x), _c(1, x)))
    return op.multiply(_c(gamma, x), op.where(op.less_equal(x, _c(0, x)), neg, x))


@converter("Celu", since=12)
def celu(node):
    x = node.input(0)
    alpha = node.attr("alpha")
    neg = op.multiply(_c(alpha, x), op.subtract(op.exp(op.divide(x, _c(alpha, x))), _c(1, x)))
    return op.add(op.maximum(x, _c(0, x)), op.minimum(_c(0, x), neg))


@converter("ThresholdedRelu", since=10)
def thresholded_relu(node):
    x = node.input(0)
    alpha = node.attr("alpha")
    return op.where(op.greater(x, _c(alpha, x)), x, op.zeros_like(x))


@converter("HardSigmoid", since=1)
def hard_sigmoid(node):
    node.attr("consumed_inputs", None)
    x = node.input(0)
    alpha, beta = node.attr("alpha"), node.attr("beta")
    y = op.add(op.multiply(x, _c(alpha, x)), _c(beta, x))
    return op.minimum(op.maximum(y, _c(0, x)), _c(1, x))


@converter("HardSwish", since=14)
def hard_swish(node):
    x = node.input(0)
    y = op.add(op.multiply(x, _c(1.0 / 6, x)), _c(0.5, x))
    return op.multiply(x, op.minimum(op.maximum(y, _c(0, x)), _c(1, x)))


@converter("Softplus", since=1)
def softplus(node):
    x = node.input(0)
    # log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|)
    return op.add(op.maximum(x, _c(0, x)), op.log(op.add(_c(1, x), op.exp(op.negative(op.abs(x))))))


@converter("Softsign", since=1)
def softsign(node):
    x = node.input(0)
    return op.divide(x, op.add(_c(1, x), op.abs(x)))


@converter("Mish", since=18)
def mish(node):
    x = node.input(0)
    sp = op.add(op.maximum(x, _c(0, x)), op.log(op.add(_c(1, x), op.exp(op.negative(op.abs(x))))))
    return op.multiply(x, op.tanh(sp))


@converter("Gelu", since=20)
def gelu(node):
    x = node.input(0)
    approximate = node.expect("approximate", "none", "tanh")
    return op.nn.gelu(x) if approximate == "none" else op.nn.gelu_tanh(x)


@converter("Shrink", since=9)
def shrink(node):
    x = node.input(0)
    bias, lambd = node.attr("bias"), node.attr("lambd")
    low = op.add(x, _c(bias, x))
    high = op.subtract(x, _c(bias, x))
    out = op.where(
        op.less(x, _c(-lambd, x)), low, op.where(op.greater(x, _c(lambd, x)), high, op.zeros_like(x))
    )
    return out


# -- softmax family -------------------------------------------------------------------------


def _softmax_family(fn):
    def convert(node):
        x = node.input(0)
        ndim = ndim_of(x)
        if node.version >= 13:
            return fn(x, norm_axis(node.attr("axis"), ndim, node))
        axis = norm_axis(node.attr("axis", 1), ndim, node)
        shape = shape_of(x)
        rows, cols = tir.const(1, "int64"), tir.const(1, "int64")
        for d in shape[:axis]:
            rows = rows * d
        for d in shape[axis:]:
            cols = cols * d
        flat = op.reshape(x, shape_expr([rows, cols]))
        return op.reshape(fn(flat, 1), shape_expr(shape))

    return convert


def _hardmax(x, axis):
    idx = op.argmax(x, axis=axis, keepdims=True)
    dim = shape_of(x)[axis]
    positions = op.arange(0, relax.PrimValue(dim), 1, "int64")
    ndim = ndim_of(x)
    positions = op.reshape(positions, shape_expr([dim if i == axis else 1 for i in range(ndim)]))
    return op.astype(op.equal(idx, positions), dtype_of(x))


def _softmax(x, axis):
    """Half precision as ONNX's reference and numpy compute it: the shifted exponentials rounded
    to the input's dtype, their sum accumulated in float32 and rounded once, then divided."""
    dtype = dtype_of(x)
    if dtype not in ("float16", "bfloat16"):
        return op.nn.softmax(x, axis=axis)
    e = op.exp(op.subtract(x, op.max(x, axis=[axis], keepdims=True)))
    total = op.astype(op.sum(op.astype(e, "float32"), axis=[axis], keepdims=True), dtype)
    return op.divide(e, total)


converter("Softmax", since=1)(_softmax_family(_softmax))
converter("LogSoftmax", since=1)(_softmax_family(lambda x, a: op.nn.log_softmax(x, axis=a)))
converter("Hardmax", since=1)(_softmax_family(_hardmax))


# -- dropout --------------------------------------------------------------------------------


@converter("Dropout", since=1)
def dropout(node):
    """Inference: the identity (and an all-true mask). A training_mode known at import to be
    true needs a ratio of 0 (the identity again); one computed at run time becomes a run-time
    check that fails, naming the node, when it is true and the ratio is not 0."""
    node.attr("consumed_inputs", None)
    node.attr("is_test", None)
    node.attr("ratio", None)
    node.attr("seed", None)
    x = node.input(0)
    if node.has_input(2):
        training = node.const(2)
        ratio = node.const(1) if node.has_input(1) else np.asarray(0.5)
        if training is not None and ratio is not None:
            if bool(training.reshape(-1)[0]) and float(ratio.reshape(-1)[0]) != 0:
                raise node.error("training_mode=True (random dropout) is not supported")
        elif training is None or bool(training.reshape(-1)[0]):
            _check_no_dropout(node)
    node.mark_read(1)
    if len(node.outputs) > 1 and node.outputs[1]:
        return x, op.ones_like(x, "bool") if node.version >= 10 else op.ones_like(x)
    return x


def _check_no_dropout(node):
    """A run-time check that training_mode is false or the ratio is 0."""
    def scalar(index, dtype=None):
        value = op.reshape(node.input(index), shape_expr([]))
        return op.astype(value, dtype) if dtype else value

    off = op.logical_not(scalar(2, "bool"))
    if node.has_input(1):
        ratio = scalar(1)
        off = op.logical_or(off, op.equal(ratio, _c(0, ratio)))
    message = f"{node.where}: training_mode=True with a non-zero ratio (random dropout) is not supported"
    node.importer.emit(relax.op.assert_op(off, format=message))


# -- normalizations -------------------------------------------------------------------------


def _per_channel(param, ndim: int, axis: int = 1):
    """A 1-d per-channel parameter shaped to broadcast against a rank-`ndim` tensor at `axis`."""
    return op.reshape(param, shape_expr([shape_of(param)[0] if i == axis else 1 for i in range(ndim)]))


@converter("BatchNormalization", since=1)
def batch_norm(node):
    for legacy in ("consumed_inputs", "is_test", "spatial"):
        node.attr(legacy, None)
    momentum = node.attr("momentum", 0.9)  # moves the running statistics in training mode only
    training = node.version >= 14 and bool(node.attr("training_mode"))
    x, scale, bias, mean, var = (node.input(i) for i in range(5))
    if any(name for name in node.outputs[1:]) and node.version >= 14 and not training:
        raise node.error("the running statistics outputs need training_mode=1")
    eps = node.attr("epsilon")
    ndim = ndim_of(x)
    if training:
        return _batch_norm_training(x, scale, bias, mean, var, eps, momentum)
    if ndim_of(scale) == 1 and ndim > 1:
        scale, bias, mean, var = (_per_channel(p, ndim) for p in (scale, bias, mean, var))
    inv = op.divide(scale, op.sqrt(op.add(var, _c(eps, var))))
    return op.add(op.multiply(op.subtract(x, mean), inv), bias)


def _batch_norm_training(x, scale, bias, mean, var, eps, momentum):
    """training_mode=1: normalize with the batch's statistics (mean and biased variance over
    every axis but the channels); the running statistics move towards them by `momentum`."""
    ndim = ndim_of(x)
    axes = [a for a in range(ndim) if a != 1]
    batch_mean = op.mean(x, axis=axes, keepdims=True)
    centered = op.subtract(x, batch_mean)
    batch_var = op.mean(op.multiply(centered, centered), axis=axes, keepdims=True)
    scale_b, bias_b = (_per_channel(p, ndim) for p in (scale, bias))
    inv = op.divide(scale_b, op.sqrt(op.add(batch_var, _c(eps, batch_var))))
    y = op.add(op.multiply(centered, inv), bias_b)
    flat_mean = op.reshape(batch_mean, shape_expr([shape_of(x)[1]]))
    flat_var = op.reshape(batch_var, shape_expr([shape_of(x)[1]]))

    def running(old, new):
        new = op.astype(new, dtype_of(old))
        return op.add(op.multiply(old, _c(momentum, old)), op.multiply(new, _c(1 - momentum, old)))

    return y, running(mean, flat_mean), running(var, flat_var)


@converter("InstanceNormalization", since=1)
def instance_norm(node):
    node.attr("consumed_inputs", None)
    x, scale, bias = node.input(0), node.input(1), node.input(2)
    ndim = ndim_of(x)
    return op.nn.instance_norm(
        x, scale, bias, channel_axis=1, axes=list(range(2, ndim)), epsilon=node.attr("epsilon")
    )


def _moments(x, axes):
    mean = op.mean(x, axis=axes, keepdims=True)
    centered = op.subtract(x, mean)
    var = op.mean(op.multiply(centered, centered), axis=axes, keepdims=True)
    return mean, centered, var


@converter("LayerNormalization", since=17)
def layer_norm(node):
    x = node.input(0)
    ndim = ndim_of(x)
    axis = norm_axis(node.attr("axis"), ndim, node)
    eps = node.attr("epsilon")
    stash = node.attr("stash_type")
    scale = node.input(1)
    bias = node.input(2) if node.has_input(2) else None
    axes = list(range(axis, ndim))
    dtype = dtype_of(x)
    wants_stats = len(node.outputs) > 1 and any(node.outputs[1:])
    if not wants_stats and is_float(dtype) and dtype != "float16":
        gamma = (
            op.broadcast_to(scale, shape_expr(shape_of(x)[axis:])) if ndim_of(scale) != len(axes) else scale
        )
        beta = op.zeros_like(gamma) if bias is None else bias
        if bias is not None and ndim_of(bias) != len(axes):
            beta = op.broadcast_to(bias, shape_expr(shape_of(x)[axis:]))
        return op.nn.layer_norm(x, gamma, beta, axes=axes, epsilon=eps)
    compute = "float32" if stash == 1 and dtype in ("float16", "bfloat16") else dtype
    xc = op.astype(x, compute) if compute != dtype else x
    mean, centered, var = _moments(xc, axes)
    inv = op.rsqrt(op.add(var, relax.const(eps, compute)))
    y = op.multiply(centered, inv)
    y = op.astype(y, dtype) if compute != dtype else y
    y = op.multiply(y, scale)
    if bias is not None:
        y = op.add(y, bias)
    return y, mean, inv


@converter("GroupNormalization", since=18)
def group_norm(node):
    x, scale, bias = node.input(0), node.input(1), node.input(2)
    groups = node.attr("num_groups")
    eps = node.attr("epsilon")
    node.attr("stash_type", None)
    shape = shape_of(x)
    ndim = len(shape)
    n, c = shape[0], shape[1]
    grouped = op.reshape(x, shape_expr([n, groups, -1 if False else tir.floordiv(c, groups)] + shape[2:]))
    axes = list(range(2, ndim + 1))
    _, centered, var = _moments(grouped, axes)
    y = op.reshape(op.multiply(centered, op.rsqrt(op.add(var, _c(eps, x)))), shape_expr(shape))
    if node.version < 21:  # scale and bias per group
        per = tir.floordiv(c, groups)
        scale = op.reshape(
            op.broadcast_to(op.expand_dims(scale, [1]), shape_expr([groups, per])), shape_expr([c])
        )
        bias = op.reshape(
            op.broadcast_to(op.expand_dims(bias, [1]), shape_expr([groups, per])), shape_expr([c])
        )
    return op.add(op.multiply(y, _per_channel(scale, ndim)), _per_channel(bias, ndim))


@converter("RMSNormalization", since=23)
def rms_norm(node):
    x, scale = node.input(0), node.input(1)
    ndim = ndim_of(x)
    axis = norm_axis(node.attr("axis"), ndim, node)
    eps = node.attr("epsilon")
    node.attr("stash_type", None)
    axes = list(range(axis, ndim))
    dtype = dtype_of(x)
    xc = op.astype(x, "float32") if dtype in ("float16", "bfloat16") else x
    ms = op.mean(op.multiply(xc, xc), axis=axes, keepdims=True)
    y = op.multiply(xc, op.rsqrt(op.add(ms, relax.const(eps, dtype_of(xc)))))
    y = op.astype(y, dtype) if dtype != dtype_of(xc) else y
    return op.multiply(y, scale)


@converter("LpNormalization", since=1)
def lp_norm(node):
    x = node.input(0)
    axis = norm_axis(node.attr("axis"), ndim_of(x), node)
    p = node.expect("p", 1, 2)
    if p == 1:
        norm = op.sum(op.abs(x), axis=[axis], keepdims=True)
    else:
        norm = op.sqrt(op.sum(op.multiply(x, x), axis=[axis], keepdims=True))
    # a zero vector stays zero (ONNX's reference), not 0/0
    zero = op.zeros_like(norm)
    return op.divide(x, op.where(op.equal(norm, zero), op.ones_like(norm), norm))


@converter("MeanVarianceNormalization", since=9)
def mean_variance_norm(node):
    x = node.input(0)
    axes = [norm_axis(a, ndim_of(x), node) for a in node.attr("axes")]
    _, centered, var = _moments(x, axes)
    return op.divide(centered, op.add(op.sqrt(var), _c(1e-9, x)))


@converter("LRN", since=1)
def lrn(node):
    x = node.input(0)
    size = node.attr("size")
    alpha, beta, bias = node.attr("alpha"), node.attr("beta"), node.attr("bias")
    shape = shape_of(x)
    ndim = len(shape)
    sq = op.multiply(x, x)
    before, after = (size - 1) // 2, int(math.ceil((size - 1) / 2))
    width = [0, 0, before, after] + [0, 0] * (ndim - 2)
    padded = op.nn.pad(sq, width)
    total = None
    for k in range(size):
        window = op.strided_slice(padded, [1], [k], [k + 2**62])
        window = (
            op.strided_slice(window, [1], [0], [_dim_int(shape[1])])
            if isinstance(shape[1], tir.IntImm)
            else op.dynamic_strided_slice(window, [1], [0], [shape[1]], [1])
        )
        total = window if total is None else op.add(total, window)
    scale = op.add(_c(bias, x), op.multiply(_c(alpha / size, x), total))
    return op.divide(x, _power(scale, beta))


def _power(base, exponent: float):
    """`base ** exponent`; a multiple of 1/4 up to 2 (LRN's 0.75) as a product of `base`, its
    square root and fourth root: they vectorize, where a float `pow` is a libm call an element
    (AlexNet's first LRN took 16 ms that way, more than its convolution)."""
    quarters = exponent * 4
    if quarters != int(quarters) or not 0 < quarters <= 8 or not is_float(dtype_of(base)):
        return op.power(base, _c(exponent, base))
    whole, rest = divmod(int(quarters), 4)
    parts = [base] * whole
    root = op.sqrt(base) if rest else None
    if rest >= 2:
        parts.append(root)
    if rest % 2:
        parts.append(op.sqrt(root))
    out = parts[0]
    for part in parts[1:]:
        out = op.multiply(out, part)
    return out


def _dim_int(d) -> int:
    return int(d.value)
