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
from ..tir.op import (
    abs,
    acos,
    acosh,
    all,
    any,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    call_extern,
    call_intrin,
    call_pure_extern,
    ceil,
    ceildiv,
    copysign,
    cos,
    cosh,
    erf,
    exp,
    exp2,
    exp10,
    expm1,
    fabs,
    floor,
    fmod,
    hypot,
    if_then_else,
    infinity,
    isfinite,
    isinf,
    isnan,
    likely,
    log,
    log1p,
    log2,
    log10,
    max_value,
    min_value,
    nearbyint,
    nextafter,
    popcount,
    pow,
    power,
    reinterpret,
    round,
    rsqrt,
    shift_left,
    shift_right,
    sigmoid,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)
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
