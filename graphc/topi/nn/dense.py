"""`dense` (TVM's fully connected layer) and `batch_flatten`.

>>> from graphc import te, topi
>>> x = te.placeholder((2, 4), "float32", name="x")
>>> w = te.placeholder((3, 4), "float32", name="w")
>>> [int(d) for d in topi.nn.dense(x, w).shape]
[2, 3]
"""

from __future__ import annotations

from ... import te
from ...tir import expr as _e


def dense(data: te.Tensor, weight: te.Tensor, bias: te.Tensor | None = None, out_dtype: str | None = None):
    """`data @ weight.T (+ bias)`: data (batch, in), weight (out, in), bias (out,)."""
    out_dtype = out_dtype or data.dtype
    k = te.reduce_axis((0, data.shape[-1]), "k")
    batch = data.shape[:-1]

    def f(*i):
        *rows, j = i
        return te.sum(_e.cast(data(*rows, k), out_dtype) * _e.cast(weight(j, k), out_dtype), axis=k)

    out = te.compute((*batch, weight.shape[0]), f, name="T_matmul_NT")
    if bias is None:
        return out
    return te.compute(out.shape, lambda *i: out(*i) + _e.cast(bias(i[-1]), out_dtype), name="T_add")


def batch_flatten(data: te.Tensor) -> te.Tensor:
    """`data` reshaped to (batch, everything else)."""
    inner = _e.const(1, "int64")
    for d in data.shape[1:]:
        inner = inner * d
    dims = data.shape[1:]

    def f(n, j):
        index = []
        for d in reversed(dims):
            index.append(_e.floormod(j, d))
            j = _e.floordiv(j, d)
        return data(n, *reversed(index))

    return te.compute((data.shape[0], inner), f, name="T_batch_flatten")


__all__ = ["batch_flatten", "dense"]
