"""Tensor creation as TE computes: `arange` and the triangle masks `trilu` (tril/triu).

>>> from graphc import te, topi
>>> [int(d) for d in topi.arange(0, 10, 3, "int64").shape]
[4]
>>> x = te.placeholder((3, 3), "float32", name="x")
>>> topi.trilu(x, 0, upper=False).op.name
'T_trilu'
"""

from __future__ import annotations

import math

from .. import te
from ..tir import expr as _e
from ..tir.arith import Analyzer


def arange(start, stop, step, dtype: str) -> te.Tensor:
    """`start, start + step, ...` below `stop` (numpy's arange), in `dtype`."""
    if all(isinstance(v, int | float) for v in (start, stop, step)):
        length = _e.const(max(0, math.ceil((stop - start) / step)), "int64")
    else:
        span = _e.cast(stop, "int64") - _e.cast(start, "int64")
        length = Analyzer().simplify(_e.floordiv(span + _e.cast(step, "int64") - 1, _e.cast(step, "int64")))
    return te.compute(
        (length,), lambda i: _e.cast(start, dtype) + _e.cast(i, dtype) * _e.cast(step, dtype), name="T_arange"
    )


def trilu(x: te.Tensor, k, upper: bool) -> te.Tensor:
    """`x` with elements below (upper) or above (lower) diagonal `k` of the last two axes zeroed."""
    k = _e.cast(k, "int64")

    def f(*i):
        row, col = _e.cast(i[-2], "int64"), _e.cast(i[-1], "int64")
        keep = col - row >= k if upper else col - row <= k
        return _e.select(keep, x(*i), _e.const(0, x.dtype))

    return te.compute(x.shape, f, name="T_trilu")


def shape_to_tensor(values) -> te.Tensor:
    """The 1-d int64 tensor of the (symbolic) sizes `values`: `[n, 4, m * 2]` at run time."""
    values = [_e.cast(v, "int64") for v in values]
    if len(values) == 1:
        return te.compute((_e.const(1, "int64"),), lambda i: values[0], name="T_shape_to_tensor")

    def f(i):
        out = _e.const(0, "int64")
        for k in reversed(range(len(values))):
            out = _e.select(i == _e.const(k, i.dtype), values[k], out)
        return out

    return te.compute((_e.const(len(values), "int64"),), f, name="T_shape_to_tensor")
