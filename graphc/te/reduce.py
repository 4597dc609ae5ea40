"""Reductions in tensor expressions: `reduce_axis`, commutative reducers and the `Reduce` node.

`te.sum(A[i, k], axis=k)` builds a `Reduce` whose `combiner` says how two partial values
combine (`x + y`) and what the identity is (`0`). `comm_reducer` makes new reducers,
including multi-value ones such as argmax over (index, value) pairs.

>>> from graphc import te
>>> A = te.placeholder((4, 8), name="A")
>>> k = te.reduce_axis((0, 8), name="k")
>>> r = te.sum(A[0, k], axis=k)
>>> type(r).__name__, r.dtype, r.axis[0].var.name
('Reduce', 'float32', 'k')
>>> te.max(te.const(2), te.const(5)).value  # called on values, a reducer is its combiner
5
"""

from __future__ import annotations

import math

from ..errors import TIRError
from ..ir.dtype import DataType
from ..ir.node import Node, node
from ..tir import op as _op
from ..tir.expr import PrimExpr, Range, Var, const, convert, select
from ..tir.functor import substitute
from ..tir.stmt import IterType, IterVar
from .iter_var import ExprIterVar


@node
class CommReducer(Node):
    """A commutative reducer: `result` combines partial values `lhs` with new values `rhs`."""

    lhs: tuple
    rhs: tuple
    result: tuple
    identity_element: tuple

    def __call__(self, lhs_values, rhs_values) -> tuple:
        """The combined values of `lhs_values` (accumulators) with `rhs_values` (new elements)."""
        vmap = dict(zip(self.lhs, lhs_values))
        vmap.update(zip(self.rhs, rhs_values))
        return tuple(substitute(r, vmap) for r in self.result)


@node
class Reduce(PrimExpr):
    """Output `value_index` of reducing `source` over `axis` with `combiner`, where `condition`.

    `init`, when not empty, replaces the combiner's identity as the starting values.
    """

    combiner: CommReducer
    source: tuple
    axis: tuple
    condition: PrimExpr
    value_index: int
    init: tuple
    dtype: str

    def __repr__(self) -> str:
        return f"Reduce(value_index={self.value_index}, axis={[iv.var.name for iv in self.axis]})"


def reduce_axis(dom, name: str = "rv", thread_tag: str = "", dtype: str | None = None) -> IterVar:
    """A reduction axis over `dom` (a `(begin, end)` pair or a Range).

    >>> k = reduce_axis((0, 16), "k")
    >>> k.var.name, int(k.dom.extent), k.iter_type.name
    ('k', 16, 'COMM_REDUCE')
    """
    if isinstance(dom, Range):
        rng = dom
    elif isinstance(dom, list | tuple) and len(dom) == 2:
        rng = Range.make(dom[0], dom[1])
    else:
        raise TIRError(f"reduce_axis expects a (begin, end) pair or a Range, got {dom!r}")
    var_dtype = dtype or rng.extent.dtype
    if var_dtype != rng.extent.dtype:
        rng = Range(convert(rng.min).astype(var_dtype), rng.extent.astype(var_dtype))
    return ExprIterVar(rng, Var(name, var_dtype), IterType.COMM_REDUCE, thread_tag)


def _is_axis(axis) -> bool:
    if isinstance(axis, IterVar):
        return True
    return isinstance(axis, list | tuple) and len(axis) > 0 and all(isinstance(a, IterVar) for a in axis)


class Reducer:
    """A reducer made by `comm_reducer`: `reducer(expr, axis=k, where=cond, init=...)`."""

    def __init__(self, fcombine, fidentity, name: str):
        self.fcombine, self.fidentity, self.name = fcombine, fidentity, name
        self.__name__ = name

    def combiner(self, dtypes: tuple) -> CommReducer:
        """The CommReducer of this reducer for values of `dtypes`."""
        multi = len(dtypes) > 1
        lhs = tuple(Var(f"x{i}" if multi else "x", t) for i, t in enumerate(dtypes))
        rhs = tuple(Var(f"y{i}" if multi else "y", t) for i, t in enumerate(dtypes))
        result = self.fcombine(lhs, rhs) if multi else self.fcombine(lhs[0], rhs[0])
        identity = self.fidentity(*dtypes)
        result = tuple(result) if isinstance(result, list | tuple) else (result,)
        identity = tuple(identity) if isinstance(identity, list | tuple) else (identity,)
        if len(result) != len(dtypes) or len(identity) != len(dtypes):
            raise TIRError(
                f"reducer {self.name}: fcombine and fidentity must give {len(dtypes)} values, "
                f"got {len(result)} and {len(identity)}"
            )
        result = tuple(convert(r) for r in result)
        identity = tuple(convert(v, t) for v, t in zip(identity, dtypes))
        return CommReducer(lhs, rhs, result, identity)

    def __call__(self, expr, axis=None, where=None, init=None, *args):
        if not _is_axis(axis):
            # Called on values (te.max(a, b)): fold the combiner over them.
            values = [v for v in (expr, axis, where, init, *args) if v is not None]
            if len(values) < 2:
                raise TIRError(f"te.{self.name} expects axis=<reduce axis> or at least two values")
            result = convert(values[0])
            for v in values[1:]:
                result = self.fcombine(result, v)
            return result
        axes = (axis,) if isinstance(axis, IterVar) else tuple(axis)
        for a in axes:
            if a.iter_type != IterType.COMM_REDUCE:
                raise TIRError(f"te.{self.name}: axis {a.var.name} is not a reduce_axis")
        multi = isinstance(expr, list | tuple)
        source = tuple(convert(e) for e in expr) if multi else (convert(expr),)
        combiner = self.combiner(tuple(e.dtype for e in source))
        condition = const(True) if where is None else convert(where)
        if init is None:
            init_values = ()
        else:
            init_values = tuple(init) if multi else (init,)
            init_values = tuple(convert(v, e.dtype) for v, e in zip(init_values, source))
        reduces = tuple(
            Reduce(combiner, source, axes, condition, i, init_values, combiner.result[i].dtype)
            for i in range(len(source))
        )
        return reduces if multi else reduces[0]


def comm_reducer(fcombine, fidentity, name: str = "reduce") -> Reducer:
    """A commutative reducer from `fcombine(x, y)` and `fidentity(dtype, ...)`.

    Multi-value reducers take and return tuples: `fcombine((x0, x1), (y0, y1))`,
    `fidentity(t0, t1)`.

    >>> from graphc import tir
    >>> mysum = comm_reducer(lambda x, y: x + y, lambda t: tir.const(0, t), name="mysum")
    >>> k = reduce_axis((0, 4), "k")
    >>> mysum(k.var.astype("float32"), axis=k).combiner.identity_element[0].value
    0.0
    """
    return Reducer(fcombine, fidentity, name)


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")  # noqa: A001 - TVM's name
prod = comm_reducer(lambda x, y: x * y, lambda t: const(1, t), name="prod")


def _lowest(dtype: str):
    """The identity of max: -inf for floats (so that a max over only -inf, or over nothing, is
    -inf, as numpy and ONNX say), else the smallest value of the type."""
    return const(-math.inf, dtype) if DataType(dtype).is_float else _op.min_value(dtype)


def _highest(dtype: str):
    """The identity of min: inf for floats, else the largest value of the type."""
    return const(math.inf, dtype) if DataType(dtype).is_float else _op.max_value(dtype)


max = comm_reducer(lambda x, y: _op.max(x, y), _lowest, name="max")  # noqa: A001
min = comm_reducer(lambda x, y: _op.min(x, y), _highest, name="min")  # noqa: A001


def _arg_reducer(better, fworst, name: str) -> Reducer:
    def fcombine(x, y):
        keep = better(x[1], y[1])
        return select(keep, x[0], y[0]), select(keep, x[1], y[1])

    return comm_reducer(fcombine, lambda t0, t1: (const(-1, t0), fworst(t1)), name=name)


_argmax = _arg_reducer(lambda a, b: a >= b, _op.min_value, "argmax")
_argmin = _arg_reducer(lambda a, b: a <= b, _op.max_value, "argmin")


def _arg(reducer: Reducer, expr, axis, where, name: str) -> PrimExpr:
    axes = (axis,) if isinstance(axis, IterVar) else tuple(axis or ())
    if len(axes) != 1 or not isinstance(axes[0], IterVar):
        raise TIRError(f"te.{name} reduces over exactly one reduce_axis, got {axis!r}")
    index, value = reducer((axes[0].var, expr), axis=axes, where=where)
    return index


def argmax(expr, axis, where=None) -> PrimExpr:
    """The index along `axis` of the largest `expr` (the first one on ties).

    Use it as a compute body: `te.compute((n,), lambda i: te.argmax(A[i, k], axis=k))`.
    The (index, value) pair is reduced together; the value output stays internal.

    >>> from graphc import te
    >>> X = te.placeholder((4, 8), name="X")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> idx = te.compute((4,), lambda i: te.argmax(X[i, k], axis=k), name="idx")
    >>> idx.dtype, idx.op.num_outputs, idx.op.output(1).name
    ('int32', 2, 'idx_v1')
    """
    return _arg(_argmax, expr, axis, where, "argmax")


def argmin(expr, axis, where=None) -> PrimExpr:
    """The index along `axis` of the smallest `expr` (the first one on ties)."""
    return _arg(_argmin, expr, axis, where, "argmin")
