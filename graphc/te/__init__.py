"""Tensor expressions (TVM's `te`): describe tensors by index formulas, then make PrimFuncs.

>>> from graphc import te
>>> n = te.var("n")
>>> A = te.placeholder((n,), name="A")
>>> B = te.compute(A.shape, lambda i: te.sigmoid(A[i]), name="B")
>>> func = te.create_prim_func([A, B])
>>> func.buffer_map[func.params[0]].shape[0] is n
True
"""

# fmt: off
from ..tir.expr import div, floordiv, floormod, truncdiv, truncmod
from ..tir.op import *  # noqa: F403 - the intrinsic helpers, as te.<name>
from ..tir.stmt import IterVar
from .create_prim_func import create_prim_func
from .iter_var import ExprIterVar
from .legacy import create_schedule, thread_axis
from .operation import compute, const, placeholder, size_var, var
from .reduce import (
    CommReducer,
    Reduce,
    Reducer,
    argmax,
    argmin,
    comm_reducer,
    max,
    min,
    prod,
    reduce_axis,
    sum,
)
from .schedule import Schedule, Stage, te_schedule_to_module
from .tensor import ComputeOp, Operation, PlaceholderOp, ProducerLoad, Tensor

# fmt: on

__all__ = [name for name in dir() if not name.startswith("_")]
