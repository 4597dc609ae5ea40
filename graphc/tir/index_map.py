"""IndexMap: a function from indices to indices, kept as IR (TVM's `tir.IndexMap`).

`IndexMap.from_func(lambda i, j: (j, i))` applies the function to fresh variables once and
keeps the resulting expressions, so the map prints (`T.index_map(lambda i, j: (j, i))`),
compares structurally and is applied to any indices by substitution.

>>> from graphc import tir
>>> m = IndexMap.from_func(lambda i, j: (j, i // 4, i % 4))
>>> m
T.index_map(lambda i, j: (j, i // T.int64(4), i % T.int64(4)))
>>> [int(e) for e in m(tir.const(9, "int64"), tir.const(2, "int64"))]
[2, 2, 1]
"""

from __future__ import annotations

import inspect

from ..ir.node import Node, node
from .expr import PrimExpr, Var, convert
from .functor import substitute


@node
class IndexMap(Node):
    """`initial_indices` (Vars) map to `final_indices` (expressions of them)."""

    initial_indices: tuple
    final_indices: tuple

    @staticmethod
    def from_func(func, ndim: int | None = None, index_dtype: str = "int64") -> IndexMap:
        """The map `func` computes; its parameters name the indices (`ndim` for `*args` functions)."""
        if isinstance(func, IndexMap):
            return func
        params = list(inspect.signature(func).parameters.values())
        if ndim is None:
            if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
                raise TypeError("IndexMap.from_func: give ndim for a function of *args")
            names = [p.name for p in params]
        else:
            names = [f"i{k}" for k in range(ndim)]
        initial = tuple(Var(name, index_dtype) for name in names)
        out = func(*initial)
        if not isinstance(out, list | tuple):
            out = (out,)
        final = tuple(e if isinstance(e, PrimExpr) else convert(e) for e in out)
        return IndexMap(initial, final)

    def __call__(self, *indices) -> list:
        if len(indices) != len(self.initial_indices):
            raise TypeError(f"the index map takes {len(self.initial_indices)} indices, got {len(indices)}")
        vmap = {v: convert(i) for v, i in zip(self.initial_indices, indices)}
        return [substitute(e, vmap) for e in self.final_indices]

    map_indices = __call__

    def __repr__(self) -> str:
        names = ", ".join(v.name for v in self.initial_indices)
        outs = [repr(e) for e in self.final_indices]
        body = f"({outs[0]},)" if len(outs) == 1 else f"({', '.join(outs)})"
        return f"T.index_map(lambda {names}: {body})"

    __str__ = __repr__


__all__ = ["IndexMap"]
