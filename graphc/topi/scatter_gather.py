"""Gathers (`gather_elements`, `gather_nd`), `one_hot`, and scatters (`scatter_elements`, `scatter_nd`).

Gathers and one_hot are TE computes (one output element reads one input element). Scatters
write where their indices say, several updates possibly landing on one element, so they are
TIR kernels (see `topi.scan.extern_func`) that copy `data` and then apply the updates in
row-major order of `indices`. Every index read from `indices` goes through `tir.check_index`
before it addresses anything, under `mode`: "raise" (the default: a negative index counts from
the end once, as in numpy and ONNX) or "nonnegative" (torch's gather and scatter); a value out
of range stops the kernel, which then raises IndexError, so no kernel reads or writes out of
bounds. Only the explicit mode "fast" trusts the indices.

>>> from graphc import te, topi
>>> x = te.placeholder((3, 4), "float32", name="x")
>>> i = te.placeholder((2, 4), "int64", name="i")
>>> [int(d) for d in topi.gather_elements(x, i, axis=0).shape]
[2, 4]
>>> [b.name for b in topi.scatter_elements(x, i, x, 0, "add").buffers]
['x', 'i', 'x', 'T_scatter_elements']
"""

from __future__ import annotations

from .. import te
from ..ir.dtype import DataType
from ..tir import expr as _e
from ..tir import op as _op
from ..tir.buffer import decl_buffer
from ..tir.function import PrimFunc
from ..tir.stmt import IfThenElse, LetStmt
from .scan import extern_func, i64, loop_nest, seq, store
from .transform import checked_index, index_message

__all__ = [
    "CHECKED_MODES",
    "ONE_HOT_MODES",
    "SCATTER_REDUCTIONS",
    "gather_elements",
    "gather_nd",
    "one_hot",
    "scatter_elements",
    "scatter_nd",
]

# The reductions each scatter accepts (TVM's): how an update combines with the element it hits.
SCATTER_REDUCTIONS = {
    "scatter_elements": ("update", "add", "mul", "mean", "max", "min"),
    "scatter_nd": ("update", "add", "mul", "max", "min"),
}


# The index modes of the gathers and scatters (see `topi.INDEX_MODES`): "fast", unchecked, is an
# explicit opt-in that graphc itself never chooses.
CHECKED_MODES = ("raise", "nonnegative", "fast")
ONE_HOT_MODES = ("ignore", "nonnegative")


def _check_mode(op: str, mode: str, modes=CHECKED_MODES) -> None:
    if mode not in modes:
        raise ValueError(f"topi.{op}: mode must be one of {', '.join(modes)}; got {mode!r}")


def gather_elements(data: te.Tensor, indices: te.Tensor, axis: int = 0, mode: str = "raise") -> te.Tensor:
    """`out[i] = data[i with i[axis] replaced by indices[i]]`, shaped like `indices` (ONNX's)."""
    _check_mode("gather_elements", mode)
    axis %= len(data.shape)
    dim = data.shape[axis]
    message = index_message(indices, axis, data)

    def f(*i):
        src = checked_index(indices(*i), dim, mode, message)
        return data(*(src if k == axis else v for k, v in enumerate(i)))

    return te.compute(indices.shape, f, name="T_gather_elements")


def gather_nd(data: te.Tensor, indices: te.Tensor, batch_dims: int = 0, mode: str = "raise") -> te.Tensor:
    """ONNX's GatherND: the last axis of `indices` holds (partial) positions into `data`.

    The first `batch_dims` axes of `data` and `indices` are matched; the result has shape
    `indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:]`.
    """
    _check_mode("gather_nd", mode)
    depth = int(indices.shape[-1])
    lead = len(indices.shape) - 1
    shape = tuple(indices.shape[:-1]) + tuple(data.shape[batch_dims + depth :])
    messages = [index_message(indices, batch_dims + m, data) for m in range(depth)]

    def f(*o):
        pos = o[:lead]
        picked = [
            checked_index(indices(*pos, _e.const(m, "int64")), data.shape[batch_dims + m], mode, messages[m])
            for m in range(depth)
        ]
        return data(*o[:batch_dims], *picked, *o[lead:])

    return te.compute(shape, f, name="T_gather_nd")


def one_hot(indices: te.Tensor, on_value, off_value, depth: int, axis: int = -1,
            mode: str = "ignore") -> te.Tensor:
    """`on_value` where the new axis `axis` (of length `depth`) equals `indices`, else `off_value`.

    `mode` "ignore" (TVM's): indices outside [0, depth), negative ones included, match no
    position; "nonnegative" (torch's): they raise IndexError.
    """
    _check_mode("one_hot", mode, ONE_HOT_MODES)
    ndim = len(indices.shape) + 1
    axis %= ndim
    on_value = _e.convert(on_value)
    dtype = on_value.dtype
    off_value = _e.cast(off_value, dtype)
    shape = list(indices.shape)
    shape.insert(axis, _e.const(int(depth), "int64"))

    message = index_message(indices, target=f"the {depth} one-hot classes")

    def f(*o):
        rest = o[:axis] + o[axis + 1 :]
        index = indices(*rest)
        if mode == "nonnegative":
            index = checked_index(index, depth, mode, message)
        hit = _e._compare(_e.EQ, _e.cast(index, "int64"), _e.cast(o[axis], "int64"))
        return _e.select(hit, on_value, off_value)

    return te.compute(tuple(shape), f, name="T_one_hot")


def _combine(reduction: str, old, new):
    """The element after an update lands on it (`mean` sums here and divides at the end)."""
    if reduction == "update":
        return new
    if reduction in ("add", "mean"):
        return old + new
    if reduction == "mul":
        return old * new
    return _op.max(old, new) if reduction == "max" else _op.min(old, new)


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in SCATTER_REDUCTIONS[op]:
        choices = ", ".join(SCATTER_REDUCTIONS[op])
        raise ValueError(f"topi.{op}: reduction must be one of {choices}; got {reduction!r}")


def _fits(a, b) -> bool:
    """Dimension `a` is known to be at most `b`."""
    if a is b:
        return True
    return isinstance(a, _e.IntImm) and isinstance(b, _e.IntImm) and a.value <= b.value


def _within(ok, index, extent, bounds):
    """`ok`, and `index` (running over `extent`) below each bound not known to hold already."""
    for bound in bounds:
        if not _fits(extent, bound):
            ok = ok & (index < i64(bound))
    return ok


def _checked_let(var, index, dim, mode: str, message: str, body):
    """`body` with `var` bound to the checked position of `index` (checked once, where it runs)."""
    return LetStmt(var, checked_index(index, dim, mode, message), body)


def scatter_elements(
    data: te.Tensor, indices: te.Tensor, updates: te.Tensor, axis: int = 0, reduction: str = "update",
    mode: str = "raise",
) -> PrimFunc:
    """A copy of `data` with `out[i with i[axis] = indices[i]] (op)= updates[i]` for every i.

    `reduction` is update (the last update wins), add, mul, mean (of the element and every
    update landing on it, as torch's scatter_reduce with include_self), max or min.
    """
    _check_reduction("scatter_elements", reduction)
    _check_mode("scatter_elements", mode)
    axis %= len(data.shape)
    message = index_message(indices, axis, data)
    count = None
    if reduction == "mean":
        count = decl_buffer(tuple(i64(d) for d in data.shape), "int32", "count")

    def body(x, ind, upd, out):
        def copy(*i):
            return seq(store(out, x[i], i), store(count, 1, i) if count is not None else None)

        def scatter(*i):
            target = _e.Var("target", "int64")
            at = tuple(target if k == axis else v for k, v in enumerate(i))
            stmt = seq(
                store(out, _combine(reduction, out[at], upd[i]), at),
                store(count, count[at] + 1, at) if count is not None else None,
            )
            stmt = _checked_let(target, ind[i], x.shape[axis], mode, message, stmt)
            ok = _e.const(True, "bool")
            for k, v in enumerate(i):
                bounds = [upd.shape[k]] + ([] if k == axis else [x.shape[k]])
                ok = _within(ok, v, ind.shape[k], bounds)
            return stmt if isinstance(ok, _e.IntImm) else IfThenElse(ok, stmt)

        parts = [loop_nest(x.shape, copy), loop_nest(ind.shape, scatter)]
        if count is not None:
            parts.append(loop_nest(x.shape, lambda *i: store(out, _mean(out[i], count[i]), i)))
        return seq(*parts)

    outputs = [(data.shape, data.dtype, "T_scatter_elements")]
    scratch = () if count is None else (count,)
    return extern_func("scatter_elements", [data, indices, updates], outputs, body, scratch)


def _mean(total, count):
    if DataType(total.dtype).is_float:
        return total / _e.cast(count, total.dtype)
    return _e.floordiv(total, _e.cast(count, total.dtype))


def scatter_nd(
    data: te.Tensor, indices: te.Tensor, updates: te.Tensor, reduction: str = "update", mode: str = "raise"
) -> PrimFunc:
    """ONNX's ScatterND: a copy of `data` with `out[indices[p]] (op)= updates[p]` for every p.

    The last axis of `indices` (length K) holds positions into the first K axes of `data`;
    `updates` has shape `indices.shape[:-1] + data.shape[K:]`. `reduction` is update, add, mul,
    max or min.
    """
    _check_reduction("scatter_nd", reduction)
    _check_mode("scatter_nd", mode)
    depth = int(indices.shape[-1])
    lead = len(indices.shape) - 1
    messages = [index_message(indices, m, data) for m in range(depth)]

    def body(x, ind, upd, out):
        def scatter(*i):
            p, rest = i[:lead], i[lead:]
            targets = [_e.Var(f"target{m}", "int64") for m in range(depth)]
            at = (*targets, *rest)
            stmt = store(out, _combine(reduction, out[at], upd[i]), at)
            for m in reversed(range(depth)):
                stmt = _checked_let(targets[m], ind[(*p, _e.const(m, "int64"))], x.shape[m], mode,
                                    messages[m], stmt)
            ok = _e.const(True, "bool")
            for k, v in enumerate(p):
                ok = _within(ok, v, upd.shape[k], [ind.shape[k]])
            for k, v in enumerate(rest):
                ok = _within(ok, v, upd.shape[lead + k], [x.shape[depth + k]])
            return stmt if isinstance(ok, _e.IntImm) else IfThenElse(ok, stmt)

        copy = loop_nest(x.shape, lambda *i: store(out, x[i], i))
        return seq(copy, loop_nest(upd.shape, scatter))

    outputs = [(data.shape, data.dtype, "T_scatter_nd")]
    return extern_func("scatter_nd", [data, indices, updates], outputs, body)
