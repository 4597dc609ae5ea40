"""Convolutions and pooling: Conv, ConvTranspose, MaxPool, AveragePool, LpPool, the global
pools and MaxUnpool.

`auto_pad` (SAME_UPPER, SAME_LOWER, VALID) becomes explicit padding computed from the
input's spatial sizes, which must then be static.
"""

from __future__ import annotations

from ... import relax, tir
from .common import Emitting, const_like, dtype_of, ndim_of, shape_expr, shape_of, static_shape
from .registry import converter

op = Emitting(relax.op)

_CONV = {1: op.nn.conv1d, 2: op.nn.conv2d, 3: op.nn.conv3d}
_CONV_T = {1: op.nn.conv1d_transpose, 2: op.nn.conv2d_transpose, 3: op.nn.conv3d_transpose}
_MAX_POOL = {1: op.nn.max_pool1d, 2: op.nn.max_pool2d, 3: op.nn.max_pool3d}
_AVG_POOL = {1: op.nn.avg_pool1d, 2: op.nn.avg_pool2d, 3: op.nn.avg_pool3d}


def _spatial(node, x, kernel, strides, dilations):
    """ONNX pads (befores then afters) from `pads` or `auto_pad`."""
    nd = len(kernel)
    auto = node.attr("auto_pad", "NOTSET")
    pads = node.attr("pads", None)
    if auto in ("NOTSET", ""):
        return list(pads) if pads else [0] * (2 * nd)
    if auto == "VALID":
        return [0] * (2 * nd)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.unsupported("auto_pad", auto)
    sizes = static_shape(x)
    if sizes is None:
        raise node.error(f"auto_pad={auto} needs static spatial sizes, got {shape_of(x)}")
    befores, afters = [], []
    for i in range(nd):
        size = sizes[2 + i]
        out = -(-size // strides[i])
        total = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0)
        small, big = total // 2, total - total // 2
        befores.append(small if auto == "SAME_UPPER" else big)
        afters.append(big if auto == "SAME_UPPER" else small)
    return befores + afters


def _bias(y, bias, nd):
    if bias is None:
        return y
    return op.add(y, op.reshape(bias, shape_expr([shape_of(bias)[0]] + [1] * nd)))


@converter("Conv", since=1)
def conv(node):
    x, w = node.input(0), node.input(1)
    bias = node.input(2) if node.has_input(2) else None
    nd = ndim_of(x) - 2
    if nd not in _CONV:
        raise node.error(f"{nd}-d convolution is not supported")
    kernel = node.attr("kernel_shape", None) or [int(d.value) for d in shape_of(w)[2:]]
    strides = node.attr("strides", None) or [1] * nd
    dilations = node.attr("dilations", None) or [1] * nd
    pads = _spatial(node, x, kernel, strides, dilations)
    groups = node.attr("group")
    y = _CONV[nd](x, w, strides=strides, padding=pads, dilation=dilations, groups=groups)
    return _bias(y, bias, nd)


@converter("ConvTranspose", since=1)
def conv_transpose(node):
    x, w = node.input(0), node.input(1)
    bias = node.input(2) if node.has_input(2) else None
    nd = ndim_of(x) - 2
    if nd not in _CONV_T:
        raise node.error(f"{nd}-d transposed convolution is not supported")
    kernel = node.attr("kernel_shape", None) or [int(d.value) for d in shape_of(w)[2:]]
    strides = node.attr("strides", None) or [1] * nd
    dilations = node.attr("dilations", None) or [1] * nd
    groups = node.attr("group")
    out_pad = node.attr("output_padding", None) or [0] * nd
    output_shape = node.attr("output_shape", None)
    auto = node.attr("auto_pad", "NOTSET")
    pads = node.attr("pads", None)
    sizes = static_shape(x)
    if output_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        if sizes is None:
            raise node.error("output_shape / auto_pad need static input sizes")
        target = (
            list(output_shape)[-nd:]
            if output_shape is not None
            else [s * st for s, st in zip(sizes[2:], strides)]
        )
        befores, afters = [], []
        for i in range(nd):
            full = strides[i] * (sizes[2 + i] - 1) + out_pad[i] + ((kernel[i] - 1) * dilations[i] + 1)
            total = full - target[i]
            if total < 0:  # the output is larger than the convolution reaches: extend it at the end
                out_pad = list(out_pad)
                out_pad[i] += -total
                total = 0
            if auto == "SAME_UPPER":
                befores.append(total // 2)
                afters.append(total - total // 2)
            else:
                befores.append(total - total // 2)
                afters.append(total // 2)
        pads = befores + afters
    elif auto == "VALID" or not pads:
        pads = [0] * (2 * nd)
    elif auto not in ("NOTSET", ""):
        raise node.unsupported("auto_pad", auto)
    y = _CONV_T[nd](
        x, w, strides=strides, padding=list(pads), output_padding=out_pad, dilation=dilations, groups=groups
    )
    return _bias(y, bias, nd)


def _pool(node, table, kind: str):
    x = node.input(0)
    nd = ndim_of(x) - 2
    if nd not in table:
        raise node.error(f"{nd}-d pooling is not supported")
    kernel = node.attr("kernel_shape")
    strides = node.attr("strides", None) or [1] * nd
    dilations = node.attr("dilations", None) or [1] * nd
    pads = _spatial(node, x, kernel, strides, dilations)
    ceil_mode = bool(node.attr("ceil_mode", 0))
    count_include_pad = bool(node.attr("count_include_pad", 0)) if kind == "avg" else False
    indices = kind == "max" and len(node.outputs) > 1 and bool(node.outputs[1])
    storage_order = node.attr("storage_order", 0) if kind == "max" else 0  # only the Indices read it
    if indices and nd != 2:
        raise node.error(f"the Indices output of {nd}-d MaxPool is not supported (2-d is)")
    y = table[nd](
        x,
        pool_size=kernel,
        strides=strides,
        padding=pads,
        dilation=dilations,
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
    )
    if not indices:
        return y
    flat = op.image_regions.max_pool2d_indices(
        x, shape_of(y)[2:], kernel, strides, pads, dilations, storage_order
    )
    return y, flat


@converter("MaxPool", since=1)
def max_pool(node):
    return _pool(node, _MAX_POOL, "max")


@converter("AveragePool", since=1)
def avg_pool(node):
    return _pool(node, _AVG_POOL, "avg")


@converter("LpPool", since=1)
def lp_pool(node):
    x = node.input(0)
    nd = ndim_of(x) - 2
    p = node.attr("p", 2)
    kernel = node.attr("kernel_shape")
    strides = node.attr("strides", None) or [1] * nd
    dilations = node.attr("dilations", None) or [1] * nd
    pads = _spatial(node, x, kernel, strides, dilations)
    ceil_mode = bool(node.attr("ceil_mode", 0))
    powered = op.power(op.abs(x), const_like(float(p), x))
    count = 1
    for k in kernel:
        count *= k
    pooled = _AVG_POOL[nd](
        powered,
        pool_size=kernel,
        strides=strides,
        padding=pads,
        dilation=dilations,
        ceil_mode=ceil_mode,
        count_include_pad=True,
    )
    return op.power(op.multiply(pooled, const_like(float(count), x)), const_like(1.0 / p, x))


@converter("GlobalAveragePool", since=1)
def global_avg_pool(node):
    x = node.input(0)
    return op.mean(x, axis=list(range(2, ndim_of(x))), keepdims=True)


@converter("GlobalMaxPool", since=1)
def global_max_pool(node):
    x = node.input(0)
    return op.max(x, axis=list(range(2, ndim_of(x))), keepdims=True)


@converter("GlobalLpPool", since=2)
def global_lp_pool(node):
    x = node.input(0)
    p = float(node.attr("p"))
    axes = list(range(2, ndim_of(x)))
    total = op.sum(op.power(op.abs(x), const_like(p, x)), axis=axes, keepdims=True)
    return op.power(total, const_like(1.0 / p, x))


__all__ = ["tir"]


@converter("MaxUnpool", since=9)
def max_unpool(node):
    """MaxPool's values put back at MaxPool's flat indices of a zero tensor: a scatter into the
    flattened output of the size the pooling attributes give (an index outside it stops the
    run), then zero-padded at the end up to `output_shape` (constant or run-time) if given."""
    x, indices = node.input(0), node.input(1)
    nd = ndim_of(x) - 2
    if nd < 1:
        raise node.error(f"MaxUnpool needs a tensor of rank 3 or more, got rank {nd + 2}")
    kernel = node.attr("kernel_shape")
    strides = node.attr("strides", None) or [1] * nd
    pads = node.attr("pads", None) or [0] * (2 * nd)
    shape = shape_of(x)
    inferred = shape[:2] + [
        (shape[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[nd + i] for i in range(nd)
    ]
    total = inferred[0]
    for d in inferred[1:]:
        total = total * d
    flat = op.zeros(shape_expr(node.importer.bind_prims([total], "unpool")), dtype_of(x))
    count = shape[0]
    for d in shape[1:]:
        count = count * d
    count = shape_expr(node.importer.bind_prims([count], "unpool"))
    if static_shape(indices) != static_shape(x) or len(shape_of(indices)) != len(shape):
        raise node.error(f"indices {shape_of(indices)} must have the shape of X {shape}")
    idx = op.reshape(indices if dtype_of(indices) == "int64" else op.astype(indices, "int64"), count)
    out = op.scatter_elements(flat, idx, op.reshape(x, count), axis=0)
    out = op.reshape(out, shape_expr(node.importer.bind_prims(inferred, "unpool")))
    if not node.has_input(2):
        return out
    # a larger output_shape (ONNX's reference): the unpooled values at its start, zeros after
    target = node.ints(2, "output_shape")
    if len(target) != nd + 2:
        raise node.error(f"output_shape has {len(target)} values; it needs {nd + 2}")
    zero = tir.const(0, "int64")
    grow = [t - d for t, d in zip(target[2:], inferred[2:])]
    after = node.importer.bind_prims([zero, zero] + grow, "unpool")
    fill = relax.const(0, dtype_of(x))
    return op.nn.dynamic_pad(out, [zero] * (nd + 2), after, fill, "constant")
