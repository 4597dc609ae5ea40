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
            if not isinstance(result, relax.Call):
                return result
            importer = active_importer()
            return importer.bb.emit(resolve_broadcast(importer, result))

        emit.__name__ = name
        return emit


BROADCASTING = {
    f"relax.{name}"
    for name in (
        "add subtract multiply divide floor_divide power maximum minimum mod floor_mod equal not_equal "
        "less less_equal greater greater_equal logical_and logical_or logical_xor bitwise_and "
        "bitwise_or bitwise_xor left_shift right_shift atan2 hypot copysign where"
    ).split()
}


def resolve_broadcast(importer, call: relax.Call) -> relax.Call:
    """`call` (an elementwise op with numpy broadcasting) with operands whose sizes do not
    decide the broadcast at import (two different symbolic sizes, either of which may be 1 at
    run time) expanded to the result's size, so that the result has a shape and one kernel
    serves every size: the result's size is `select(a == 1, b, a)` (computed by the VM), and an
    operand of size `d` is gathered at `arange(size) % d` along that axis (0 when d is 1)."""
    name = getattr(call.op, "name", None)
    if name not in BROADCASTING and name != "relax.matmul":
        return call
    infos = [a.struct_info for a in call.args]
    if not all(isinstance(i, relax.TensorStructInfo) and i.shape_values is not None for i in infos):
        return call
    shapes = [list(i.shape_values) for i in infos]
    analyzer = importer.analyzer()
    if name == "relax.matmul":
        return _resolve_matmul(importer, call, shapes, analyzer)
    args = _broadcast_args(importer, list(call.args), shapes, analyzer)
    return relax.Call(call.op, args, call.attrs) if args is not None else call


def _resolve_matmul(importer, call, shapes, analyzer):
    """A matmul whose contraction sizes are different symbols gets a run-time check that they
    are equal (a `match_cast` of the right operand); its batch axes broadcast as above."""
    a, b = call.args
    sa, sb = shapes
    if len(sa) < 2 or len(sb) < 2:
        return call
    k_a, k_b = sa[-1], sb[-2]
    if not (k_a is k_b or analyzer.can_prove_equal(k_a, k_b)):
        sb = sb[:-2] + [k_a, sb[-1]]
        b = importer.bb.match_cast(b, relax.TensorStructInfo(sb, b.struct_info.dtype))
    batch = [sa[:-2], sb[:-2]]
    args = _broadcast_args(importer, [a, b], batch, analyzer) if max(map(len, batch)) else None
    if args is None:
        return relax.Call(call.op, [a, b], call.attrs) if b is not call.args[1] else call
    return relax.Call(call.op, args, call.attrs)


def _broadcast_args(importer, args, shapes, analyzer):
    """`args` expanded where `shapes` (their broadcast axes, leading) leave a
    size undecided at import; None when every size is decided."""
    ndim = max(len(s) for s in shapes)

    def dims_at(k):
        return [(i, s[len(s) - ndim + k]) for i, s in enumerate(shapes) if len(s) - ndim + k >= 0]

    undecided = {}
    for k in range(ndim):
        dims = [d for _, d in dims_at(k) if not (isinstance(d, tir.IntImm) and d.value == 1)]
        if any(not (d is dims[0] or analyzer.can_prove_equal(d, dims[0])) for d in dims[1:]):
            undecided[k] = dims
    if not undecided:
        return None
    sizes = {}
    for k, dims in undecided.items():
        size = broadcast_size(importer, dims, analyzer)
        if size is None:
            size = dims[0]
            for d in dims[1:]:
                size = tir.select(size == 1, d, size)
            size = importer.bind_prims([size], "broadcast", sizes=True)[0]
        sizes[k] = size
    args = list(args)
    for i, shape in enumerate(shapes):
        for k, size in sizes.items():
            axis = len(shape) - ndim + k
            if axis < 0:
                continue
            d = shape[axis]
            if (isinstance(d, tir.IntImm) and d.value == 1) or d is size or analyzer.can_prove_equal(d, size):
                continue
            positions = importer.bb.emit(relax.op.arange(tir.const(0, "int64"), size, 1, "int64"))
            extent = importer.bb.emit(relax.op.shape_to_tensor(relax.ShapeExpr([d])))
            index = importer.bb.emit(relax.op.floor_mod(positions, extent))
            args[i] = importer.bb.emit(relax.op.take(args[i], index, axis=axis))
    return args


def broadcast_size(importer, dims, analyzer):
    """The one of `dims` (symbolic sizes broadcast together) that is their broadcast size in
    every valid case, or None: `c` is when `c == 1` implies every other size is 1 (otherwise a
    valid broadcast has every size 1 or `c`). Sizes `bind_prims` made are read as the
    expressions they stand for, so `min(seq, 32)` (a slice of a 32-long table) broadcast with
    `seq` is `seq`, with no select and no gather."""
    from ...tir.functor import substitute

    definitions = importer.definitions

    def unfold(d):
        return substitute(d, definitions) if definitions and isinstance(d, tir.PrimExpr) else d

    full = [unfold(d) for d in dims]
    for i, c in enumerate(full):
        with analyzer.constraint_scope(c == 1):
            if all(j == i or analyzer.can_prove(d == 1) for j, d in enumerate(full)):
                return dims[i]
    return None


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
    starts = node.importer.bind_prims(starts + list(steps), "slice")
    sizes = node.importer.bind_prims(sizes, "slice", sizes=True)
    k = len(axes)
    return Emitting(relax.op).slice_window(x, axes, starts[:k], sizes, starts[k:])


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
