"""Linear algebra: MatMul, Gemm, Einsum, Det.

Gemm is `alpha * A' @ B' + beta * C` with A' and B' transposed as `transA`/`transB` say.
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from .common import Emitting, const_like, dtype_of, ndim_of, shape_expr, shape_of
from .registry import converter

op = Emitting(relax.op)


@converter("MatMul", since=1)
def matmul(node):
    """Half-precision products accumulate in float32 and round once (as numpy, ONNX's reference
    and ONNX Runtime do): a float16 running sum loses the low bits of long dot products."""
    a, b = node.input(0), node.input(1)
    if dtype_of(a) in ("float16", "bfloat16") and dtype_of(b) == dtype_of(a):
        return op.astype(op.matmul(a, b, out_dtype="float32"), dtype_of(a))
    return op.matmul(a, b)


@converter("Gemm", since=1)
def gemm(node):
    node.attr("broadcast", None)
    a, b = node.input(0), node.input(1)
    alpha, beta = node.attr("alpha"), node.attr("beta")
    if node.attr("transA"):
        a = op.permute_dims(a, [1, 0])
    if node.attr("transB"):
        b = op.permute_dims(b, [1, 0])
    y = op.matmul(a, b)
    if alpha != 1.0:
        y = op.multiply(y, const_like(alpha, a))
    c = node.input(2) if node.has_input(2) else None
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = op.multiply(c, const_like(beta, c))
        y = op.add(y, c)
    return y


@converter("Einsum", since=12)
def einsum(node):
    equation = node.attr("equation").replace(" ", "")
    values = node.input_list()
    dtype = dtype_of(values[0])
    return op.einsum([v if dtype_of(v) == dtype else op.astype(v, dtype) for v in values], equation)


@converter("Det", since=11)
def det(node):
    """The determinant of each square matrix of the last two axes, by Gaussian elimination with
    partial pivoting unrolled over the (static) matrix size: each step moves the largest
    remaining entry of its column onto the diagonal (a row swap flips the sign) and clears
    the column below it; the determinant is the signed product of the pivots. Half-precision
    inputs are eliminated in float32."""
    x = node.input(0)
    dtype = dtype_of(x)
    rank = ndim_of(x)
    n_dim, m_dim = shape_of(x)[-2:]
    if not isinstance(n_dim, tir.IntImm) or not isinstance(m_dim, tir.IntImm):
        raise node.error(f"the matrix size must be known at import (the elimination is unrolled), "
                         f"got {n_dim} x {m_dim}")
    n = int(n_dim.value)
    if n != int(m_dim.value):
        raise node.error(f"expects square matrices, got {n} x {int(m_dim.value)}")
    a = op.astype(x, "float32") if dtype in ("float16", "bfloat16") else x
    work = dtype_of(a)
    batch = shape_of(x)[:-2]
    if n == 0:
        return op.full(shape_expr(batch), relax.const(1, dtype), dtype)
    rows = relax.const(np.arange(n, dtype="int64"))
    result = sign = None
    for k in range(n):
        col = op.squeeze(op.strided_slice(a, [rank - 1], [k], [k + 1]), [rank - 1])  # (..., n)
        remaining = relax.const(np.arange(n) >= k)
        candidates = op.where(remaining, op.abs(col), relax.const(-1, work))
        p = op.argmax(candidates, axis=-1, keepdims=True)  # (..., 1)
        kk = relax.const(k, "int64")
        order = op.where(op.equal(rows, kk), p, op.where(op.equal(rows, p), kk, rows))
        order = op.broadcast_to(op.expand_dims(order, [rank - 1]), shape_expr(shape_of(a)))
        a = op.gather_elements(a, order, axis=rank - 2)
        flip = op.where(op.equal(op.squeeze(p, [rank - 2]), kk), relax.const(1, work), relax.const(-1, work))
        sign = flip if sign is None else op.multiply(sign, flip)
        row = op.strided_slice(a, [rank - 2], [k], [k + 1])  # (..., 1, n)
        pivot = op.strided_slice(row, [rank - 1], [k], [k + 1])  # (..., 1, 1)
        value = op.reshape(pivot, shape_expr(batch))
        result = value if result is None else op.multiply(result, value)
        if k == n - 1:
            break
        safe = op.where(op.equal(pivot, relax.const(0, work)), relax.const(1, work), pivot)
        below = relax.const((np.arange(n) > k).reshape(n, 1))
        column = op.strided_slice(a, [rank - 1], [k], [k + 1])  # (..., n, 1)
        factor = op.where(below, op.divide(column, safe), relax.const(0, work))
        a = op.subtract(a, op.multiply(factor, row))
    result = op.multiply(result, sign)
    return op.astype(result, dtype) if work != dtype else result
