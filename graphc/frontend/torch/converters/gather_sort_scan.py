"""Gather and scatter (and one_hot), sorting and searching (sort, topk, searchsorted), and
scans (cumsum, cumprod, cummax, logcumsumexp): the ops that address elements by an index
tensor or a position along one axis. Indexing with `x[idx, ...]` is in `advanced_indexing.py`."""

from __future__ import annotations

import numpy as np

from .... import relax, tir
from .common import cast, dtype_of, is_float, ndim_of
from .registry import converter

op = relax.op


@converter("aten.gather.default")
def _gather(importer, args):
    args.ignore("sparse_grad")
    x = args["self"]
    return op.gather_elements(x, args["index"], axis=args["dim"] % ndim_of(x))


@converter(
    "aten.scatter.src",
    "aten.scatter.value",
    "aten.scatter.reduce",
    "aten.scatter.value_reduce",
    "aten.scatter_add.default",
    "aten.scatter_reduce.two",
)
def _scatter(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    index = args["index"]
    if "src" in args.values:
        src = args["src"]
    else:
        value = args["value"]
        src = op.full(
            relax.ShapeExpr(list(index.struct_info.shape_values)),
            relax.const(value, x.struct_info.dtype),
            x.struct_info.dtype,
        )
        src = importer.emit(src)
    if args.op.startswith("aten.scatter_add"):
        reduction = "add"
    elif args.op == "aten.scatter_reduce.two":
        reduction = {"sum": "add", "prod": "mul", "mean": "mean", "amax": "max", "amin": "min"}[
            args["reduce"]
        ]
        if not args["include_self"]:
            x = _without_targets(importer, args, x, index, dim, reduction)
    elif "reduce" in args.values:
        reduction = {"add": "add", "multiply": "mul"}.get(args["reduce"])
        if reduction is None:
            raise args.unsupported("reduce")
    else:
        reduction = "update"
    return op.scatter_elements(x, index, src, axis=dim, reduction=reduction)


def _without_targets(importer, args, x, index, dim, reduction):
    """`x` with every position the scatter reaches set to the reduction's identity, so that
    only the scattered values count (include_self=False)."""
    dtype = dtype_of(x)
    if reduction == "mean":
        raise args.unsupported("include_self", "must be True for reduce='mean'")
    identity = {"add": 0, "mul": 1, "max": _lowest(dtype), "min": _highest(dtype)}[reduction]
    zeros = importer.emit(op.zeros(relax.ShapeExpr(list(x.struct_info.shape_values)), "int8"))
    ones = importer.emit(op.ones(relax.ShapeExpr(list(index.struct_info.shape_values)), "int8"))
    reached = importer.emit(op.scatter_elements(zeros, index, ones, axis=dim, reduction="update"))
    reached = importer.emit(op.not_equal(reached, relax.const(0, "int8")))
    return importer.emit(op.where(reached, relax.const(identity, dtype), x))


def _lowest(dtype: str):
    return -float("inf") if is_float(dtype) else int(np.iinfo(dtype).min)


def _highest(dtype: str):
    return float("inf") if is_float(dtype) else int(np.iinfo(dtype).max)


@converter("aten.sort.default", "aten.sort.stable")
def _sort(importer, args):
    x = args["self"]
    if "stable" in args.values:
        args.ignore("stable")  # graphc's sort is always stable
    dim = args["dim"] % ndim_of(x)
    descending = bool(args["descending"])
    values = importer.emit(op.sort(x, dim, descending))
    indices = importer.emit(op.argsort(x, dim, descending, "int64"))
    return relax.Tuple([values, indices])


@converter("aten.argsort.default", "aten.argsort.stable")
def _argsort(importer, args):
    x = args["self"]
    if "stable" in args.values:
        args.ignore("stable")
    return op.argsort(x, args["dim"] % ndim_of(x), bool(args["descending"]), "int64")


@converter("aten.topk.default")
def _topk(importer, args):
    x = args["self"]
    args.ignore("sorted")  # results always come sorted
    return op.topk(x, int(args["k"]), args["dim"] % ndim_of(x), "both", bool(args["largest"]), "int64")


@converter("aten.cumsum.default", "aten.cumprod.default")
def _cumsum(importer, args):
    x = args["self"]
    fn = op.cumsum if "cumsum" in args.op else op.cumprod
    args.ignore("dtype")  # the traced result's dtype
    return fn(cast(x, args.out_dtype), args["dim"] % ndim_of(x), args.out_dtype)


@converter("aten.one_hot.default")
def _one_hot(importer, args):
    depth = int(args.out.shape[-1])
    args.ignore("num_classes")
    return op.one_hot(args["self"], relax.PrimValue(1), relax.PrimValue(0), depth, -1)


def _prefix_pairs(importer, x, dim, fill):
    """x moved so that `dim` is last, and (…, n, n) with [i, j] = x[j] for j <= i else `fill`."""
    n = ndim_of(x)
    perm = [a for a in range(n) if a != dim] + [dim]
    moved = x if dim == n - 1 else importer.emit(op.permute_dims(x, perm))
    size = moved.struct_info.shape_values[-1]
    if not isinstance(size, tir.IntImm):
        return None, None, None
    lower = np.tril(np.ones((size.value, size.value), dtype=bool))
    pairs = op.where(relax.const(lower, "bool"), op.expand_dims(moved, n - 1), relax.const(fill, dtype_of(x)))
    return perm, importer.emit(pairs), size.value


def _moved_back(importer, out, perm):
    if perm == sorted(perm):
        return out
    return importer.emit(op.permute_dims(out, [perm.index(a) for a in range(len(perm))]))


@converter("aten.cummax.default", "aten.cummin.default")
def _cummax(importer, args):
    """Running max/min and the index where it was (the last such index on ties)."""
    x = args["self"]
    if ndim_of(x) == 0:
        return relax.Tuple([x, importer.emit(op.zeros(relax.ShapeExpr([]), "int64"))])
    dim = args["dim"] % ndim_of(x)
    largest = "cummax" in args.op
    dtype = dtype_of(x)
    fill = _lowest(dtype) if largest else _highest(dtype)
    perm, pairs, size = _prefix_pairs(importer, x, dim, fill)
    if pairs is None:
        raise args.unsupported("self", f"must have a static size along dim {dim}")
    n = ndim_of(x)
    values = importer.emit((op.max if largest else op.min)(pairs, [n], False))
    lower = relax.const(np.tril(np.ones((size, size), dtype=bool)), "bool")
    hit = importer.emit(op.logical_and(op.equal(pairs, op.expand_dims(values, n)), lower))
    positions = relax.const(np.arange(size, dtype="int64"), "int64")
    indices = importer.emit(op.max(op.where(hit, positions, relax.const(-1, "int64")), [n], False))
    return relax.Tuple([_moved_back(importer, values, perm), _moved_back(importer, indices, perm)])


@converter("aten.logcumsumexp.default")
def _logcumsumexp(importer, args):
    """log(sum(exp(x[:i+1]))) along dim, stable: each prefix is shifted by its own max."""
    x = args["self"]
    if ndim_of(x) == 0:
        return x
    dim = args["dim"] % ndim_of(x)
    perm, pairs, _ = _prefix_pairs(importer, x, dim, -float("inf"))
    if pairs is None:
        raise args.unsupported("self", f"must have a static size along dim {dim}")
    n = ndim_of(x)
    top = importer.emit(op.max(pairs, [n], True))
    top = importer.emit(op.where(op.isinf(top), relax.const(0.0, dtype_of(x)), top))
    total = importer.emit(op.sum(importer.emit(op.exp(op.subtract(pairs, top))), [n], True))
    out = importer.emit(op.squeeze(op.add(op.log(total), top), [n]))
    return _moved_back(importer, out, perm)


@converter("aten.searchsorted.Tensor", "aten.bucketize.Tensor")
def _searchsorted(importer, args):
    """The insertion points of values into sorted boundaries: how many boundaries are below."""
    if args.op.startswith("aten.searchsorted"):
        boundaries, values = args["sorted_sequence"], args["self"]
        if args["sorter"] is not None:
            raise args.unsupported("sorter", "is not supported; sort the sequence first")
        side = args["side"]
        right = bool(args["right"]) or side == "right"
    else:
        boundaries, values = args["boundaries"], args["self"]
        right = bool(args["right"])
    args.ignore("out_int32")  # the traced result's dtype
    dtype = dtype_of(boundaries) if dtype_of(boundaries) == dtype_of(values) else "float64"
    column = importer.emit(op.expand_dims(cast(values, dtype), ndim_of(values)))
    if ndim_of(boundaries) > 1:  # one sorted row per leading index of the values
        boundaries = importer.emit(op.expand_dims(boundaries, ndim_of(boundaries) - 1))
    below = (op.less_equal if right else op.less)(cast(boundaries, dtype), column)
    counted = importer.emit(op.astype(importer.emit(below), args.out_dtype))
    return op.sum(counted, [ndim_of(values)], False)
