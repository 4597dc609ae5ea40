"""Gather/scatter, sorting, scans, one_hot and einsum conversions."""

from __future__ import annotations

from .... import relax
from .common import cast, ndim_of
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
        if not args["include_self"]:
            raise args.unsupported("include_self", "must be True")
        reduction = {"sum": "add", "prod": "mul", "mean": "mean", "amax": "max", "amin": "min"}[
            args["reduce"]
        ]
    elif "reduce" in args.values:
        reduction = {"add": "add", "multiply": "mul"}.get(args["reduce"])
        if reduction is None:
            raise args.unsupported("reduce")
    else:
        reduction = "update"
    return op.scatter_elements(x, index, src, axis=dim, reduction=reduction)


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


@converter("aten.einsum.default")
def _einsum(importer, args):
    args.ignore("path")
    return op.einsum(relax.Tuple(list(args["tensors"])), args["equation"])


@converter("aten.outer.default")
def _outer(importer, args):
    return op.outer(args["self"], args["vec2"])
