"""Quantization: QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; integer,
int4/uint4/int2/uint2 and float8/float4 targets), DynamicQuantizeLinear, QLinearMatMul,
QLinearConv, MatMulInteger, ConvInteger.

Integers round half to even and saturate to their type's range; float8 targets encode with
`relax.encode_float` (zero points of float8 types are 0). Narrow types are held in their
storage dtype (dtypes.NARROW) and tagged by name on the importer.
"""

from __future__ import annotations

import numpy as np

from ... import relax
from .common import Emitting, dtype_of, ndim_of, norm_axis, shape_expr, shape_of
from .dtypes import NARROW, NARROW_BITS, graphc_dtype, is_float, narrow_format
from .registry import converter

op = Emitting(relax.op)

_INT_RANGE = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int4": (-8, 7),
    "uint4": (0, 15),
    "int2": (-2, 1),
    "uint2": (0, 3),
}


def _broadcast_param(node, param, x, axis, block_size):
    """A scale or zero point shaped to broadcast against `x`: per tensor, per axis or blocked."""
    nd = ndim_of(x)
    prank = ndim_of(param)
    if prank == 0 or (prank == 1 and shape_of(param)[0] == 1 and not block_size):
        return param if prank == 0 else op.reshape(param, relax.ShapeExpr([]))
    axis = norm_axis(axis, nd, node)
    if block_size:
        repeated = op.repeat(param, block_size, axis=axis)
        dim = shape_of(x)[axis]
        return (
            op.strided_slice(repeated, [axis], [0], [int(dim.value)]) if hasattr(dim, "value") else repeated
        )
    return op.reshape(param, shape_expr([shape_of(param)[0] if i == axis else 1 for i in range(nd)]))


def _target(node, zero_point_index: int):
    """(storage dtype, narrow format or None) of the quantized values."""
    if node.has_input(zero_point_index):
        fmt = node.importer.narrow_of(node.inputs[zero_point_index])
        return dtype_of(node.input(zero_point_index)), fmt
    output_dtype = node.attr("output_dtype", 0) if node.version >= 21 else 0
    if output_dtype:
        return graphc_dtype(output_dtype, "output_dtype"), narrow_format(output_dtype)
    return "uint8", None


@converter("QuantizeLinear", since=10)
def quantize_linear(node):
    x, scale = node.input(0), node.input(1)
    axis = node.attr("axis", 1) if node.version >= 13 else 1
    block = node.attr("block_size", 0) if node.version >= 21 else 0
    saturate = bool(node.attr("saturate", 1)) if node.version >= 19 else True
    if node.version >= 23:
        node.attr("precision", 0)
    storage, fmt = _target(node, 2)
    compute = "float32" if dtype_of(x) != "float64" else "float64"
    xs = op.divide(op.astype(x, compute), op.astype(_broadcast_param(node, scale, x, axis, block), compute))
    if fmt is not None and not fmt.startswith(("int", "uint")):  # a float8 / float4 format
        node.set_narrow(0, fmt)
        return op.encode_float(xs, fmt, saturate)
    name = fmt or storage
    lo, hi = _INT_RANGE[name]
    q = op.round(xs)  # half to even
    if node.has_input(2):
        zp = _broadcast_param(node, node.input(2), x, axis, block)
        q = op.add(q, op.astype(zp, compute))
    q = op.minimum(op.maximum(q, relax.const(lo, compute)), relax.const(hi, compute))
    if fmt is not None:
        node.set_narrow(0, fmt)
    return op.astype(q, storage)


@converter("DequantizeLinear", since=10)
def dequantize_linear(node):
    x, scale = node.input(0), node.input(1)
    axis = node.attr("axis", 1) if node.version >= 13 else 1
    block = node.attr("block_size", 0) if node.version >= 21 else 0
    out_dtype = dtype_of(scale)
    if node.version >= 23:
        requested = node.attr("output_dtype", 0)
        if requested:
            out_dtype = graphc_dtype(requested, "output_dtype")
    fmt = node.importer.narrow_of(node.inputs[0])
    compute = "float32" if out_dtype != "float64" else "float64"
    s = op.astype(_broadcast_param(node, scale, x, axis, block), compute)
    if fmt is not None and not fmt.startswith(("int", "uint")):
        value = op.decode_float(x, fmt, compute)
        node.mark_read(2)  # a float8 zero point is 0
    else:
        value = op.astype(x, compute)
        if node.has_input(2):
            zp = _broadcast_param(node, node.input(2), x, axis, block)
            value = op.subtract(value, op.astype(zp, compute))
    y = op.multiply(value, s)
    return op.astype(y, out_dtype) if out_dtype != compute else y


@converter("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(node):
    x = node.input(0)
    zero = relax.const(0.0, "float32")
    lo = op.minimum(op.min(x), zero)
    hi = op.maximum(op.max(x), zero)
    scale = op.divide(op.subtract(hi, lo), relax.const(255.0, "float32"))
    zp_float = op.round(op.subtract(zero, op.divide(lo, scale)))
    zp_float = op.minimum(op.maximum(zp_float, zero), relax.const(255.0, "float32"))
    q = op.add(op.round(op.divide(x, scale)), zp_float)
    q = op.minimum(op.maximum(q, zero), relax.const(255.0, "float32"))
    return op.astype(q, "uint8"), scale, op.astype(zp_float, "uint8")


def _int_operand(node, index, zp_index):
    """An integer operand minus its zero point, as int32."""
    value = op.astype(node.input(index), "int32")
    if node.has_input(zp_index):
        zp = node.input(zp_index)
        if ndim_of(zp) == 1 and ndim_of(node.input(index)) >= 2 and shape_of(zp)[0] != 1:
            # per-row zero point of A (M) or per-column of B (N)
            zp = op.expand_dims(zp, [1]) if index == 0 else zp
        value = op.subtract(value, op.astype(zp, "int32"))
    return value


@converter("MatMulInteger", since=10)
def matmul_integer(node):
    a = _int_operand(node, 0, 2)
    b = _int_operand(node, 1, 3)
    return op.matmul(a, b, out_dtype="int32")


@converter("ConvInteger", since=10)
def conv_integer(node):
    from .conv import _CONV, _spatial

    x = _int_operand(node, 0, 2)
    w = op.astype(node.input(1), "int32")
    if node.has_input(3):
        zp = node.input(3)
        if ndim_of(zp) == 1 and shape_of(zp)[0] != 1:
            zp = op.reshape(zp, shape_expr([shape_of(zp)[0]] + [1] * (ndim_of(w) - 1)))
        w = op.subtract(w, op.astype(zp, "int32"))
    nd = ndim_of(x) - 2
    kernel = node.attr("kernel_shape", None) or [int(d.value) for d in shape_of(w)[2:]]
    strides = node.attr("strides", None) or [1] * nd
    dilations = node.attr("dilations", None) or [1] * nd
    pads = _spatial(node, node.input(0), kernel, strides, dilations)
    return _CONV[nd](
        x, w, strides=strides, padding=pads, dilation=dilations, groups=node.attr("group"), out_dtype="int32"
    )


def _requantize(node, acc, scale, zp, storage):
    """float accumulator -> quantized `storage` values with `scale` and zero point `zp`."""
    lo, hi = _INT_RANGE[storage]
    q = op.add(op.round(op.divide(acc, scale)), op.astype(zp, "float32"))
    q = op.minimum(op.maximum(q, relax.const(float(lo), "float32")), relax.const(float(hi), "float32"))
    return op.astype(q, storage)


def _dequant(node, index, scale_index, zp_index, axis=None):
    x = node.input(index)
    s = op.astype(node.input(scale_index), "float32")
    zp = op.astype(node.input(zp_index), "float32")
    if axis is not None and ndim_of(s) == 1 and shape_of(s)[0] != 1:
        shape = [shape_of(s)[0] if i == axis else 1 for i in range(ndim_of(x))]
        s, zp = op.reshape(s, shape_expr(shape)), op.reshape(zp, shape_expr(shape))
    return op.multiply(op.subtract(op.astype(x, "float32"), zp), s)


@converter("QLinearMatMul", since=10)
def qlinear_matmul(node):
    a = _dequant(node, 0, 1, 2, axis=0 if ndim_of(node.input(0)) >= 2 else None)
    b = _dequant(node, 3, 4, 5, axis=ndim_of(node.input(3)) - 1)
    y = op.matmul(a, b)
    storage = dtype_of(node.input(7))
    scale = op.astype(node.input(6), "float32")
    return _requantize(node, y, scale, node.input(7), storage)


@converter("QLinearConv", since=10)
def qlinear_conv(node):
    from .conv import _CONV, _spatial

    x = _dequant(node, 0, 1, 2)
    w = _dequant(node, 3, 4, 5, axis=0)
    nd = ndim_of(x) - 2
    kernel = node.attr("kernel_shape", None) or [int(d.value) for d in shape_of(w)[2:]]
    strides = node.attr("strides", None) or [1] * nd
    dilations = node.attr("dilations", None) or [1] * nd
    pads = _spatial(node, node.input(0), kernel, strides, dilations)
    y = _CONV[nd](x, w, strides=strides, padding=pads, dilation=dilations, groups=node.attr("group"))
    if node.has_input(8):
        bias = op.astype(node.input(8), "float32")
        xs = op.astype(node.input(1), "float32")
        ws = op.astype(node.input(4), "float32")
        bias = op.multiply(bias, op.multiply(xs, ws))
        y = op.add(y, op.reshape(bias, shape_expr([shape_of(bias)[0]] + [1] * nd)))
    storage = dtype_of(node.input(7))
    return _requantize(node, y, op.astype(node.input(6), "float32"), node.input(7), storage)


__all__ = ["NARROW", "NARROW_BITS", "is_float", "np"]
