"""Input specifications for `Module.export_tvm`: `nn.spec.Tensor(shape, dtype)`.

A dimension is an int or a name; the same name in several inputs is the same symbolic size.

>>> from graphc.relax.frontend import nn
>>> nn.spec.Tensor(("n", 784), "float32").struct_info({})
R.Tensor((n, 784), dtype="float32")
"""

from __future__ import annotations

from .... import tir
from ...struct_info import TensorStructInfo


class Tensor:
    """The shape and dtype of one exported input."""

    def __init__(self, shape, dtype: str = "float32"):
        for d in shape:
            if not isinstance(d, int | str | tir.PrimExpr) or (isinstance(d, int) and d < 0):
                raise ValueError(f"nn.spec.Tensor: dimension {d!r} must be a non-negative int or a name")
        self.shape = tuple(shape)
        self.dtype = dtype

    def struct_info(self, symbols: dict) -> TensorStructInfo:
        dims = []
        for d in self.shape:
            if isinstance(d, str):
                d = symbols.setdefault(d, tir.Var(d, "int64"))
            dims.append(d)
        return TensorStructInfo(tuple(dims), self.dtype)

    def __repr__(self) -> str:
        return f"nn.spec.Tensor({self.shape}, {self.dtype!r})"
