"""Tensor creation: arange, full, zeros, ones, empty and their `_like` / `new_` forms."""

from __future__ import annotations

from .... import relax
from .common import shape_values
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
)
def _full(importer, args):
    args.ignore(*_UNUSED, "dtype", "size", "self", "stride")
    name = args.op
    if "fill_value" in args.values:
        value = args["fill_value"]
    elif "ones" in name:
        value = 1
    elif "scalar_tensor" in name:
        value = args["s"]
    else:
        value = 0  # zeros, and empty (any contents are allowed; zeros are deterministic)
    dtype = args.out_dtype
    if isinstance(value, relax.Expr):
        return op.broadcast_to(relax.op.astype(value, dtype), _shape(args))
    return op.full(_shape(args), relax.const(value, dtype), dtype)


@converter("aten.arange.default", "aten.arange.start", "aten.arange.start_step")
def _arange(importer, args):
    args.ignore(*_UNUSED, "dtype")
    start = args.get("start", 0)
    end = args["end"]
    step = args.get("step", 1)
    return op.arange(start, end, step, dtype=args.out_dtype)
