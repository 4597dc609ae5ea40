"""Matrix products and their scaled-and-added forms (linear, addmm, baddbmm, addmv, addr, ...),
einsum and outer products, and pairwise distances (cdist, pdist)."""

from __future__ import annotations

import math

import numpy as np

from .... import relax, tir
from .common import dtype_of, ndim_of, shape_values
from .registry import converter

op = relax.op


@converter("aten.linear.default")
def _linear(importer, args):
    x, weight, bias = args["input"], args["weight"], args["bias"]
    dtype = args.out_dtype
    y = op.matmul(x, importer.emit(op.permute_dims(weight, None)), out_dtype=dtype)
    if bias is None:
        return y
    return op.add(importer.emit(y), bias)


@converter("aten.addmm.default")
def _addmm(importer, args):
    bias, a, b = args["self"], args["mat1"], args["mat2"]
    beta, alpha = args["beta"], args["alpha"]
    dtype = args.out_dtype
    y = importer.emit(op.matmul(a, b, out_dtype=dtype))
    if alpha != 1:
        y = importer.emit(op.multiply(y, relax.const(alpha, dtype)))
    if beta == 0:
        return y
    if beta != 1:
        bias = importer.emit(op.multiply(bias, relax.const(beta, dtype)))
    return op.add(y, bias)


@converter("aten.mm.default", "aten.bmm.default", "aten.matmul.default")
def _matmul(importer, args):
    other = "mat2" if "mat2" in args.values else "other"
    return op.matmul(args["self"], args[other], out_dtype=args.out_dtype)


@converter("aten.addmv.default", "aten.addbmm.default", "aten.baddbmm.default", "aten.addr.default")
def _add_products(importer, args):
    """beta * self + alpha * (a product of the two other operands)."""
    dtype = args.out_dtype
    name = args.op
    if name.startswith("aten.addmv"):
        product = op.matmul(args["mat"], args["vec"], out_dtype=dtype)
    elif name.startswith("aten.addr"):
        product = op.outer(args["vec1"], args["vec2"])
    else:
        product = op.matmul(args["batch1"], args["batch2"], out_dtype=dtype)
        if name.startswith("aten.addbmm"):  # summed over the batch
            product = op.sum(importer.emit(product), [0], False)
    product = importer.emit(product)
    alpha, beta = args["alpha"], args["beta"]
    if alpha != 1:
        product = importer.emit(op.multiply(product, relax.const(alpha, dtype)))
    if beta == 0:  # PyTorch ignores self's values then (NaNs included), only its shape counts
        args.ignore("self")
        return op.broadcast_to(product, relax.ShapeExpr(shape_values(args.out_shape)))
    bias = args["self"]
    if beta != 1:
        bias = importer.emit(op.multiply(bias, relax.const(beta, dtype)))
    return op.add(product, bias)


@converter("aten.einsum.default")
def _einsum(importer, args):
    args.ignore("path")
    return op.einsum(relax.Tuple(list(args["tensors"])), args["equation"])


@converter("aten.outer.default")
def _outer(importer, args):
    return op.outer(args["self"], args["vec2"])


@converter("aten._cdist_forward.default")
def _cdist(importer, args):
    """p-norm distances between the rows of x1 (…, P, M) and of x2 (…, R, M)."""
    x1, x2 = args["x1"], args["x2"]
    args.ignore("compute_mode")  # picks an algorithm (matmul or direct), not the result
    n = ndim_of(x1)
    a = importer.emit(op.expand_dims(x1, n - 1))  # (…, P, 1, M)
    b = importer.emit(op.expand_dims(x2, n - 2))  # (…, 1, R, M)
    diff = importer.emit(op.subtract(a, b))
    return _p_norm(importer, diff, float(args["p"]), n)


@converter("aten._pdist_forward.default")
def _pdist(importer, args):
    """p-norm distances between every pair i < j of rows of a (N, M) input, in row-major order."""
    x = args["self"]
    rows = x.struct_info.shape_values[0]
    if not isinstance(rows, tir.IntImm):
        raise args.unsupported("self", "must have a static number of rows")
    first, second = np.triu_indices(rows.value, 1)
    a = importer.emit(op.take(x, relax.const(first.astype("int64"), "int64"), axis=0))
    b = importer.emit(op.take(x, relax.const(second.astype("int64"), "int64"), axis=0))
    return _p_norm(importer, importer.emit(op.subtract(a, b)), float(args["p"]), 1)


def _p_norm(importer, diff, p: float, axis: int):
    dtype = dtype_of(diff)
    if p == 0:
        nonzero = importer.emit(op.astype(op.not_equal(diff, relax.const(0, dtype)), dtype))
        return op.sum(nonzero, [axis], False)
    magnitude = importer.emit(op.abs(diff))
    if math.isinf(p):
        return op.max(magnitude, [axis], False)
    if p == 1:
        return op.sum(magnitude, [axis], False)
    if p == 2:
        return op.sqrt(importer.emit(op.sum(importer.emit(op.multiply(diff, diff)), [axis], False)))
    powered = importer.emit(op.power(magnitude, relax.const(p, dtype)))
    return op.power(importer.emit(op.sum(powered, [axis], False)), relax.const(1.0 / p, dtype))
