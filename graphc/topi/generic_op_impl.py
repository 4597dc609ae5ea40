"""Arithmetic on TE tensors: `A + B`, `A * 2.0`, `-A` build topi's broadcasting computes.

As in TVM (`topi/generic_op_impl.py`), importing topi gives `te.Tensor` the Python operators,
so a TE function such as `lambda x: x + 1` (what `bb.emit_te` is often given) works.

>>> from graphc import te, topi
>>> a = te.placeholder((2, 3), "float32", name="a")
>>> b = a * 2.0 + a
>>> b.op.name, [int(d) for d in b.shape]
('T_add', [2, 3])
"""

from __future__ import annotations

from .. import te
from . import broadcast


def _operator(fn, reflected: bool = False):
    def apply(self, other):
        if not isinstance(other, te.Tensor | int | float):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return apply


def _negative(self):
    return broadcast.multiply(self, -1 if self.dtype.startswith(("int", "uint")) else -1.0)


_OPERATORS = {
    "__add__": _operator(broadcast.add), "__radd__": _operator(broadcast.add, True),
    "__sub__": _operator(broadcast.subtract), "__rsub__": _operator(broadcast.subtract, True),
    "__mul__": _operator(broadcast.multiply), "__rmul__": _operator(broadcast.multiply, True),
    "__truediv__": _operator(broadcast.divide), "__rtruediv__": _operator(broadcast.divide, True),
    "__floordiv__": _operator(broadcast.floor_divide),
    "__rfloordiv__": _operator(broadcast.floor_divide, True),
    "__mod__": _operator(broadcast.floor_mod), "__rmod__": _operator(broadcast.floor_mod, True),
    "__neg__": _negative,
}

for _name, _fn in _OPERATORS.items():
    setattr(te.Tensor, _name, _fn)
