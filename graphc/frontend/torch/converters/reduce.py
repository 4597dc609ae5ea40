"""Reductions: sum, mean, prod, amax/amin, max/min along a dim, var/std (and with the mean),
argmax/argmin, any/all, vector norms, median and kthvalue."""

from __future__ import annotations

import math

from .... import relax, tir
from .common import axis_list, cast, dtype_of, is_float, ndim_of, scalar_tensor
from .registry import converter

op = relax.op


def _axes(args, x):
    dim = args.get("dim")
    return axis_list(dim, ndim_of(x))


@converter(
    "aten.sum.dim_IntList",
    "aten.sum.default",
    "aten.mean.dim",
    "aten.mean.default",
    "aten.prod.dim_int",
    "aten.prod.default",
)
def _sum(importer, args):
    args.ignore("dtype")  # the traced result's dtype: sums of bool and int8 accumulate in int64
    axes = _axes(args, args["self"])
    x = cast(args["self"], args.out_dtype)
    fn = op.sum if "sum" in args.op else op.mean if "mean" in args.op else op.prod
    return fn(x, axes, bool(args.get("keepdim", False)))


@converter("aten.amax.default", "aten.amin.default", "aten.max.default", "aten.min.default")
def _amax(importer, args):
    x = args["self"]
    fn = op.max if ("amax" in args.op or args.op == "aten.max.default") else op.min
    return fn(x, _axes(args, x), bool(args.get("keepdim", False)))


@converter("aten.max.dim", "aten.min.dim")
def _max_dim(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    keep = bool(args["keepdim"])
    values = importer.emit(op.max(x, [dim], keep) if "max" in args.op else op.min(x, [dim], keep))
    arg = op.argmax if "max" in args.op else op.argmin
    return relax.Tuple([values, importer.emit(arg(x, dim, keep))])


@converter("aten.argmax.default", "aten.argmin.default")
def _argmax(importer, args):
    x = args["self"]
    dim = args["dim"]
    fn = op.argmax if "argmax" in args.op else op.argmin
    return fn(x, None if dim is None else dim % ndim_of(x), bool(args["keepdim"]))


@converter(
    "aten.var.correction",
    "aten.std.correction",
    "aten.var.dim",
    "aten.std.dim",
    "aten.var.default",
    "aten.std.default",
)
def _var(importer, args):
    x = args["self"]
    var = _variance(importer, args, x)
    return op.sqrt(var) if "std" in args.op else var


@converter("aten.var_mean.correction", "aten.std_mean.correction", "aten.var_mean.dim", "aten.std_mean.dim")
def _var_mean(importer, args):
    x = args["self"]
    var = _variance(importer, args, x)
    if "std" in args.op:
        var = importer.emit(op.sqrt(var))
    return relax.Tuple([var, importer.emit(op.mean(x, _axes(args, x), bool(args.get("keepdim", False))))])


def _variance(importer, args, x):
    """The variance with Bessel-style `correction` (or the older `unbiased` flag)."""
    axes = _axes(args, x)
    keep = bool(args.get("keepdim", False))
    correction = args.get("correction")
    if "unbiased" in args.values:
        correction = 1 if args["unbiased"] else 0
    correction = 1 if correction is None else correction
    var = importer.emit(op.variance(x, axes, keep))
    if not correction:
        return var
    shape = x.struct_info.shape_values
    count = 1
    for a in axes if axes is not None else range(len(shape)):
        count = count * shape[a]
    dtype = dtype_of(var)
    scale = op.divide(scalar_tensor(count, dtype), scalar_tensor(count - correction, dtype))
    return importer.emit(op.multiply(var, importer.emit(scale)))


@converter(
    "aten.any.default",
    "aten.any.dim",
    "aten.any.dims",
    "aten.all.default",
    "aten.all.dim",
    "aten.all.dims",
)
def _any(importer, args):
    x = args["self"]
    truth = cast(x, "bool") if dtype_of(x) == "bool" else op.not_equal(x, relax.const(0, dtype_of(x)))
    as_int = importer.emit(cast(importer.emit(truth), "int8"))
    fn = op.max if "any" in args.op else op.min
    reduced = importer.emit(fn(as_int, _axes(args, x), bool(args.get("keepdim", False))))
    # uint8 inputs give uint8 results, everything else bool
    return cast(importer.emit(op.not_equal(reduced, relax.const(0, "int8"))), args.out_dtype)


@converter("aten.linalg_vector_norm.default", "aten.norm.ScalarOpt_dim", "aten.norm.Scalar")
def _vector_norm(importer, args):
    """The p-norm over `dim`: max|x| for inf, count of nonzeros for 0, (sum |x|^p)^(1/p) otherwise."""
    x = args["self"]
    args.ignore("dtype")  # the traced result's dtype, which the input is cast to first
    dtype = args.out_dtype
    x = cast(x, dtype)
    p = args["ord"] if "ord" in args.values else args["p"]
    p = 2.0 if p is None else float(p)
    axes = _axes(args, x)
    keep = bool(args.get("keepdim", False))
    if math.isinf(p):
        fn = op.max if p > 0 else op.min
        return fn(importer.emit(op.abs(x)), axes, keep)
    if p == 0:
        nonzero = importer.emit(cast(importer.emit(op.not_equal(x, relax.const(0, dtype))), dtype))
        return op.sum(nonzero, axes, keep)
    if p == 1:
        return op.sum(importer.emit(op.abs(x)), axes, keep)
    if p == 2:
        return op.sqrt(importer.emit(op.sum(importer.emit(op.multiply(x, x)), axes, keep)))
    powered = importer.emit(op.power(importer.emit(op.abs(x)), relax.const(p, dtype)))
    return op.power(importer.emit(op.sum(powered, axes, keep)), relax.const(1.0 / p, dtype))


@converter("aten.median.dim", "aten.kthvalue.default", "aten.median.default", "aten.nanmedian.default")
def _kthvalue(importer, args):
    """The k-th smallest along a dim (median: the lower median), through a sort."""
    x = args["self"]
    if args.op.endswith("median.default"):
        if args.op.startswith("aten.nanmedian") and is_float(dtype_of(x)):
            raise args.unsupported("self", "(nanmedian of a float tensor) is not supported")
        if ndim_of(x) != 1:
            count = tir.const(1, "int64")
            for d in x.struct_info.shape_values:
                count = count * d
            x = importer.emit(op.reshape(x, relax.ShapeExpr([count])))
        dim, keep = 0, False
    else:
        dim, keep = args["dim"] % ndim_of(x), bool(args["keepdim"])
    size = x.struct_info.shape_values[dim]
    if not isinstance(size, tir.IntImm):
        raise args.unsupported("self", f"must have a static size along dim {dim}")
    k = int(args["k"]) - 1 if "k" in args.values else (size.value - 1) // 2
    if not 0 <= k < size.value:
        raise args.unsupported("k", f"is out of range for a dim of size {size.value}")
    pick = relax.const(k, "int64")
    order = importer.emit(op.argsort(x, dim, False, "int64"))
    index = importer.emit(op.take(order, pick, axis=dim))
    values = importer.emit(op.take(importer.emit(op.sort(x, dim, False)), pick, axis=dim))
    if keep:
        values, index = importer.emit(op.expand_dims(values, dim)), importer.emit(op.expand_dims(index, dim))
    if args.op.endswith("median.default"):
        return values
    return relax.Tuple([values, index])
