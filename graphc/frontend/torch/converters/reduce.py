"""Reductions: sum, mean, prod, amax/amin, max/min along a dim, var/std, argmax/argmin."""

from __future__ import annotations

from .... import relax
from .common import axis_list, cast, ndim_of, scalar_tensor
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
    axes = _axes(args, x)
    keep = bool(args.get("keepdim", False))
    correction = args.get("correction")
    if "unbiased" in args.values:
        correction = 1 if args["unbiased"] else 0
    correction = 1 if correction is None else correction
    var = importer.emit(op.variance(x, axes, keep))
    if correction:
        shape = x.struct_info.shape_values
        count = 1
        for a in axes if axes is not None else range(len(shape)):
            count = count * shape[a]
        dtype = args.out_dtype
        scale = op.divide(scalar_tensor(count, dtype), scalar_tensor(count - correction, dtype))
        var = importer.emit(op.multiply(var, importer.emit(scale)))
    return op.sqrt(var) if "std" in args.op else var
