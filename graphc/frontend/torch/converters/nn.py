"""Neural-network ATen operators: softmax, normalizations, attention, embedding (and bags of
embeddings), dropout."""

from __future__ import annotations

from .... import relax
from ....errors import FrontendError
from .common import cast, dtype_of, ndim_of
from .registry import converter

op = relax.op


@converter("aten.softmax.int", "aten._softmax.default", "aten.log_softmax.int", "aten._log_softmax.default")
def _softmax(importer, args):
    x = args["self"]
    dtype = args.get("dtype")
    if "half_to_float" in args.values and args["half_to_float"]:
        raise args.unsupported("half_to_float")
    x = cast(x, args.out_dtype) if dtype is not None else x
    fn = op.nn.log_softmax if "log_softmax" in args.op else op.nn.softmax
    return fn(x, axis=int(args["dim"]))


def _normalized_axes(x, normalized_shape) -> list[int]:
    n = ndim_of(x)
    return list(range(n - len(normalized_shape), n))


def _ones_or(value, like_shape, dtype):
    if value is not None:
        return value
    return relax.op.ones(relax.ShapeExpr(like_shape), dtype)


def _affine(x, weight, bias, shape):
    """(scale, shift) of a normalization: PyTorch's None means ones and zeros of `shape`."""
    dtype = dtype_of(x)
    shift = relax.op.zeros(relax.ShapeExpr(shape), dtype) if bias is None else bias
    return _ones_or(weight, shape, dtype), shift


def _channels(x) -> list:
    return [x.struct_info.shape_values[1]]


def _layer_norm_of(args):
    x, shape = args["input"], args["normalized_shape"]
    gamma, beta = _affine(x, args["weight"], args["bias"], shape)
    return op.nn.layer_norm(x, gamma, beta, axes=_normalized_axes(x, shape), epsilon=float(args["eps"]))


@converter("aten.layer_norm.default")
def _layer_norm(importer, args):
    args.ignore("cudnn_enable")
    return _layer_norm_of(args)


@converter("aten.native_layer_norm.default")
def _native_layer_norm(importer, args):
    return _with_unused_stats(importer, args, importer.emit(_layer_norm_of(args)))


def _with_unused_stats(importer, args, out):
    """(out, mean, rstd)-style results: only the first may be used by an inference graph."""
    for user in args.node.users:
        if user.target.__name__ != "getitem" or user.args[1] != 0:
            raise FrontendError(
                f"{args.op} (node {args.node.name!r}): only the normalized output can be used; "
                "the saved statistics are for training graphs"
            )
    return relax.Tuple([out])


@converter("aten.rms_norm.default")
def _rms_norm(importer, args):
    x = args["input"]
    shape = args["normalized_shape"]
    eps = args["eps"]
    if eps is None:
        import numpy as np

        eps = float(np.finfo(dtype_of(x)).eps)
    weight = _ones_or(args["weight"], shape, dtype_of(x))
    return op.nn.rms_norm(x, weight, axes=_normalized_axes(x, shape), epsilon=float(eps))


def _batch_norm(importer, args, x, weight, bias, mean, var, eps):
    weight, bias = _affine(x, weight, bias, _channels(x))
    if mean is None or var is None:
        raise FrontendError(
            f"{args.op} (node {args.node.name!r}): batch norm without running statistics "
            "(training mode) is not supported; export the model in eval mode"
        )
    out = importer.emit(op.nn.batch_norm(x, weight, bias, mean, var, axis=1, epsilon=float(eps),
                                         training=False))
    return importer.emit(relax.TupleGetItem(out, 0))


@converter("aten._native_batch_norm_legit_no_training.default")
def _native_batch_norm(importer, args):
    args.ignore("momentum")  # only updates running statistics, which inference does not do
    out = _batch_norm(
        importer,
        args,
        args["input"],
        args["weight"],
        args["bias"],
        args["running_mean"],
        args["running_var"],
        args["eps"],
    )
    return _with_unused_stats(importer, args, out)


@converter("aten.batch_norm.default")
def _batch_norm_op(importer, args):
    if args["training"]:
        raise args.unsupported("training", "must be False: export the model in eval mode")
    args.ignore("momentum", "cudnn_enabled")
    return _batch_norm(
        importer,
        args,
        args["input"],
        args["weight"],
        args["bias"],
        args["running_mean"],
        args["running_var"],
        args["eps"],
    )


@converter("aten.embedding.default")
def _embedding(importer, args):
    args.ignore("padding_idx")  # only affects gradients
    if args["sparse"] or args["scale_grad_by_freq"]:
        args.ignore("sparse", "scale_grad_by_freq")  # gradient-only options
    return op.take(args["weight"], args["indices"], axis=0, mode="nonnegative")  # torch refuses -1


@converter("aten.dropout.default", "aten.dropout_.default")
def _dropout(importer, args):
    if args["train"]:
        raise args.unsupported("train", "must be False: export the model in eval mode")
    args.ignore("p")
    return args["input"]


def _group_norm_of(args, groups: int):
    x = args["input"]
    gamma, beta = _affine(x, args["weight"], args["bias"], _channels(x))
    return op.nn.group_norm(x, gamma, beta, num_groups=groups, channel_axis=1,
                            axes=list(range(2, ndim_of(x))), epsilon=float(args["eps"]))


@converter("aten.group_norm.default")
def _group_norm(importer, args):
    args.ignore("cudnn_enabled")
    return _group_norm_of(args, int(args["num_groups"]))


@converter("aten.native_group_norm.default")
def _native_group_norm(importer, args):
    args.ignore("N", "C", "HxW")  # the input's shape
    return _with_unused_stats(importer, args, importer.emit(_group_norm_of(args, int(args["group"]))))


@converter("aten.instance_norm.default")
def _instance_norm(importer, args):
    x = args["input"]
    if not args["use_input_stats"]:
        raise args.unsupported("use_input_stats", "must be True (running statistics are not supported)")
    args.ignore("running_mean", "running_var", "momentum", "cudnn_enabled")  # unused with input stats
    gamma, beta = _affine(x, args["weight"], args["bias"], _channels(x))
    return op.nn.instance_norm(
        x, gamma, beta, channel_axis=1, axes=list(range(2, ndim_of(x))), epsilon=float(args["eps"])
    )


@converter(
    "aten.scaled_dot_product_attention.default", "aten._scaled_dot_product_flash_attention_for_cpu.default"
)
def _sdpa(importer, args):
    """PyTorch's (batch, heads, seq, dim) layout around graphc's (batch, seq, heads, dim) attention."""
    q, k, v = args["query"], args["key"], args["value"]
    if float(args["dropout_p"]) != 0.0:
        raise args.unsupported("dropout_p", "must be 0 (inference)")
    if ndim_of(q) != 4:
        raise FrontendError(
            f"{args.op}: only 4-d (batch, heads, seq, dim) inputs are supported, got {q.struct_info}"
        )
    args.ignore("enable_gqa")  # grouped heads are recognized from the shapes
    mask = args.get("attn_mask")
    causal = "TopLeft" if args["is_causal"] else None
    axes = [0, 2, 1, 3]
    q, k, v = (importer.emit(op.permute_dims(t, axes)) for t in (q, k, v))
    out = importer.emit(op.nn.attention(q, k, v, mask, scale=args["scale"], causal_mask=causal))
    result = op.permute_dims(out, axes)
    if "flash" in args.op:
        return relax.Tuple([importer.emit(result)])
    return result


@converter("aten.native_dropout.default")
def _native_dropout(importer, args):
    """Dropout in inference (train=False, or p=0): the input and an all-True mask."""
    x = args["input"]
    if args["train"] and float(args["p"]) != 0.0:
        raise args.unsupported("train", "must be False (random dropout at p > 0 is training-only)")
    args.ignore("p")
    mask = op.ones(relax.ShapeExpr(list(x.struct_info.shape_values)), "bool")
    return relax.Tuple([x, importer.emit(mask)])


@converter("aten._native_batch_norm_legit.no_stats", "aten._native_batch_norm_legit.default")
def _batch_norm_batch_stats(importer, args):
    """Batch norm with the statistics of the batch itself: (out, mean, 1/sqrt(var + eps))."""
    x = args["input"]
    if "running_mean" in args.values:
        if not args["training"]:
            args.ignore("momentum")  # only moves running statistics, which eval mode does not
            out = _batch_norm(importer, args, x, args["weight"], args["bias"], args["running_mean"],
                              args["running_var"], args["eps"])
            return _with_unused_stats(importer, args, out)
        raise args.unsupported("training", "must be False: training updates the running statistics")
    args.ignore("training", "momentum")  # with no running statistics both modes use the batch's
    axes = [0] + list(range(2, ndim_of(x)))
    dtype = dtype_of(x)
    mean = importer.emit(op.mean(x, axes, True))
    var = importer.emit(op.variance(x, axes, True))
    rstd = importer.emit(op.rsqrt(op.add(var, relax.const(float(args["eps"]), dtype))))
    out = importer.emit(op.multiply(op.subtract(x, mean), rstd))
    channels = [x.struct_info.shape_values[1]] + [1] * (ndim_of(x) - 2)
    if args["weight"] is not None:
        out = importer.emit(op.multiply(out, op.reshape(args["weight"], relax.ShapeExpr(channels))))
    if args["bias"] is not None:
        out = importer.emit(op.add(out, op.reshape(args["bias"], relax.ShapeExpr(channels))))
    flat = relax.ShapeExpr(channels[:1])
    return relax.Tuple([out, importer.emit(op.reshape(mean, flat)), importer.emit(op.reshape(rstd, flat))])


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


@converter("aten._embedding_bag.default", "aten._embedding_bag_forward_only.default")
def _embedding_bag(importer, args):
    """Sums, means or maxima of bags of embedding rows; bag b holds indices[offsets[b]:offsets[b+1]].

    Each index finds its bag by counting the offsets at or before its position; a (bags, N)
    membership matrix then reduces the looked-up rows. Only the first result may be used.
    """
    weight, indices, offsets = args["weight"], args["indices"], args["offsets"]
    args.ignore("scale_grad_by_freq", "sparse")  # gradient-only options
    mode = _BAG_MODES.get(args["mode"])
    if mode is None:
        raise args.unsupported("mode", "must be 0 (sum), 1 (mean) or 2 (max)")
    if ndim_of(indices) != 1:
        raise args.unsupported("indices", "must be 1-d (with offsets)")
    dtype = dtype_of(weight)
    bags = offsets.struct_info.shape_values[0]
    if args["include_last_offset"]:
        bags = bags - 1
        offsets = importer.emit(op.strided_slice(offsets, [0], [0], [bags]))
    count = indices.struct_info.shape_values[0]
    positions = importer.emit(op.arange(relax.PrimValue(0), relax.PrimValue(count), 1, "int64"))
    started = op.less_equal(op.expand_dims(cast(offsets, "int64"), 1), positions)  # (bags, N)
    bag_of = importer.emit(op.sum(importer.emit(op.astype(started, "int64")), [0], False))
    bag_ids = importer.emit(op.arange(relax.PrimValue(1), relax.PrimValue(bags + 1), 1, "int64"))
    member = importer.emit(op.equal(op.expand_dims(bag_ids, 1), bag_of))  # (bags, N)
    padding = args["padding_idx"]
    if padding is not None and padding >= 0:
        kept = op.not_equal(indices, relax.const(padding, dtype_of(indices)))
        member = importer.emit(op.logical_and(member, kept))
    rows = importer.emit(op.take(weight, indices, axis=0, mode="nonnegative"))  # (N, D)
    scale = args["per_sample_weights"]
    if scale is not None:
        if mode != "sum":
            raise args.unsupported("per_sample_weights", "only go with mode 0 (sum)")
        rows = importer.emit(op.multiply(rows, op.expand_dims(scale, 1)))
    sizes = importer.emit(op.sum(importer.emit(op.astype(member, dtype)), [1], True))  # (bags, 1)
    if mode == "max":
        lowest = relax.const(-float("inf"), dtype)
        picked = importer.emit(op.where(op.expand_dims(member, 2), op.expand_dims(rows, 0), lowest))
        out = importer.emit(op.max(picked, [1], False))
        out = op.where(op.equal(sizes, relax.const(0, dtype)), relax.const(0, dtype), out)  # empty bags: 0
    else:
        out = importer.emit(op.matmul(importer.emit(op.astype(member, dtype)), rows))
        if mode == "mean":
            out = op.divide(out, importer.emit(op.maximum(sizes, relax.const(1, dtype))))
    return _with_unused_stats(importer, args, importer.emit(out))
