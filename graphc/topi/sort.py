"""`sort`, `argsort` and `topk` as TIR kernels: a stable bottom-up merge sort of each row.

Each row along `axis` sorts a permutation of its positions, merging runs of width 1, 2, 4, ...
between the two halves of a scratch buffer; ties keep their original order (numpy's and
torch's stable sort) and NaN sorts above every number (last ascending, first descending,
as in numpy and torch). The kernels are opaque TIR (see `topi.scan.extern_func`).

>>> from graphc import te, topi
>>> x = te.placeholder((2, 5), "float32", name="x")
>>> [b.name for b in topi.topk(x, 2).buffers]
['x', 'T_topk_values', 'T_topk_indices']
>>> [int(d) for d in topi.topk(x, 2, axis=1, ret_type="indices").buffers[1].shape]
[2, 2]
"""

from __future__ import annotations

from .. import te
from ..ir.dtype import DataType
from ..tir import expr as _e
from ..tir import op as _op
from ..tir.buffer import decl_buffer
from ..tir.expr import Var
from ..tir.function import PrimFunc
from ..tir.stmt import For, ForKind, IfThenElse, LetStmt, While
from .scan import extern_func, i64, loop_nest, seq, store

__all__ = ["argsort", "sort", "topk"]


def _before(a, b):
    """`a` sorts strictly before `b` ascending: `a < b`, with NaN above every number."""
    if not DataType(a.dtype).is_float:
        return a < b
    return (a < b) | (_op.isnan(b) & _e.logical_not(_op.isnan(a)))


def _lets(bindings, body):
    """`body` inside `LetStmt`s binding each (var, value), the first outermost."""
    for var, value in reversed(bindings):
        body = LetStmt(var, value, body)
    return body


def _sorted_rows(
    data: te.Tensor, axis: int, descending: bool, count, write, name: str, outputs, prologue=None
) -> PrimFunc:
    """A kernel that sorts every row of `data` along `axis` and, for the first `count` sorted
    positions, stores `write(outs, index, src, value)`: `index` is the output element, `src` the
    position in the row that sorts there and `value` its element. `prologue(outs)` runs first."""
    ndim = len(data.shape)
    axis %= ndim
    n = i64(data.shape[axis])
    order = decl_buffer((2, n), "int64", "order")  # two halves: merge from one into the other
    state = decl_buffer((4,), "int64", "state")  # run width, source half, left and right heads
    zero = _e.const(0, "int64")
    w_at, src_at, i_at, j_at = ((_e.const(k, "int64"),) for k in range(4))
    count = i64(count)
    static = isinstance(count, _e.IntImm) and isinstance(n, _e.IntImm)
    within = count is n or (static and count.value <= n.value)

    def body(x, *outs):
        def row(*outer):
            def at(t):
                return (*outer[:axis], t, *outer[axis:])

            def key(t):
                return x[at(t)]

            src, width, lo = Var("src", "int64"), Var("width", "int64"), Var("lo", "int64")
            mid, hi, q = Var("mid", "int64"), Var("hi", "int64"), Var("q", "int64")
            i, j, p = Var("left", "int64"), Var("right", "int64"), Var("p", "int64")
            dst = 1 - src

            def take(head, at_head):
                return seq(store(order, order[src, head], (dst, q)), store(state, head + 1, at_head))

            left, right = take(i, i_at), take(j, j_at)
            oi, oj = key(order[src, i]), key(order[src, j])
            # Stable: the right run's head goes first only if it sorts strictly before the left's.
            right_first = _before(oi, oj) if descending else _before(oj, oi)
            choose = IfThenElse(
                i < mid, IfThenElse(j < hi, IfThenElse(right_first, right, left), left), right
            )
            merge_step = _lets([(i, state[i_at]), (j, state[j_at])], choose)
            merge_pair = _lets(
                [(lo, p * 2 * width), (mid, _op.min(lo + width, n)), (hi, _op.min(lo + 2 * width, n))],
                seq(
                    store(state, lo, i_at),
                    store(state, mid, j_at),
                    For(q, lo, hi - lo, ForKind.SERIAL, merge_step),
                ),
            )
            npairs = _e.floordiv(n + 2 * width - 1, 2 * width)
            one_pass = _lets(
                [(width, state[w_at]), (src, state[src_at])],
                seq(
                    For(p, zero, npairs, ForKind.SERIAL, merge_pair),
                    store(state, dst, src_at),
                    store(state, width * 2, w_at),
                ),
            )
            final = Var("final", "int64")

            def emit_one(t):
                stmt = write(outs, at(t), order[final, t], key(order[final, t]))
                return stmt if within else IfThenElse(t < n, stmt)

            emit = loop_nest([count], emit_one, names="t")
            return seq(
                loop_nest([n], lambda t: store(order, t, (zero, t)), names="t"),
                store(state, 1, w_at),
                store(state, 0, src_at),
                While(state[w_at] < n, one_pass),
                LetStmt(final, state[src_at], emit),
            )

        outer = [d for k, d in enumerate(x.shape) if k != axis]
        return seq(prologue(outs) if prologue else None, loop_nest(outer, row))

    return extern_func(name, [data], outputs, body, scratch=(order, state))


def _with_axis(shape, axis: int, extent) -> tuple:
    return tuple(extent if k == axis % len(shape) else d for k, d in enumerate(shape))


def sort(data: te.Tensor, axis: int = -1, descending: bool = False) -> PrimFunc:
    """`data` sorted along `axis` (stable; NaN last ascending, first descending)."""

    def write(outs, index, src, value):
        return store(outs[0], value, index)

    outputs = [(data.shape, data.dtype, "T_sort")]
    return _sorted_rows(data, axis, descending, data.shape[axis], write, "sort", outputs)


def argsort(data: te.Tensor, axis: int = -1, descending: bool = False, dtype: str = "int32") -> PrimFunc:
    """The positions along `axis` that sort `data` (stable), as `dtype` integers."""

    def write(outs, index, src, value):
        return store(outs[0], src, index)

    outputs = [(data.shape, dtype, "T_argsort")]
    return _sorted_rows(data, axis, descending, data.shape[axis], write, "argsort", outputs)


def topk_extent(dim, k: int):
    """The length of topk's result along its axis: `k`, or all of `dim` when k < 1 or k >= dim."""
    if k < 1 or (isinstance(dim, _e.IntImm) and k >= dim.value):
        return dim
    return _e.const(k, "int64")


def topk(
    data: te.Tensor,
    k: int = 1,
    axis: int = -1,
    ret_type: str = "both",
    largest: bool = True,
    dtype: str = "int32",
) -> PrimFunc:
    """The `k` largest (or smallest) elements along `axis`, sorted, and their positions.

    `ret_type` "both" makes two outputs (values, indices), "values" or "indices" one. Ties keep
    their original order. With a symbolic axis shorter than `k` at run time, the positions past
    its end are zero.
    """
    if ret_type not in ("both", "values", "indices"):
        raise ValueError(f"topk's ret_type must be 'both', 'values' or 'indices', got {ret_type!r}")
    count = i64(topk_extent(data.shape[axis], int(k)))
    shape = _with_axis(tuple(data.shape), axis, count)
    outputs, writers = [], []
    if ret_type in ("both", "values"):
        outputs.append((shape, data.dtype, "T_topk_values"))
        writers.append(lambda out, index, src, value: store(out, value, index))
    if ret_type in ("both", "indices"):
        outputs.append((shape, dtype, "T_topk_indices"))
        writers.append(lambda out, index, src, value: store(out, src, index))

    def write(outs, index, src, value):
        return seq(*(w(o, index, src, value) for w, o in zip(writers, outs)))

    def zero_fill(outs):
        return seq(*(loop_nest(o.shape, lambda *i, o=o: store(o, 0, i)) for o in outs))

    # A symbolic axis may be shorter than k at run time: clear the outputs first.
    static = isinstance(count, _e.IntImm) and isinstance(data.shape[axis], _e.IntImm)
    return _sorted_rows(data, axis, largest, count, write, "topk", outputs, None if static else zero_fill)
