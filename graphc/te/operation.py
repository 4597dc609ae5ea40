"""Building TE tensors: `placeholder`, `compute`, and the scalar `var` / `size_var` / `const`.

>>> from graphc import te
>>> A = te.placeholder((8,), name="A")
>>> B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
>>> B.op.name, [iv.var.name for iv in B.op.axis], [t.name for t in B.op.input_tensors]
('B', ['i0'], ['A'])
"""

from __future__ import annotations

import inspect

from ..errors import TIRError
from ..ir.dtype import canonical
from ..tir import expr as _expr
from ..tir.expr import PrimExpr, Range, SizeVar, Var, convert
from ..tir.functor import StmtExprVisitor
from ..tir.stmt import IterType
from .iter_var import ExprIterVar
from .reduce import Reduce
from .tensor import ComputeOp, PlaceholderOp, Tensor


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """A scalar variable (a symbolic dimension or a scalar parameter).

    >>> var("n").dtype
    'int32'
    """
    return Var(name, dtype)


def size_var(name: str = "size", dtype: str = "int32") -> SizeVar:
    """A variable known to be non-negative (a dimension).

    >>> type(size_var("n")).__name__
    'SizeVar'
    """
    return SizeVar(name, dtype)


def const(value, dtype: str | None = None) -> PrimExpr:
    """A constant (`tir.const`).

    >>> const(1.5, "float16").dtype
    'float16'
    """
    return _expr.const(value, dtype)


def _shape(shape) -> tuple:
    if isinstance(shape, int | PrimExpr):
        shape = (shape,)
    if not isinstance(shape, list | tuple):
        raise TIRError(f"a shape must be a tuple of ints or PrimExprs, got {shape!r}")
    dims = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, int | PrimExpr):
            raise TIRError(f"a shape dimension must be an int or an integer PrimExpr, got {d!r}")
        d = _expr.const(d, "int32" if -(2**31) <= d < 2**31 else "int64") if isinstance(d, int) else d
        if not canonical(d.dtype).startswith(("int", "uint")):
            raise TIRError(f"a shape dimension must be an integer, got dtype {d.dtype}")
        dims.append(d)
    return tuple(dims)


def placeholder(shape, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of `shape` and `dtype`.

    >>> placeholder((2, 3), "float16", "x").dtype
    'float16'
    """
    return PlaceholderOp(name, _shape(shape), canonical(dtype)).output(0)


def _arg_names(fcompute, ndim: int) -> list[str]:
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        return [f"i{d}" for d in range(ndim)]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = [p for p in params if p.kind == p.VAR_POSITIONAL]
    if varargs and not positional:
        # `lambda *i` gives i0, i1, ... (TVM's Python computes); `lambda *ax` gives ax0, ax1, ...
        # (the names TVM's C++ topi computes use).
        prefix = "ax" if varargs[0].name == "ax" else "i"
        return [f"{prefix}{d}" for d in range(ndim)]
    if len(positional) != ndim:
        raise TIRError(
            f"te.compute: fcompute takes {len(positional)} index arguments but the shape has "
            f"{ndim} dimensions"
        )
    return [p.name for p in positional]


class _NestedReduceCheck(StmtExprVisitor):
    def visit_Reduce(self, op):
        raise TIRError(
            "te.compute: a reduction (te.sum, ...) must be the whole body, not inside an expression"
        )

    def visit_ProducerLoad(self, op):
        for i in op.indices:
            self.visit_expr(i)


def _check_body(body: list, name: str) -> None:
    reduces = [e for e in body if isinstance(e, Reduce)]
    check = _NestedReduceCheck()
    if reduces and len(reduces) != len(body):
        raise TIRError(f"te.compute {name}: outputs must be all reductions or none")
    for e in body:
        if isinstance(e, Reduce):
            for s in e.source:
                check.visit_expr(s)
            check.visit_expr(e.condition)
        else:
            check.visit_expr(e)
    first = reduces[0] if reduces else None
    for i, e in enumerate(reduces):
        if e.combiner is not first.combiner or e.source is not first.source or e.value_index != i:
            raise TIRError(
                f"te.compute {name}: a multi-output reduction needs the outputs of one reducer call "
                "in order (e.g. `lambda i: argmax_pair((k.var, A[i, k]), axis=k)`)"
            )


def compute(shape, fcompute, name: str = "compute", tag: str = "", attrs=None):
    """A tensor whose element at each index of `shape` is `fcompute(*indices)`.

    `fcompute` returns an expression, a reduction (`te.sum(..., axis=k)`), or a tuple of
    them (then a list of tensors is returned, one per output).

    >>> from graphc import te
    >>> A = te.placeholder((4, 8), name="A")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    >>> [iv.var.name for iv in B.op.reduce_axis], B.shape[0].value
    (['k'], 4)
    """
    dims = _shape(shape)
    names = _arg_names(fcompute, len(dims))
    axis = tuple(
        ExprIterVar(Range(_expr.const(0, d.dtype), d), Var(n, d.dtype), IterType.DATA_PAR)
        for n, d in zip(names, dims)
    )
    result = fcompute(*(iv.var for iv in axis))
    multi = isinstance(result, list | tuple)
    body = [convert(e) for e in result] if multi else [convert(result)]
    if not body:
        raise TIRError(f"te.compute {name}: fcompute returned no expressions")
    visible = None
    if not multi and isinstance(body[0], Reduce) and len(body[0].combiner.result) > 1:
        # A single output of a multi-value reduction (argmax): compute them all, show one.
        r = body[0]
        visible = (r.value_index,)
        body = [
            r.replace(value_index=i, dtype=r.combiner.result[i].dtype) if i != r.value_index else r
            for i in range(len(r.combiner.result))
        ]
    _check_body(body, name)
    op = ComputeOp(name, tag, attrs, axis, body, dims, visible)
    outputs = [op.output(i) for i in op.visible]
    return outputs if multi else outputs[0]


__all__ = ["var", "size_var", "const", "placeholder", "compute"]
