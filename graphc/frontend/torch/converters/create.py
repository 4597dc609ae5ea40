"""Tensor creation: arange, full, zeros, ones, empty and their `_like` / `new_` forms, fill and
copy; the rejection of operators whose output shape depends on the data."""

from __future__ import annotations

from .... import relax, tir
from .common import cast, shape_values
from .registry import converter

op = relax.op

_UNUSED = ("layout", "device", "pin_memory", "memory_format", "requires_grad")


def _shape(args):
    return relax.ShapeExpr(shape_values(args.out_shape))


@converter(
    "aten.full.default",
    "aten.zeros.default",
    "aten.ones.default",
    "aten.empty.memory_format",
    "aten.new_full.default",
    "aten.new_zeros.default",
    "aten.new_ones.default",
    "aten.new_empty.default",
    "aten.full_like.default",
    "aten.zeros_like.default",
    "aten.ones_like.default",
    "aten.empty_like.default",
    "aten.scalar_tensor.default",
    "aten.empty_strided.default",
    "aten.empty_permuted.default",
    "aten.fill.Scalar",
    "aten.fill.Tensor",
    "aten.fill_.Scalar",
    "aten.fill_.Tensor",
)
def _full(importer, args):
    # graphc tensors are contiguous: strides and physical layouts do not change the values
    args.ignore(*_UNUSED, "dtype", "size", "self", "stride", "physical_layout")
    name = args.op
    if "fill_value" in args.values:
        value = args["fill_value"]
    elif "value" in args.values:  # fill
        value = args["value"]
    elif "ones" in name:
        value = 1
    elif "scalar_tensor" in name:
        value = args["s"]
    else:
        value = 0  # zeros, and empty (any contents are allowed; zeros are deterministic)
    dtype = args.out_dtype
    if isinstance(value, relax.Expr):
        return op.broadcast_to(cast(value, dtype), _shape(args))
    return op.full(_shape(args), relax.const(value, dtype), dtype)


@converter("aten.arange.default", "aten.arange.start", "aten.arange.start_step")
def _arange(importer, args):
    args.ignore(*_UNUSED, "dtype")
    start = args.get("start", 0)
    end = args["end"]
    step = args.get("step", 1)
    return op.arange(start, end, step, dtype=args.out_dtype)


@converter("aten.copy.default", "aten.copy_.default")
def _copy(importer, args):
    """`self` overwritten by `src`, broadcast to `self`'s shape and cast to its dtype."""
    args.ignore("non_blocking")  # a scheduling hint
    x = args["self"]
    src = cast(args["src"], args.out_dtype)
    return op.broadcast_to(src, relax.ShapeExpr(list(x.struct_info.shape_values)))


@converter(
    "aten.nonzero.default",
    "aten.masked_select.default",
    "aten._local_scalar_dense.default",
    "aten.item.default",
)
def _data_dependent(importer, args):
    """Operators whose output shape or Python value depends on the tensor data."""
    raise args.unsupported(
        "self", "goes to an operator whose output shape (or Python value) depends on the data; graphc "
        "compiles static shapes only (torch.where and masked_fill keep the shape)"
    )


_data_dependent.rejects = "the output shape (or Python value) depends on the data; refused with a clear error"


@converter("aten._assert_scalar.default")
def _assert_scalar(importer, args):
    """A runtime check on sizes: checked here when the sizes are known, else refused."""
    from ....tir.arith import Analyzer

    condition = args["self"]
    args.ignore("assert_msg")
    if isinstance(condition, tir.PrimExpr):
        condition = Analyzer().simplify(condition)
        condition = condition.value if isinstance(condition, tir.IntImm) else condition
    if isinstance(condition, bool | int) and condition:
        return None
    raise args.unsupported("self", f"(the check {args['assert_msg']!r}) cannot be proven at import time")
