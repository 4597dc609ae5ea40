"""Linear algebra: MatMul, Gemm, Einsum.

Gemm is `alpha * A' @ B' + beta * C` with A' and B' transposed as `transA`/`transB` say.
"""

from __future__ import annotations

from ... import relax
from .common import Emitting, const_like, dtype_of
from .registry import converter

op = Emitting(relax.op)


@converter("MatMul", since=1)
def matmul(node):
    return op.matmul(node.input(0), node.input(1))


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
