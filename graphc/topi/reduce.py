"""Reductions as TE computes: sum, prod, max, min, mean, variance, std, argmax, argmin.

`axis` is None (every axis), an int or a list of ints (negative counts from the end);
`keepdims` keeps reduced axes as size 1. Statistics use several stages in one PrimFunc.

>>> from graphc import te, topi
>>> x = te.placeholder((2, 3, 4), "float32", name="x")
>>> [int(d) for d in topi.sum(x, axis=[0, 2]).shape]
[3]
>>> [int(d) for d in topi.max(x, axis=-1, keepdims=True).shape]
[2, 3, 1]
>>> topi.argmax(x, axis=1).dtype
'int64'
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from ..tir import op as _op


def reduce_axes(ndim: int, axis) -> list[int]:
    """`axis` as a sorted list of non-negative axes (None: all of them)."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    return sorted({int(a) % ndim for a in axes})


def reduced_shape(shape, axes, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(_e.const(1, "int64") if k in axes else d for k, d in enumerate(shape))
    return tuple(d for k, d in enumerate(shape) if k not in axes)


def _comm_reduce(x: te.Tensor, axis, keepdims: bool, body, name: str) -> te.Tensor:
    """`body(x_element_expr, reduce_axes, index_of_element)` over the reduced axes of `x`."""
    ndim = len(x.shape)
    axes = reduce_axes(ndim, axis)
    raxes = [te.reduce_axis((_e.const(0, x.shape[a].dtype), x.shape[a]), name=f"k{a}") for a in axes]
    out_shape = reduced_shape(x.shape, axes, keepdims)

    def f(*index):
        it, r, full = iter(index), iter(raxes), []
        for k in range(ndim):
            if k in axes:
                full.append(next(r).var)
                if keepdims:
                    next(it)
            else:
                full.append(next(it))
        return body(x(*full), raxes, full)

    return te.compute(out_shape, f, name=name)


def _simple(reducer, tvm_name: str):
    def compute(x: te.Tensor, axis=None, keepdims: bool = False) -> te.Tensor:
        return _comm_reduce(
            x, axis, keepdims, lambda v, ks, _: reducer(v, axis=ks), f"{x.op.name}_{tvm_name}"
        )

    compute.__name__ = compute.__qualname__ = tvm_name
    compute.__doc__ = f"The {tvm_name} of `x` over `axis`."
    return compute


sum = _simple(te.sum, "sum")  # noqa: A001 - TVM's name
prod = _simple(te.prod, "prod")
max = _simple(te.max, "max")  # noqa: A001 - TVM's name
min = _simple(te.min, "min")  # noqa: A001 - TVM's name


def _count(x: te.Tensor, axis):
    count = _e.const(1, "int64")
    for a in reduce_axes(len(x.shape), axis):
        count = count * x.shape[a]
    return count


def mean(x: te.Tensor, axis=None, keepdims: bool = False) -> te.Tensor:
    """The arithmetic mean over `axis` (a sum, then a division by the element count)."""
    total = sum(x, axis, keepdims)
    count = _e.cast(_count(x, axis), x.dtype)
    return te.compute(total.shape, lambda *i: total(*i) / count, name="T_divide")


def variance(x: te.Tensor, axis=None, keepdims: bool = False) -> te.Tensor:
    """The population variance over `axis` (numpy's `var` with ddof=0)."""
    from .broadcast import broadcast_index

    avg = mean(x, axis, True)
    dev = te.compute(x.shape, lambda *i: x(*i) - avg(*broadcast_index(avg, x.shape, i)), name="T_subtract")
    sq = te.compute(x.shape, lambda *i: dev(*i) * dev(*i), name="T_multiply")
    return mean(sq, axis, keepdims)


def std(x: te.Tensor, axis=None, keepdims: bool = False) -> te.Tensor:
    """The population standard deviation over `axis`."""
    var = variance(x, axis, keepdims)
    return te.compute(var.shape, lambda *i: _op.sqrt(var(*i)), name="T_sqrt")


def _arg_reducer(better, worst, name):
    def fcombine(a, b):
        keep = _e._compare(_e.NE, a[0], _e.const(-1, a[0].dtype)) & better(a[1], b[1])
        keep = keep | _e._compare(_e.EQ, b[0], _e.const(-1, b[0].dtype))
        return _e.select(keep, a[0], b[0]), _e.select(keep, a[1], b[1])

    return te.comm_reducer(fcombine, lambda t0, t1: (_e.const(-1, t0), worst(t1)), name=name)


_argmax = _arg_reducer(lambda a, b: a >= b, _op.min_value, "argmax")
_argmin = _arg_reducer(lambda a, b: a <= b, _op.max_value, "argmin")


def _arg(reducer, x: te.Tensor, axis, keepdims: bool, name: str) -> te.Tensor:
    if axis is not None and not isinstance(axis, int):
        raise ValueError(f"topi.{name} takes one axis or None, got {axis!r}")
    axes = reduce_axes(len(x.shape), axis)

    def body(v, ks, full):
        flat = _e.const(0, "int64")
        for a in axes:
            flat = flat * x.shape[a] + _e.cast(full[a], "int64")
        return reducer((flat, v), axis=ks)[0]

    return _comm_reduce(x, axis, keepdims, body, f"{x.op.name}_{name}")


def argmax(x: te.Tensor, axis=None, keepdims: bool = False) -> te.Tensor:
    """The (first) index of the largest element along `axis` (None: of the flattened `x`), int64."""
    return _arg(_argmax, x, axis, keepdims, "argmax")


def argmin(x: te.Tensor, axis=None, keepdims: bool = False) -> te.Tensor:
    """The (first) index of the smallest element along `axis` (None: of the flattened `x`), int64."""
    return _arg(_argmin, x, axis, keepdims, "argmin")


def dynamic_reduce(x: te.Tensor, mask, kind: str = "sum") -> te.Tensor:
    """`kind` (sum, prod, max, min) of `x` over the axes `k` with `mask[k] == 1`, the mask
    known only at run time (symbolic 0/1 PrimExprs), keeping every axis (reduced ones with
    size 1). No branches: axis k has extent `1 + m * (d - 1)` in the reduction and
    `d - m * (d - 1)` in the result, and is read at the sum of both indices."""
    reducer = {"sum": te.sum, "prod": te.prod, "max": te.max, "min": te.min}[kind]
    i64 = "int64"
    ndim = len(x.shape)
    mask = [_e.cast(m, i64) if isinstance(m, _e.PrimExpr) else _e.const(int(m), i64) for m in mask]
    dims = [_e.cast(d, i64) for d in x.shape]
    one = _e.const(1, i64)
    raxes = [te.reduce_axis((_e.const(0, i64), one + mask[k] * (dims[k] - one)), name=f"k{k}")
             for k in range(ndim)]
    out_shape = tuple(dims[k] - mask[k] * (dims[k] - one) for k in range(ndim))

    def f(*index):
        return reducer(x(*(raxes[k].var + _e.cast(index[k], i64) for k in range(ndim))), axis=raxes)

    return te.compute(out_shape, f, name=f"T_dynamic_{kind}")
