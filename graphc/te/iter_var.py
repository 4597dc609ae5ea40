"""`ExprIterVar`: the IterVar TE hands out for axes, usable directly in index expressions.

TVM's IterVar is itself an expression, so TE code writes `A[i * 2 + k]` or `k < 5` with a
reduce axis `k`; here the operators and `convert` act on the axis's `var`.

>>> from graphc import te
>>> k = te.reduce_axis((0, 4), "k")
>>> (k * 2 + 1).a.a is k.var
True
"""

from __future__ import annotations

from ..ir.node import node
from ..tir.stmt import IterVar

_OPERATORS = (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod neg pos "
    "lt le gt ge eq ne and rand or ror invert"
).split()


@node
class ExprIterVar(IterVar):
    """An IterVar that behaves as its `var` in arithmetic, comparisons and `tir.convert`."""

    __hash__ = object.__hash__

    def asobject(self):
        """The variable this axis stands for in expressions (used by `tir.convert`)."""
        return self.var

    def astype(self, dtype: str):
        return self.var.astype(dtype)

    @property
    def dtype(self) -> str:
        return self.var.dtype


def _delegate(name: str):
    def method(self, *args):
        return getattr(self.var, name)(*args)

    method.__name__ = name
    return method


for _name in _OPERATORS:
    setattr(ExprIterVar, f"__{_name}__", _delegate(f"__{_name}__"))
