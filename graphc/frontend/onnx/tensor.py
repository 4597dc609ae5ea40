"""Tensor manipulation: Identity, Reshape, Flatten, Transpose, Squeeze/Unsqueeze, Concat,
Split, Slice, Expand, Tile, Pad, Trilu, DepthToSpace/SpaceToDepth, OneHot.

Shape-like operands (Reshape's shape, Slice's starts/ends/axes/steps, Expand's shape, Pad's
pads, Tile's repeats, Squeeze's axes...) may be constants folded at import, symbolic sizes,
or tensors computed at run time: their values then become symbolic variables bound when
the model runs (`Node.ints`), and the result's shape is an expression of them.
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from ...tir.expr import logical_or as _or
from .common import (
    Emitting,
    as_prims,
    axis_mask,
    broadcast_size,
    cast,
    dim_value,
    dtype_of,
    dynamic_slice,
    fold,
    inserted_shape,
    int_list,
    ndim_of,
    norm_axes,
    norm_axis,
    shape_expr,
    shape_of,
    squeezed_shape,
    static_shape,
)
from .importer import Known
from .registry import converter

op = Emitting(relax.op)
I64 = "int64"


def _i64(v):
    return tir.const(int(v), I64) if not isinstance(v, tir.PrimExpr) else v


def _prod(values):
    out = tir.const(1, I64)
    for v in values:
        out = out * v
    return out


def _is_const(v, value=None) -> bool:
    return isinstance(v, tir.IntImm) and (value is None or v.value == value)


@converter("Identity", since=1)
def identity(node):
    value = node.importer.lookup_value(node.inputs[0])
    node.mark_read(0)
    return value


# -- reshaping ------------------------------------------------------------------------------


def _reshape_dims(node, in_shape, target, allowzero: bool) -> list:
    """Resolve ONNX's 0 (copy) and -1 (infer) entries of `target` (PrimExprs) against `in_shape`."""
    resolved = []
    for i, t in enumerate(target):
        if _is_const(t, 0) and not allowzero:
            resolved.append(in_shape[i])
        elif _is_const(t) or allowzero or not _read_at_run_time(node, t):
            resolved.append(t)
        else:  # a run-time value: 0 copies the input's dimension
            resolved.append(tir.select(t == 0, in_shape[i], t) if i < len(in_shape) else t)
    holes = [i for i, t in enumerate(resolved) if _is_const(t, -1)]
    if len(holes) > 1:
        raise node.error(f"shape {[dim_value(t) for t in target]} has more than one -1")
    total = _prod(in_shape)
    if holes:
        resolved[holes[0]] = _quotient(list(in_shape), [t for i, t in enumerate(resolved) if i != holes[0]])
    elif any(_read_at_run_time(node, t) for t in resolved):
        one = tir.const(1, I64)
        known = _prod(tir.select(t == -1, one, t) for t in resolved)
        known = tir.max(known, tir.const(1, I64))  # a zero-size target infers nothing
        resolved = [
            t if _is_const(t) else tir.select(t == -1, tir.floordiv(total, known), t) for t in resolved
        ]
    return resolved


def _read_at_run_time(node, value) -> bool:
    """Whether `value` depends on a tensor's contents (may be 0 or -1), not just on sizes."""
    from ...tir.functor import post_order_visit

    found = []
    post_order_visit(value, lambda e: found.append(e) if e in node.importer.runtime_vars else None)
    return bool(found)


def _quotient(numerator: list, denominator: list):
    """prod(numerator) // prod(denominator) with common factors cancelled first, so that
    `(n * 3 * 20) // (n * 3)` is 20 and not an expression the VM must evaluate."""
    num = list(numerator)
    den = []
    for d in denominator:
        match = next(
            (
                k
                for k, v in enumerate(num)
                if v is d or (_is_const(v) and _is_const(d) and v.value == d.value)
            ),
            None,
        )
        if match is None:
            den.append(d)
        else:
            num.pop(match)
    return tir.floordiv(_prod(num), _prod(den)) if den else _prod(num)


@converter("Reshape", since=5)
def reshape(node):
    allowzero = node.attr("allowzero", 0) if node.version >= 14 else 0
    data = node.known(0)
    target = node.known(1)
    if data is not None and target is not None and data.size <= 4096:
        dims = int_list(target, node, "shape")
        if allowzero or 0 not in dims:
            return Known(data.reshape(dims), node.importer.known_dtype(node.inputs[0]))
        dims = [data.shape[i] if d == 0 else d for i, d in enumerate(dims)]
        return Known(data.reshape(dims), node.importer.known_dtype(node.inputs[0]))
    x = node.importer.refine(node.input(0), "reshape")  # a shape known only at run time: its sizes
    dims = _reshape_dims(node, shape_of(x), node.ints(1, "shape"), bool(allowzero))
    if any(_is_const(d, 0) for d in shape_of(x)):  # nothing to move: an empty tensor of the new shape
        return op.zeros(shape_expr(node.importer.bind_prims(dims, "shape", sizes=True)), dtype_of(x))
    return op.reshape(x, shape_expr(node.importer.bind_prims(dims, "shape", sizes=True)))


@converter("Reshape", since=1)
def reshape_v1(node):
    node.attr("consumed_inputs", None)
    x = node.input(0)
    dims = _reshape_dims(node, shape_of(x), as_prims(node.attr("shape")), False)
    return op.reshape(x, shape_expr(dims))


@converter("Flatten", since=1)
def flatten(node):
    x = node.input(0)
    shape = shape_of(x)
    axis = node.attr("axis")
    axis = axis + len(shape) if axis < 0 else axis
    return op.reshape(x, shape_expr([_prod(shape[:axis]), _prod(shape[axis:])]))


@converter("Transpose", since=1)
def transpose(node):
    perm = node.attr("perm", None)
    known = node.known(0)
    if known is not None:
        return Known(np.transpose(known, perm), node.importer.known_dtype(node.inputs[0]))
    x = node.input(0)
    return op.permute_dims(x, perm)


def _squeeze_axes(node, x, axes):
    shape = shape_of(x)
    if axes is None:
        return [i for i, d in enumerate(shape) if _is_const(d, 1)]
    return sorted(norm_axes(axes, len(shape), node))


def _squeeze(node, axes):
    known = node.known(0)
    x = node.input(0)
    axes = _squeeze_axes(node, x, axes)
    if known is not None:
        return Known(
            known.reshape([d for i, d in enumerate(known.shape) if i not in axes]),
            node.importer.known_dtype(node.inputs[0]),
        )
    if not axes:
        return x
    return op.squeeze(x, axes)


@converter("Squeeze", since=1)
def squeeze_v1(node):
    return _squeeze(node, node.attr("axes", None))


@converter("Squeeze", since=13)
def squeeze(node):
    if node.has_input(1) and node.const(1) is None:  # axes read at run time
        x = node.input(0)
        axes = node.ints(1, "axes")
        mask = axis_mask(node, ndim_of(x), axes)
        dims = squeezed_shape(shape_of(x), mask)[: ndim_of(x) - len(axes)]
        return op.reshape(x, shape_expr(node.importer.bind_prims(dims, "squeezed", sizes=True)))
    axes = node.const(1, "axes") if node.has_input(1) else None
    return _squeeze(node, None if axes is None else axes.tolist())


def _unsqueeze(node, axes):
    known = node.known(0)
    x = node.input(0)
    ndim = ndim_of(x) + len(axes)
    axes = sorted(norm_axes(axes, ndim, node))
    if known is not None:
        shape = list(known.shape)
        for a in axes:
            shape.insert(a, 1)
        return Known(known.reshape(shape), node.importer.known_dtype(node.inputs[0]))
    return op.expand_dims(x, axes)


@converter("Unsqueeze", since=1)
def unsqueeze_v1(node):
    return _unsqueeze(node, node.attr("axes"))


@converter("Unsqueeze", since=13)
def unsqueeze(node):
    if node.const(1) is None:  # axes read at run time
        x = node.input(0)
        dims = inserted_shape(shape_of(x), node.ints(1, "axes"))
        return op.reshape(x, shape_expr(node.importer.bind_prims(dims, "unsqueezed", sizes=True)))
    return _unsqueeze(node, node.const(1, "axes").reshape(-1).tolist())


@converter("Concat", since=1)
def concat(node):
    axis = node.attr("axis", 1 if node.version < 4 else None)
    arrays = node.all_known()
    if arrays is not None and all(a.size <= 4096 for a in arrays):
        arrays = [a for a in arrays if a is not None]
        out = np.concatenate(arrays, axis=axis)
        if out.dtype != object:
            return out.astype(arrays[0].dtype)
        return Known(out, node.importer.known_dtype(node.inputs[0]))
    values = [v for v in node.input_list() if not _is_empty(v)] or node.input_list()[:1]
    if len(values) == 1:
        return values[0]
    return op.concat(values, axis=axis)


def _is_empty(expr) -> bool:
    shape = static_shape(expr) if expr.struct_info.shape_values is not None else None
    return shape is not None and 0 in shape and len(shape) == 1


# -- split / slice --------------------------------------------------------------------------


def _split(node, x, axis, sizes, count):
    dim = shape_of(x)[axis]
    if sizes is None:
        if isinstance(dim, tir.IntImm):
            n = int(dim.value)
            part = -(-n // count)
            sizes = [min(part, n - i * part) for i in range(count)]
        else:
            part = tir.floordiv(dim + count - 1, count)
            sizes = [part] * (count - 1) + [dim - part * (count - 1)]
    outs = []
    start = tir.const(0, I64)
    for s in sizes:
        end = start + _i64(s)
        outs.append(_slice_axis(node, x, axis, start, end))
        start = end
    return tuple(outs)


def _slice_axis(node, x, axis, start, end):
    if _is_const(start) or isinstance(start, int):
        s = start.value if isinstance(start, tir.IntImm) else start
        e = end if isinstance(end, int) else end
        if isinstance(e, tir.PrimExpr):
            e = tir.arith.Analyzer().simplify(e)
        if isinstance(e, tir.IntImm):
            return op.strided_slice(x, [axis], [s], [int(e.value)])
    return dynamic_slice(node, x, [axis], [start], [end], [1])


@converter("Split", since=2)
def split_v2(node):
    x = node.input(0)
    axis = norm_axis(node.attr("axis"), ndim_of(x), node)
    sizes = node.attr("split", None)
    return _split(node, x, axis, sizes, len(node.outputs))


@converter("Split", since=13)
def split(node):
    x = node.input(0)
    axis = norm_axis(node.attr("axis"), ndim_of(x), node)
    count = len(node.outputs)
    if node.version >= 18:
        num = node.attr("num_outputs", None)
        count = num if num is not None else count
    sizes = node.ints(1, "split") if node.has_input(1) else None
    return _split(node, x, axis, sizes, count)


def _slice(node, x, starts, ends, axes, steps):
    ndim = ndim_of(x)
    steps = [tir.const(1, I64)] * len(starts) if steps is None else list(steps)
    if axes is not None and not all(_is_const(a) for a in axes):
        return _slice_runtime_axes(node, x, starts, ends, axes, steps)
    axes = list(range(len(starts))) if axes is None else norm_axes([a.value for a in axes], ndim, node)
    if all(_is_const(v) for v in list(starts) + list(ends) + list(steps)):
        begin = [_clip_int(v.value) for v in starts]
        end = [_clip_int(v.value) for v in ends]
        stride = [int(v.value) for v in steps]
        if any(s == 0 for s in stride):
            raise node.error("steps must not be 0")
        shape = shape_of(x)
        if all(s > 0 or isinstance(shape[a], tir.IntImm) for a, s in zip(axes, stride)):
            return op.strided_slice(x, axes, begin, end, stride)
    return dynamic_slice(node, x, axes, starts, ends, steps)


def _slice_runtime_axes(node, x, starts, ends, axes, steps):
    """Slice along axes known only at run time: every axis gets bounds selected by the axes."""
    ndim = ndim_of(x)
    begin, end, stride = [], [], []
    for k in range(ndim):
        b, e, s = tir.const(0, I64), tir.const(2**62, I64), tir.const(1, I64)
        for a, sa, ea, st in zip(axes, starts, ends, steps):
            hit = _or(a == k, a == k - ndim)
            b, e, s = tir.select(hit, sa, b), tir.select(hit, ea, e), tir.select(hit, st, s)
        begin.append(b)
        end.append(e)
        stride.append(s)
    return dynamic_slice(node, x, list(range(ndim)), begin, end, stride)


def _clip_int(v: int) -> int:
    return max(min(v, 2**62), -(2**62))


@converter("Slice", since=1)
def slice_v1(node):
    x = node.input(0)
    starts, ends = as_prims(node.attr("starts")), as_prims(node.attr("ends"))
    axes = node.attr("axes", None)
    return _slice(node, x, starts, ends, None if axes is None else as_prims(axes), None)


@converter("Slice", since=10)
def slice_op(node):
    known = node.known(0)
    consts = [node.const(i) for i in (1, 2, 3, 4)]
    if known is not None and all(c is not None for c in consts[:2]):
        nd = known.ndim
        axes = list(range(len(consts[0]))) if consts[2] is None else [int(a) % nd for a in consts[2]]
        steps = [1] * len(axes) if consts[3] is None else consts[3].tolist()
        index = [slice(None)] * nd
        for a, s, e, st in zip(axes, consts[0].tolist(), consts[1].tolist(), steps):
            index[a] = slice(s, e, st)
        return Known(known[tuple(index)], node.importer.known_dtype(node.inputs[0]))
    x = node.input(0)
    starts, ends = node.ints(1, "starts"), node.ints(2, "ends")
    axes = node.ints(3, "axes") if node.has_input(3) else None
    steps = node.ints(4, "steps") if node.has_input(4) else None
    return _slice(node, x, starts, ends, axes, steps)


# -- expand / tile / pad --------------------------------------------------------------------


@converter("Expand", since=8)
def expand(node):
    folded = fold(
        node,
        lambda x, s: (
            None if s.dtype == object or x.dtype == object else x * np.ones(s.astype(np.int64), dtype=x.dtype)
        ),
    )
    if folded is not None:
        return folded
    x = node.input(0)
    target = node.ints(1, "shape")
    shape = shape_of(x)
    rank = max(len(shape), len(target))
    shape = [tir.const(1, I64)] * (rank - len(shape)) + shape
    target = [tir.const(1, I64)] * (rank - len(target)) + list(target)
    out = []
    analyzer = node.importer.analyzer()
    for d, t in zip(shape, target):
        if _is_const(t, 1):
            out.append(d)
        elif _is_const(d, 1) or (_is_const(t) and _is_const(d)):
            out.append(t if not _is_const(d) or _is_const(d, 1) else d)
        elif d is t or analyzer.can_prove_equal(d, t):
            out.append(d)
        else:
            size = broadcast_size(node.importer, [d, t], analyzer)
            out.append(tir.max(d, t) if size is None else size)
    return op.broadcast_to(x, shape_expr(out))


@converter("Tile", since=6)
def tile(node):
    x = node.input(0)
    reps = node.ints(1, "repeats")
    if all(_is_const(r) for r in reps):
        return op.tile(x, [int(r.value) for r in reps])
    shape = shape_of(x)
    expanded = op.reshape(x, shape_expr([v for d in shape for v in (1, d)]))
    wide = op.broadcast_to(expanded, shape_expr([v for d, r in zip(shape, reps) for v in (r, d)]))
    return op.reshape(wide, shape_expr([r * d for d, r in zip(shape, reps)]))


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "circular"}


def _pad(node, x, pads, value, mode):
    ndim = ndim_of(x)
    if len(pads) != 2 * ndim:
        raise node.error(f"pads has {len(pads)} values for a tensor of rank {ndim}")
    if mode not in _PAD_MODES:
        raise node.unsupported("mode", mode)
    if not all(_is_const(p) for p in pads) or isinstance(value, relax.Expr):
        # widths or the fill value known only at run time
        fill = value if isinstance(value, relax.Expr) else relax.const(value, dtype_of(x))
        if isinstance(fill, relax.Expr) and ndim_of(fill) != 0:
            fill = op.reshape(fill, relax.ShapeExpr([]))
        widths = node.importer.bind_prims(list(pads), "pad")
        return op.nn.dynamic_pad(x, widths[:ndim], widths[ndim:], cast(fill, dtype_of(x)), _PAD_MODES[mode])
    widths = [int(p.value) for p in pads]
    if all(w == 0 for w in widths):
        return x
    pad_width = [v for i in range(ndim) for v in (widths[i], widths[i + ndim])]
    if any(w < 0 for w in widths):
        begins = [max(-w, 0) for w in widths[:ndim]]
        ends = [max(-w, 0) for w in widths[ndim:]]
        shape = shape_of(x)
        x = op.strided_slice(
            x, list(range(ndim)), begins, [_neg_end(e, shape[i]) for i, e in enumerate(ends)]
        )
        pad_width = [max(w, 0) for w in pad_width]
    return op.nn.pad(x, pad_width, pad_mode=_PAD_MODES[mode], pad_value=value)


def _neg_end(e: int, dim) -> int:
    return -e if e else 2**62


@converter("Pad", since=2)
def pad_v2(node):
    x = node.input(0)
    mode = node.attr("mode")
    return _pad(node, x, as_prims(node.attr("pads")), float(node.attr("value")), mode)


@converter("Pad", since=11)
def pad(node):
    x = node.input(0)
    mode = node.attr("mode")
    pads = node.ints(1, "pads")
    value = 0.0
    if node.has_input(2):
        v = node.const(2)
        if v is None:
            value = node.input(2)  # a fill value computed at run time
        else:
            value = v.reshape(-1)[0].item() if v.size else 0.0
    if node.has_input(3):
        ndim = ndim_of(x)
        zero = tir.const(0, I64)
        full = [zero] * (2 * ndim)
        if node.const(3) is None:  # axes read at run time: each axis takes the pads listed for it
            axes = node.ints(3, "axes")
            k = len(axes)
            for d in range(ndim):
                for j, a in enumerate(axes):
                    hit = _or(a == d, a == d - ndim)
                    full[d] = tir.select(hit, pads[j], full[d])
                    full[d + ndim] = tir.select(hit, pads[j + k], full[d + ndim])
        else:
            axes = norm_axes(node.const(3, "axes").reshape(-1).tolist(), ndim, node)
            k = len(axes)
            for j, a in enumerate(axes):
                full[a], full[a + ndim] = pads[j], pads[j + k]
        pads = full
    return _pad(node, x, pads, value, mode)


# -- triangles, one-hot, depth/space --------------------------------------------------------


@converter("Trilu", since=14)
def trilu(node):
    x = node.input(0)
    k = node.ints(1, "k")[0] if node.has_input(1) else tir.const(0, I64)
    upper = node.attr("upper")
    if _is_const(k):
        return op.triu(x, int(k.value)) if upper else op.tril(x, int(k.value))
    rows, cols = shape_of(x)[-2:]
    r = op.expand_dims(op.arange(0, relax.PrimValue(rows), 1, I64), [1])
    c = op.expand_dims(op.arange(0, relax.PrimValue(cols), 1, I64), [0])
    diff = op.subtract(c, r)
    kk = op.reshape(op.shape_to_tensor(shape_expr([k])), relax.ShapeExpr([]))
    keep = op.greater_equal(diff, kk) if upper else op.less_equal(diff, kk)
    return op.where(keep, x, op.zeros_like(x))


@converter("OneHot", since=9)
def one_hot(node):
    indices = node.input(0)
    depth = node.ints(1, "depth")[0]
    values = node.input(2)
    axis = node.attr("axis")
    ndim = ndim_of(indices) + 1
    axis = norm_axis(axis, ndim, node)
    dt = dtype_of(indices) if not dtype_of(indices).startswith("float") else I64
    idx = op.astype(indices, dt) if dt != dtype_of(indices) else indices
    depth_t = op.reshape(op.astype(op.shape_to_tensor(shape_expr([depth])), dt), relax.ShapeExpr([]))
    idx = op.where(op.less(idx, relax.const(0, dt)), op.add(idx, depth_t), idx)
    positions = op.arange(0, relax.PrimValue(depth), 1, dt)
    shape = [1] * ndim
    pos = op.reshape(positions, shape_expr([depth if i == axis else 1 for i in range(ndim)]))
    hot = op.equal(op.expand_dims(idx, [axis]), pos)
    off = op.take(values, relax.const(0, I64), axis=0)
    on = op.take(values, relax.const(1, I64), axis=0)
    del shape
    return op.where(hot, on, off)


@converter("DepthToSpace", since=1)
def depth_to_space(node):
    x = node.input(0)
    b = node.attr("blocksize")
    mode = node.attr("mode", "DCR") if node.version >= 11 else "DCR"
    n, c, h, w = shape_of(x)
    c2 = tir.floordiv(c, b * b)
    if mode == "DCR":
        t = op.reshape(x, shape_expr([n, b, b, c2, h, w]))
        t = op.permute_dims(t, [0, 3, 4, 1, 5, 2])
    elif mode == "CRD":
        t = op.reshape(x, shape_expr([n, c2, b, b, h, w]))
        t = op.permute_dims(t, [0, 1, 4, 2, 5, 3])
    else:
        raise node.unsupported("mode", mode)
    return op.reshape(t, shape_expr([n, c2, h * b, w * b]))


@converter("SpaceToDepth", since=1)
def space_to_depth(node):
    x = node.input(0)
    b = node.attr("blocksize")
    mode = node.expect("mode", "DCR", "CRD") if node.version >= 28 else "DCR"
    n, c, h, w = shape_of(x)
    t = op.reshape(x, shape_expr([n, c, tir.floordiv(h, b), b, tir.floordiv(w, b), b]))
    # DCR: the block offsets vary slowest in the output channels; CRD: the input channel does
    t = op.permute_dims(t, [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4])
    return op.reshape(t, shape_expr([n, c * b * b, tir.floordiv(h, b), tir.floordiv(w, b)]))
