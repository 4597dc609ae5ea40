"""Shape and layout ATen operators: views, permutations, concatenation, slicing, indexing,
copies and dtype conversions."""

from __future__ import annotations

from .... import relax, tir
from ....errors import FrontendError
from ....ir.structural import structural_equal
from .common import cast, dtype_of, ndim_of, scalar_tensor, shape_of, shape_values
from .registry import converter

op = relax.op


def _reshape(x, shape):
    return op.reshape(x, relax.ShapeExpr(shape_values(shape)))


@converter("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default", "aten.view_copy.default")
def _view(importer, args):
    x = args["self"]
    size = list(args["size"])
    return _reshape(x, _resolve_minus_one(args, size))


def _resolve_minus_one(args, size):
    """-1 in a size list as the traced result's size (symbolic sizes included)."""
    if not any(isinstance(s, int) and s == -1 for s in size):
        return size
    return args.out_shape


@converter("aten.permute.default", "aten.permute_copy.default")
def _permute(importer, args):
    return op.permute_dims(args["self"], [int(d) for d in args["dims"]])


@converter("aten.transpose.int", "aten.t.default", "aten.numpy_T.default")
def _transpose(importer, args):
    x = args["self"]
    n = ndim_of(x)
    if n < 2:
        args.ignore("dim0", "dim1")
        return x
    d0, d1 = (args["dim0"], args["dim1"]) if "dim0" in args.values else (0, 1)
    axes = list(range(n))
    axes[d0 % n], axes[d1 % n] = axes[d1 % n], axes[d0 % n]
    return op.permute_dims(x, axes)


@converter(
    "aten.contiguous.default",
    "aten.clone.default",
    "aten.alias.default",
    "aten.detach.default",
    "aten.lift_fresh_copy.default",
    "aten.alias_copy.default",
    "aten.detach_.default",
)
def _identity(importer, args):
    args.ignore("memory_format")  # graphc tensors are always contiguous
    return args["self"]


@converter(
    "aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout", "aten.to.device", "aten.type_as.default"
)
def _to(importer, args):
    args.ignore("layout", "device", "pin_memory", "non_blocking", "copy", "memory_format")
    if args.op.startswith("aten.type_as"):
        args.ignore("other")
    elif "dtype" in args.values:
        args.ignore("dtype")
    return cast(args["self"], args.out_dtype)


@converter("aten.expand.default", "aten.expand_copy.default")
def _expand(importer, args):
    args.ignore("implicit")
    x = args["self"]
    sizes = list(args["size"])
    src = shape_of(x)
    lead = len(sizes) - len(src)
    target = [src[i - lead] if isinstance(s, int) and s == -1 else s for i, s in enumerate(sizes)]
    return op.broadcast_to(x, relax.ShapeExpr(shape_values(target)))


@converter("aten.unsqueeze.default", "aten.unsqueeze_copy.default")
def _unsqueeze(importer, args):
    x = args["self"]
    dim = args["dim"] % (ndim_of(x) + 1)
    return op.expand_dims(x, dim)


@converter("aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze_copy.dims")
def _squeeze(importer, args):
    x = args["self"]
    n = ndim_of(x)
    dims = args.get("dim")
    if dims is None:
        return _reshape(x, args.out_shape)
    dims = [dims] if isinstance(dims, int) else list(dims)
    shape = shape_of(x)
    keep = [d % n for d in dims if isinstance(shape[d % n], tir.IntImm) and shape[d % n].value == 1]
    return op.squeeze(x, keep) if keep else x


@converter("aten.flatten.using_ints")
def _flatten(importer, args):
    args.ignore("start_dim", "end_dim")  # the traced result's shape says where they were
    return _reshape(args["self"], args.out_shape)


@converter("aten.unflatten.int")
def _unflatten(importer, args):
    args.ignore("dim", "sizes")
    return _reshape(args["self"], args.out_shape)


@converter("aten.cat.default", "aten.concat.default", "aten.concatenate.default")
def _cat(importer, args):
    dtype = args.out_dtype
    tensors = [cast(t, dtype) for t in args["tensors"] if not _is_empty_1d(t)]
    return op.concat(tensors, axis=int(args["dim"]))


def _is_empty_1d(t) -> bool:
    """torch.cat skips 1-d empty tensors whatever the other shapes are."""
    shape = shape_of(t)
    return len(shape) == 1 and isinstance(shape[0], tir.IntImm) and shape[0].value == 0


@converter("aten.stack.default")
def _stack(importer, args):
    tensors = args["tensors"]
    return op.stack(list(tensors), axis=int(args["dim"]) % (ndim_of(tensors[0]) + 1))


@converter(
    "aten.split.Tensor",
    "aten.split_with_sizes.default",
    "aten.split_with_sizes_copy.default",
    "aten.split.sizes",
)
def _split(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    sizes = [args.prim(o.shape[dim]) for o in args.out]
    if "split_size" in args.values:
        args.ignore("split_size")
    else:
        args.ignore("split_sizes")
    return _split_at(x, sizes, dim)


def _split_at(x, sizes, dim):
    indices, total = [], 0
    for s in sizes[:-1]:
        total = total + s
        indices.append(total)
    if len(sizes) == 1:
        return relax.Tuple([x])
    return op.split(x, [int(i) if not isinstance(i, tir.PrimExpr) else i for i in indices], axis=dim)


@converter("aten.chunk.default")
def _chunk(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    args.ignore("chunks")
    return _split_at(x, [args.prim(o.shape[dim]) for o in args.out], dim)


@converter("aten.unbind.int")
def _unbind(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    parts = importer.emit(_split_at(x, [1] * len(args.out), dim))
    return relax.Tuple(
        [importer.emit(op.squeeze(relax.TupleGetItem(parts, i), [dim])) for i in range(len(args.out))]
    )


@converter("aten.slice.Tensor", "aten.slice_copy.Tensor")
def _slice(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    start, end, step = args["start"], args["end"], args["step"]
    size = shape_of(x)[dim]
    start = 0 if start is None else start
    if end is None or (isinstance(end, int) and end >= 2**62):
        end = size
    if isinstance(step, int) and step <= 0:
        raise args.unsupported("step", "must be positive")
    if isinstance(start, int) and start == 0 and _is_full(end, size) and step == 1:
        return x
    sliced = op.strided_slice(x, [dim], [start], [end], [step])
    if all(isinstance(v, int) for v in (start, end, step)):
        return sliced
    # Symbolic bounds are clamped into the tensor, giving shapes like min(n, 512) where torch,
    # knowing n's range, traced n: bind the traced shape, checked when the model runs.
    sliced = importer.emit(sliced)
    traced = relax.TensorStructInfo(args.out_shape, dtype_of(x))
    if structural_equal(sliced.struct_info, traced):
        return sliced
    return importer.bb.match_cast(sliced, traced)


def _is_full(end, size) -> bool:
    if isinstance(end, int) and isinstance(size, tir.IntImm):
        return end >= size.value
    return end is size


@converter("aten.select.int", "aten.select_copy.int")
def _select(importer, args):
    x = args["self"]
    dim = args["dim"] % ndim_of(x)
    index = args["index"]
    if isinstance(index, int) and index < 0:
        index = shape_of(x)[dim] + index  # counted from the end (symbolic sizes included)
    return op.take(x, scalar_tensor(index, "int64"), axis=dim)


@converter("aten.index_select.default")
def _index_select(importer, args):
    x = args["self"]
    return op.take(x, args["index"], axis=args["dim"] % ndim_of(x), mode="nonnegative")


@converter("aten.repeat.default")
def _repeat(importer, args):
    return op.tile(args["self"], [int(r) for r in args["repeats"]])


@converter("aten.flip.default")
def _flip(importer, args):
    x = args["self"]
    for d in args["dims"]:
        x = importer.emit(op.flip(x, d % ndim_of(x)))
    return x


@converter("aten.tril.default", "aten.triu.default")
def _trilu(importer, args):
    fn = op.tril if "tril" in args.op else op.triu
    return fn(args["self"], int(args["diagonal"]))


@converter("aten._assert_tensor_metadata.default")
def _assert_metadata(importer, args):
    """A check PyTorch inserts after dtype conversions: verified here, at import time."""
    from ..translator import torch_dtype_name

    args.ignore("size", "stride", "device", "layout")  # sizes are in the struct info; layout is ours
    actual = args["a"].struct_info.dtype
    expected = args["dtype"]
    if expected is not None and actual != torch_dtype_name(expected):
        raise FrontendError(f"{args.op}: the tensor has dtype {actual}, the program asserts {expected}")
    return None


@converter("getitem")
def _getitem(importer, args):
    value, index = args["arg0"], args["arg1"]
    if isinstance(value, relax.Tuple):
        return value.fields[index]
    return relax.TupleGetItem(value, index)
