"""Relax operators: the registry and the call builders (`relax.op.add(a, b)` returns a Call).

>>> from graphc import relax
>>> relax.op.add
<function add at ...>
>>> relax.op.Op.get("relax.nn.relu").pattern.name
'kElemWise'
"""

from . import nn
from .base import call_tir
from .binary import add, divide, multiply, subtract
from .linear_algebra import matmul
from .manipulate import permute_dims, reshape
from .registry import Op, OpInfo, OpPatternKind, infer_struct_info, list_ops, register_op, set_legalize

__all__ = [
    "Op", "OpInfo", "OpPatternKind", "add", "call_tir", "divide", "infer_struct_info", "list_ops", "matmul",
    "multiply", "nn", "permute_dims", "register_op", "reshape", "set_legalize", "subtract",
]
