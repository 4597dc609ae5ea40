"""Small pieces the ONNX converters share: struct info queries, axes, folding at import.

Folding: a shape computation whose inputs are all known at import (constants, or sizes of
tensors with symbolic dimensions) is evaluated here on numpy arrays (of numbers, or of
PrimExprs for symbolic sizes) instead of becoming kernels; `fold` does it for a converter
when the result is small.
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from ...errors import FrontendError
from .importer import Known

FOLD_LIMIT = 4096  # elements: larger results stay run-time computations


class Emitting:
    """`relax.op` whose calls are emitted at once by the running import, so a converter can ask
    any intermediate result for its struct info: `op = Emitting(relax.op)`."""

    def __init__(self, namespace):
        self._namespace = namespace

    def __getattr__(self, name: str):
        import types

        value = getattr(self._namespace, name)
        if isinstance(value, types.ModuleType):
            return Emitting(value)
        if not callable(value):
            return value

        def emit(*args, **kwargs):
            from .importer import active_importer

            result = value(*args, **kwargs)
            return active_importer().bb.emit(result) if isinstance(result, relax.Call) else result

        emit.__name__ = name
        return emit


def sinfo(expr) -> relax.TensorStructInfo:
    value = expr.struct_info
    if not isinstance(value, relax.TensorStructInfo):
        raise FrontendError(f"expected a tensor, got {value}")
    return value


def dtype_of(expr) -> str:
    return sinfo(expr).dtype


def ndim_of(expr) -> int:
    ndim = sinfo(expr).ndim
    if ndim < 0:
        raise FrontendError(f"the rank of {expr} is not known at import")
    return ndim


def shape_of(expr) -> list:
    values = sinfo(expr).shape_values
    if values is None:
        raise FrontendError(f"the shape of {expr} ({sinfo(expr)}) is not known at import")
    return list(values)


def static_shape(expr) -> list[int] | None:
    """The shape as ints when every dimension is a constant, else None."""
    dims = []
    for d in shape_of(expr):
        if not isinstance(d, tir.IntImm):
            return None
        dims.append(int(d.value))
    return dims


def dim_value(d):
    """A dimension as a Python int when constant, else the PrimExpr."""
    return int(d.value) if isinstance(d, tir.IntImm) else d


def norm_axis(axis: int, ndim: int, node=None) -> int:
    if not -ndim <= axis < max(ndim, 1):
        where = f"{node.where}: " if node is not None else ""
        raise FrontendError(f"{where}axis {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim if ndim else 0


def norm_axes(axes, ndim: int, node=None) -> list[int]:
    return [norm_axis(int(a), ndim, node) for a in axes]


def cast(expr, dtype: str):
    return expr if dtype_of(expr) == dtype else Emitting(relax.op).astype(expr, dtype)


def const_like(value, expr):
    """A 0-d constant of `expr`'s dtype."""
    return relax.const(value, dtype_of(expr))


def shape_expr(values) -> relax.ShapeExpr:
    return relax.ShapeExpr([v if isinstance(v, tir.PrimExpr) else tir.const(int(v), "int64") for v in values])


def fold(node, fn, dtype: str | None = None):
    """`fn(*known arrays)` when every given input is known at import and the result is small,
    else None. Symbolic (object) results keep `dtype` (default: the first input's)."""
    arrays = node.all_known()
    if arrays is None:
        return None
    present = [a for a in arrays if a is not None]
    if any(a.size > FOLD_LIMIT for a in present):
        return None
    with np.errstate(all="ignore"):
        result = fn(*arrays)
    if result is None:
        return None
    result = np.asarray(result) if not isinstance(result, np.ndarray) else result
    if result.size > FOLD_LIMIT:
        return None
    if result.dtype == object:
        first = next((i for i in range(len(node.inputs)) if node.has_input(i)), None)
        in_dtype = node.importer.known_dtype(node.inputs[first]) if first is not None else None
        return Known(result, dtype or in_dtype or "int64")
    return result


def as_prims(values) -> list:
    """ints and PrimExprs as int64 PrimExprs."""
    out = []
    for v in values:
        if isinstance(v, tir.PrimExpr):
            out.append(v if v.dtype == "int64" else tir.Cast("int64", v))
        else:
            out.append(tir.const(int(v), "int64"))
    return out


def prim_array(values) -> np.ndarray:
    """A 1-d object array of sizes (ints where constant)."""
    out = np.empty(len(values), dtype=object)
    out[:] = [dim_value(v) if isinstance(v, tir.PrimExpr) else int(v) for v in values]
    return out


def int_list(array, node=None, what: str = "value") -> list[int]:
    """A known integer array as Python ints (error if an element is symbolic)."""
    out = []
    for v in np.asarray(array).reshape(-1):
        if isinstance(v, tir.PrimExpr):
            if isinstance(v, tir.IntImm):
                out.append(int(v.value))
                continue
            where = f"{node.where}: " if node is not None else ""
            raise FrontendError(f"{where}{what} must be constant, got the symbolic {v}")
        out.append(int(v))
    return out


def dynamic_slice(node, x, axes, begins, ends, steps):
    """`x[begin:end:step]` along `axes` with bounds that are symbolic or run-time values: the
    clamped start and length are computed once by the VM and the kernel reads a window."""
    from ... import topi

    shape = shape_of(x)
    starts, sizes = [], []
    for a, b, e, s in zip(axes, begins, ends, steps):
        start, size = topi.dynamic_slice_bounds(shape[a], b, e, s)
        starts.append(start)
        sizes.append(size)
    bound = node.importer.bind_prims(starts + sizes + list(steps), "slice")
    k = len(axes)
    return Emitting(relax.op).slice_window(x, axes, bound[:k], bound[k : 2 * k], bound[2 * k :])


def axis_mask(node, ndim: int, axes) -> list:
    """1 for each axis listed in the run-time `axes` (negative counting from the end), else 0,
    as variables the VM computes."""
    from ...tir.expr import logical_or

    one, zero = tir.const(1, "int64"), tir.const(0, "int64")
    values = []
    for k in range(ndim):
        hit = tir.const(False, "bool")
        for a in axes:
            hit = logical_or(hit, logical_or(a == k, a == k - ndim))
        values.append(tir.select(hit, one, zero))
    return node.importer.bind_prims(values, "axis")


def squeezed_shape(shape, mask) -> list:
    """`shape` without the axes whose `mask` value is 1: output axis j is the input axis with
    exactly j unmasked axes before it (all select expressions of the mask)."""
    from ...tir.expr import logical_and

    ndim = len(shape)
    dims = []
    for j in range(ndim):
        value = tir.const(1, "int64")
        before = tir.const(0, "int64")
        for k in range(ndim):
            value = tir.select(logical_and(mask[k] == 0, before == j), shape[k], value)
            before = before + (1 - mask[k])
        dims.append(value)
    return dims


def inserted_shape(shape, axes) -> list:
    """`shape` with size-1 axes inserted at the run-time positions `axes` of the result."""
    from ...tir.expr import logical_or

    rank = len(shape) + len(axes)
    dims = []
    before = tir.const(0, "int64")
    for p in range(rank):
        hit = tir.const(False, "bool")
        for a in axes:
            hit = logical_or(hit, logical_or(a == p, a == p - rank))
        source = tir.const(1, "int64")
        for i, d in enumerate(shape):
            source = tir.select(p - before == i, d, source)
        dims.append(tir.select(hit, tir.const(1, "int64"), source))
        before = before + tir.select(hit, tir.const(1, "int64"), tir.const(0, "int64"))
    return dims


__all__ = [
    "FOLD_LIMIT",
    "as_prims",
    "axis_mask",
    "inserted_shape",
    "squeezed_shape",
    "cast",
    "const_like",
    "dim_value",
    "dtype_of",
    "dynamic_slice",
    "fold",
    "int_list",
    "ndim_of",
    "norm_axes",
    "norm_axis",
    "prim_array",
    "shape_expr",
    "shape_of",
    "sinfo",
    "static_shape",
]
