"""Shape manipulation as TE computes: reshape, transpose, expand_dims, squeeze, flatten, concatenate,
split, stack, flip, tile, repeat, strided_slice, take (TVM's topi names).

>>> from graphc import te, topi
>>> x = te.placeholder((2, 3, 4), "float32", name="x")
>>> [int(d) for d in topi.transpose(x, [2, 0, 1]).shape]
[4, 2, 3]
>>> [int(d) for d in topi.reshape(x, (6, 4)).shape]
[6, 4]
>>> [[int(d) for d in t.shape] for t in topi.split(x, [1], axis=1)]
[[2, 1, 4], [2, 2, 4]]
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from ..tir import op as _op
from ..tir.arith import Analyzer

__all__ = [
    "INDEX_MODES",
    "checked_index",
    "concatenate",
    "dynamic_slice_bounds",
    "slice_window",
    "expand_dims",
    "flatten",
    "flip",
    "index_message",
    "repeat",
    "reshape",
    "slice_extent",
    "split",
    "squeeze",
    "stack",
    "strided_slice",
    "take",
    "tile",
    "transpose",
]


def _i64(d):
    return _e.const(d, "int64") if isinstance(d, int) else _e.cast(d, "int64")


def _simplify(e):
    return Analyzer().simplify(e)


def ravel_index(index, shape):
    """The row-major flat offset of `index` into `shape`."""
    flat = _e.const(0, "int64")
    for i, d in zip(index, shape):
        flat = flat * d + _e.cast(i, "int64")
    return flat


def unravel_index(flat, shape) -> list:
    """The multi-index of the row-major flat offset `flat` in `shape`."""
    out = []
    for d in reversed(shape):
        out.append(_e.floormod(flat, d))
        flat = _e.floordiv(flat, d)
    return list(reversed(out))


def reshape(x: te.Tensor, newshape) -> te.Tensor:
    """`x`'s elements in row-major order, laid out as `newshape`."""
    newshape = tuple(_i64(d) for d in newshape)
    return te.compute(
        newshape, lambda *ax: x(*unravel_index(ravel_index(ax, newshape), x.shape)), name="T_reshape"
    )


def transpose(x: te.Tensor, axes=None) -> te.Tensor:
    """`x` with dimension `k` of the result being dimension `axes[k]` of `x` (None: reversed)."""
    ndim = len(x.shape)
    axes = list(reversed(range(ndim))) if axes is None else [int(a) % ndim for a in axes]
    shape = tuple(x.shape[a] for a in axes)

    def f(*ax):
        src = [None] * ndim
        for k, a in enumerate(axes):
            src[a] = ax[k]
        return x(*src)

    return te.compute(shape, f, name="T_transpose")


def expand_dims(x: te.Tensor, axis) -> te.Tensor:
    """`x` with size-1 dimensions at positions `axis` (an int or list) of the result."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    ndim = len(x.shape) + len(axes)
    axes = {a % ndim for a in axes}
    dims = iter(x.shape)
    shape = tuple(_e.const(1, "int64") if k in axes else next(dims) for k in range(ndim))
    return te.compute(
        shape, lambda *ax: x(*(ax[k] for k in range(ndim) if k not in axes)), name="T_expand_dims"
    )


def squeeze(x: te.Tensor, axis=None) -> te.Tensor:
    """`x` without its size-1 dimensions `axis` (None: every constant size-1 dimension)."""
    ndim = len(x.shape)
    if axis is None:
        axes = {k for k, d in enumerate(x.shape) if isinstance(d, _e.IntImm) and d.value == 1}
    else:
        axes = {a % ndim for a in ([axis] if isinstance(axis, int) else axis)}
    shape = tuple(d for k, d in enumerate(x.shape) if k not in axes)

    def f(*ax):
        it = iter(ax)
        return x(*(_e.const(0, "int64") if k in axes else next(it) for k in range(ndim)))

    return te.compute(shape, f, name="T_squeeze")


def flatten(x: te.Tensor) -> te.Tensor:
    """`x` as a 1-d tensor (a 0-d tensor becomes shape (1,))."""
    total = _e.const(1, "int64")
    for d in x.shape:
        total = total * d
    return reshape(x, (_simplify(total),))


def concatenate(tensors, axis: int = 0) -> te.Tensor:
    """The tensors joined along `axis` (other dimensions equal)."""
    ndim = len(tensors[0].shape)
    axis %= ndim
    offsets, total = [], _e.const(0, "int64")
    for t in tensors:
        offsets.append(total)
        total = _simplify(total + t.shape[axis])
    shape = tuple(total if k == axis else d for k, d in enumerate(tensors[0].shape))

    def f(*ax):
        value = None
        for t, off in zip(tensors, offsets):
            src = tuple(ax[k] - off if k == axis else ax[k] for k in range(ndim))
            value = t(*src) if value is None else _op.if_then_else(ax[axis] >= off, t(*src), value)
        return value

    return te.compute(shape, f, name="T_concat")


def split(x: te.Tensor, indices_or_sections, axis: int = 0) -> list:
    """`x` cut along `axis` into equal sections (an int) or at the given indices (a list)."""
    axis %= len(x.shape)
    dim = x.shape[axis]
    if isinstance(indices_or_sections, int):
        size = _simplify(_e.floordiv(dim, indices_or_sections))
        begins = [_simplify(size * k) for k in range(indices_or_sections)]
        ends = begins[1:] + [dim]
    else:
        begins = [_e.const(0, "int64")] + [_i64(i) for i in indices_or_sections]
        ends = [_i64(i) for i in indices_or_sections] + [dim]
    outs = []
    for k, (b, e) in enumerate(zip(begins, ends)):
        shape = tuple(_simplify(e - b) if j == axis else d for j, d in enumerate(x.shape))
        outs.append(
            te.compute(
                shape,
                lambda *ax, b=b: x(*(v + b if j == axis else v for j, v in enumerate(ax))),
                name=f"T_split_sections{k}" if k else "T_split_sections",
            )
        )
    return outs


def stack(tensors, axis: int = 0) -> te.Tensor:
    """The tensors (one shape) joined along a new dimension `axis`."""
    ndim = len(tensors[0].shape) + 1
    axis %= ndim
    shape = list(tensors[0].shape)
    shape.insert(axis, _e.const(len(tensors), "int64"))

    def f(*ax):
        src = tuple(ax[:axis]) + tuple(ax[axis + 1 :])
        value = tensors[-1](*src)
        for k in range(len(tensors) - 2, -1, -1):
            value = _e.select(
                _e._compare(_e.EQ, ax[axis], _e.const(k, ax[axis].dtype)), tensors[k](*src), value
            )
        return value

    return te.compute(tuple(shape), f, name="T_stack")


def flip(x: te.Tensor, axis: int = 0) -> te.Tensor:
    """`x` reversed along `axis`."""
    axis %= len(x.shape)
    last = x.shape[axis] - 1
    return te.compute(
        x.shape,
        lambda *ax: x(*(last - v if k == axis else v for k, v in enumerate(ax))),
        name="T_reverse_sequence",
    )


def tile(x: te.Tensor, reps) -> te.Tensor:
    """numpy's tile: `x` repeated `reps[k]` times along each dimension (ranks padded with 1s)."""
    reps = [int(r) for r in reps]
    ndim = max(len(reps), len(x.shape))
    reps = [1] * (ndim - len(reps)) + reps
    src_shape = [_e.const(1, "int64")] * (ndim - len(x.shape)) + list(x.shape)
    shape = tuple(_simplify(d * r) for d, r in zip(src_shape, reps))
    lead = ndim - len(x.shape)
    return te.compute(
        shape,
        lambda *ax: x(*(_e.floormod(v, src_shape[k]) for k, v in enumerate(ax) if k >= lead)),
        name="T_tile",
    )


def repeat(x: te.Tensor, repeats: int, axis=None) -> te.Tensor:
    """numpy's repeat: each element repeated `repeats` times along `axis` (None: of the flattened `x`)."""
    if axis is None:
        x, axis = flatten(x), 0
    axis %= len(x.shape)
    shape = tuple(_simplify(d * repeats) if k == axis else d for k, d in enumerate(x.shape))
    return te.compute(
        shape,
        lambda *ax: x(*(_e.floordiv(v, repeats) if k == axis else v for k, v in enumerate(ax))),
        name="T_repeat",
    )


def slice_extent(dim, begin, end, stride):
    """The length of `range(dim)[begin:end:stride]` (numpy clamping), symbolic when `dim` is.

    `begin`, `end` and `stride` are ints or int64 PrimExprs. A symbolic bound is clamped into
    [0, dim] (it is not counted from the end: frontends give sizes there, never negative) and
    a symbolic stride counts as at least 1, so no value makes the slice leave `x`.

    >>> from graphc import tir
    >>> n = tir.Var("n", "int64")
    >>> slice_extent(tir.const(64, "int64"), 0, n, 1)
    T.min(T.max(n, T.int64(0)), T.int64(64))
    """
    if all(isinstance(v, int) for v in (begin, end, stride)):
        if isinstance(dim, _e.IntImm):
            return _e.const(len(range(dim.value)[begin:end:stride]), "int64")
        if stride < 0:
            raise ValueError(f"strided_slice with a negative stride needs a constant dimension, got {dim}")
    elif isinstance(stride, int) and stride < 0:
        raise ValueError(f"strided_slice with a negative stride needs constant bounds, got {begin}:{end}")
    lo, hi, step = _clamped(dim, begin), _clamped(dim, end), _step(stride)
    return _simplify(_op.max(_e.floordiv(hi - lo + (step - 1), step), _e.const(0, "int64")))


def _step(stride):
    """A slice's stride as int64; a symbolic one is at least 1."""
    if isinstance(stride, int):
        return _e.const(stride, "int64")
    return _op.max(_i64(stride), _e.const(1, "int64"))


def _clamped(dim, i):
    """`i` clamped into [0, dim], for a positive stride: a negative int counts from the end,
    a symbolic bound does not."""
    if not isinstance(i, int):
        return _simplify(_op.min(_op.max(_i64(i), _e.const(0, "int64")), dim))
    if i >= 0:
        return _simplify(_op.min(_e.const(i, "int64"), dim))
    return _simplify(_op.max(dim + i, _e.const(0, "int64")))


def _slice_start(dim, begin, stride):
    if isinstance(dim, _e.IntImm) and isinstance(begin, int) and isinstance(stride, int):
        r = range(dim.value)[begin::stride]
        return _e.const(r.start if len(r) else 0, "int64")
    return _clamped(dim, begin)


def _slice_value(v):
    """An int, or an int64 PrimExpr when symbolic."""
    if isinstance(v, _e.IntImm):
        return int(v.value)
    return _i64(v) if isinstance(v, _e.PrimExpr) else int(v)


def strided_slice(x: te.Tensor, axes, begin, end, strides=None) -> te.Tensor:
    """`x[begin:end:stride]` on each of `axes` (numpy semantics with clamping); other axes whole.

    Bounds and strides may be symbolic (see `slice_extent`)."""
    ndim = len(x.shape)
    strides = list(strides) if strides else [1] * len(axes)
    spec = {int(a) % ndim: (_slice_value(b), _slice_value(e), _slice_value(s))
            for a, b, e, s in zip(axes, begin, end, strides)}
    shape = tuple(slice_extent(d, *spec[k]) if k in spec else d for k, d in enumerate(x.shape))
    starts = {k: _slice_start(x.shape[k], b, s) for k, (b, _, s) in spec.items()}

    def f(*ax):
        return x(*(starts[k] + v * _step(spec[k][2]) if k in spec else v for k, v in enumerate(ax)))

    return te.compute(shape, f, name="T_strided_slice")


# How an index value out of [0, n) is treated (`take`'s modes; the gathers and scatters take
# the first two): "raise" counts a negative index from the end once (numpy, ONNX, Python) and
# raises IndexError outside [-n, n); "nonnegative" raises IndexError outside [0, n) (torch's
# embedding, index_select, gather, scatter); "clip" clamps; "wrap" takes the index modulo n;
# "fast" trusts the indices (TVM's default, unchecked: an explicit opt-in only).
INDEX_MODES = ("raise", "nonnegative", "clip", "wrap", "fast")


def index_message(indices: te.Tensor, axis=None, data: te.Tensor | None = None, target: str = "") -> str:
    """The IndexError text of a checked index read from `indices` into `axis` of `data` (None:
    into the flattened `data`), or into what `target` says."""
    if not target:
        target = f"the flattened {data.name}" if axis is None else f"axis {axis} of {data.name}"
    return f"index {{index}} in {_brace(indices.name)} is out of range [{{lo}}, {{hi}}) for {_brace(target)}"


def _brace(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def checked_index(index, dim, mode: str, message: str):
    """`index` (read from data) as an int64 position into an axis of `dim` under `mode`."""
    index = _e.cast(index, "int64")
    if mode in ("raise", "nonnegative"):
        return _op.check_index(index, dim, mode == "raise", message)
    if mode == "clip":
        index = _op.min(_op.max(index, _e.const(0, "int64")), dim - 1)
    elif mode == "wrap":
        index = _e.floormod(index, dim)
    elif mode != "fast":
        raise ValueError(f"unknown index mode {mode!r}; expected one of {', '.join(INDEX_MODES)}")
    if mode != "fast":  # clamped or wrapped into an empty axis is still outside it
        index = _op.check_index(index, dim, False, message)
    return index


def take(x: te.Tensor, indices: te.Tensor, axis=None, mode: str = "raise") -> te.Tensor:
    """Elements of `x` at `indices` along `axis` (None: of the flattened `x`).

    `mode` (see `INDEX_MODES`): "raise" (numpy's: negative indices count from the end, others
    out of range raise IndexError), "nonnegative", "clip", "wrap", or "fast" (unchecked).
    """
    message = index_message(indices, axis, x)
    if axis is None:
        x, axis = flatten(x), 0
    axis %= len(x.shape)
    dim = x.shape[axis]
    nind = len(indices.shape)
    shape = tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1 :])

    def f(*ax):
        idx = checked_index(indices(*ax[axis : axis + nind]), dim, mode, message)
        return x(*(tuple(ax[:axis]) + (idx,) + tuple(ax[axis + nind :])))

    return te.compute(shape, f, name="T_take")


def dynamic_slice_bounds(dim, begin, end, stride):
    """`(start, length)` of `range(dim)[begin:end:stride]` for symbolic `begin`, `end` and
    `stride` (numpy clamping; the sign of `stride` may be known only at run time)."""
    i64 = "int64"
    dim, begin, end, stride = (_e.cast(v, i64) if isinstance(v, _e.PrimExpr) else _e.const(int(v), i64)
                               for v in (dim, begin, end, stride))
    zero, one = _e.const(0, i64), _e.const(1, i64)

    def wrap(i):
        return _e.select(i < zero, i + dim, i)

    def clamp(i, lo, hi):
        return _op.min(_op.max(i, lo), hi)

    pos_start, pos_end = clamp(wrap(begin), zero, dim), clamp(wrap(end), zero, dim)
    neg_start, neg_end = clamp(wrap(begin), -one, dim - one), clamp(wrap(end), -one, dim - one)
    pos_len = _op.max(_e.floordiv(pos_end - pos_start + stride - one, stride), zero)
    neg_len = _op.max(_e.floordiv(neg_start - neg_end - stride - one, zero - stride), zero)
    positive = stride > zero
    start = _simplify(_e.select(positive, pos_start, neg_start))
    length = _simplify(_e.select(positive, pos_len, neg_len))
    return start, length


def slice_window(x: te.Tensor, begin, size, strides, axes) -> te.Tensor:
    """`size[j]` elements of `x` from `begin[j]`, `strides[j]` apart, along each of `axes`
    (symbolic PrimExprs allowed; the caller clamps them into range, see
    `dynamic_slice_bounds`); other axes whole."""
    ndim = len(x.shape)
    i64 = "int64"
    spec = {int(a) % ndim: tuple(_e.cast(v, i64) if isinstance(v, _e.PrimExpr) else _e.const(int(v), i64)
                                 for v in (b, n, s))
            for a, b, n, s in zip(axes, begin, size, strides)}
    shape = tuple(spec[k][1] if k in spec else d for k, d in enumerate(x.shape))

    def f(*ax):
        return x(*(spec[k][0] + _e.cast(v, i64) * spec[k][2] if k in spec else v for k, v in enumerate(ax)))

    return te.compute(shape, f, name="T_slice_window")
