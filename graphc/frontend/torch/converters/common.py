"""Small pieces the converters share: operands as Relax tensors of a given dtype, axes."""

from __future__ import annotations

import torch

from .... import relax, tir
from ....errors import FrontendError
from ....tir.arith import Analyzer


def dtype_of(expr) -> str:
    return expr.struct_info.dtype


def ndim_of(expr) -> int:
    return expr.struct_info.ndim


def shape_of(expr) -> tuple:
    return tuple(expr.struct_info.shape_values)


def cast(expr, dtype: str):
    """`expr` as `dtype` (no op when it already is)."""
    return expr if dtype_of(expr) == dtype else relax.op.astype(expr, dtype)


def operand(value, dtype: str):
    """A Relax tensor of `dtype` for a tensor, a Python scalar or a symbolic size."""
    if isinstance(value, relax.Expr):
        return cast(value, dtype)
    if isinstance(value, bool | int | float):
        return relax.const(value, dtype)
    if isinstance(value, tir.PrimExpr):
        return scalar_tensor(value, dtype)
    raise FrontendError(f"cannot use {value!r} ({type(value).__name__}) as a tensor operand")


def scalar_tensor(value, dtype: str):
    """A 0-d tensor holding a number or a (symbolic) size."""
    value = Analyzer().simplify(value) if isinstance(value, tir.PrimExpr) else value
    if isinstance(value, tir.IntImm | tir.FloatImm):
        value = value.value
    if isinstance(value, bool | int | float):
        return relax.const(value, dtype)
    # a symbolic size: the one-element range [value, value + 1) as a 0-d tensor
    one = relax.op.arange(relax.PrimValue(value), relax.PrimValue(value + 1), 1, dtype)
    return relax.op.reshape(one, relax.ShapeExpr([]))


def result_dtype(a, b) -> str:
    """PyTorch's type promotion of two operands (traced tensors, Python or symbolic scalars)."""
    from ..translator import torch_dtype_name

    return torch_dtype_name(torch.result_type(_proxy(a), _proxy(b)))


def _proxy(value):
    if isinstance(value, torch.Tensor):
        # same dtype and the same "dimensioned or 0-d" category: what promotion looks at
        return torch.empty((1,) * value.dim(), dtype=value.dtype)
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, torch.SymFloat):
        return 1.0
    return 1  # SymInt


def axis_list(dim, ndim: int) -> list[int] | None:
    """`dim` (None, an int, or a list) as a list of non-negative axes; None for all."""
    if dim is None:
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return None
    return [d % ndim if ndim else 0 for d in dims]


def shape_values(values) -> list:
    """A size list of ints and symbolic sizes as int64 PrimExprs."""
    out = []
    for v in values:
        if isinstance(v, torch.SymInt):
            raise FrontendError("internal: convert traced sizes with Args.prim before using them")
        if isinstance(v, tir.PrimExpr):
            out.append(v if v.dtype == "int64" else tir.Cast("int64", v))
        else:
            out.append(tir.const(int(v), "int64"))
    return out


def is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))
