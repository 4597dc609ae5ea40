"""A reference interpreter for TensorIR, used as a test oracle (small shapes only).

`run_primfunc(func, *arrays, **scalars)` runs a PrimFunc in block form or lowered form
on numpy arrays, writing outputs in place. Every access is bounds-checked; memory from
`alloc_buffers` / `Allocate` starts as NaN (floats) so reads of unwritten data show up.
Loops of every kind (parallel, vectorized, thread-bound) run serially.

>>> import numpy as np
>>> from graphc import tir
>>> A, B = tir.decl_buffer((4,), "float32", "A"), tir.decl_buffer((4,), "float32", "B")
>>> a, b, i = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("i")
>>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.BufferStore(B, A[i] * 2.0, (i,)))
>>> x, y = np.arange(4, dtype="float32"), np.zeros(4, dtype="float32")
>>> run_primfunc(tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}), x, y)
>>> y.tolist()
[0.0, 2.0, 4.0, 6.0]
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..errors import TIRError
from ..ir.dispatch import method_table
from ..ir.dtype import DataType
from . import expr as tir_expr
from . import stmt as tir_stmt
from .function import PrimFunc


def np_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of one lane of the TensorIR dtype `dtype`."""
    dt = DataType(dtype)
    name = str(dt.element_of()) if dt.lanes > 1 else str(dt)
    if name == "bool":
        return np.dtype(bool)
    if name == "bfloat16" or name.startswith("float8"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def _cast(value, dtype: str):
    dt = DataType(dtype)
    if dt.lanes > 1:
        return np.asarray(value).astype(np_dtype(dtype))
    if dt.is_bool:
        return bool(value)
    if dt.is_float:
        return np_dtype(dtype).type(value)
    value = int(value)  # truncates floats toward zero, as C casts do
    if dt.min_value() <= value <= dt.max_value():
        return value
    value &= (1 << dt.bits) - 1  # wrap around like the machine type
    return value - (1 << dt.bits) if dt.is_int and value >= 1 << (dt.bits - 1) else value


def _trunc_div(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.trunc(np.asarray(a) / np.asarray(b)).astype(np.result_type(a, b))
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _trunc_mod(a, b):
    return a - b * _trunc_div(a, b)


_ARITH = {
    tir_expr.Add: operator.add, tir_expr.Sub: operator.sub, tir_expr.Mul: operator.mul,
    tir_expr.FloorMod: operator.mod,
    tir_expr.Min: np.minimum, tir_expr.Max: np.maximum, tir_expr.Mod: _trunc_mod,
}  # fmt: skip
_CMP = {
    tir_expr.EQ: operator.eq,
    tir_expr.NE: operator.ne,
    tir_expr.LT: operator.lt,
    tir_expr.LE: operator.le,
    tir_expr.GT: operator.gt,
    tir_expr.GE: operator.ge,
}

_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "nearbyint": np.rint, "trunc": np.trunc, "fabs": np.abs, "abs": np.abs,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "bitwise_not": np.invert,
    "erf": np.vectorize(math.erf), "likely": lambda x: x,
}  # fmt: skip
_BINARY = {
    "pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot, "copysign": np.copysign,
    "nextafter": np.nextafter, "shift_left": operator.lshift, "shift_right": operator.rshift,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
}  # fmt: skip
_NO_VALUE_CALLS = {"tir.tvm_storage_sync", "tir.assume"}


class Interpreter:
    """Evaluates statements and expressions against `env` (Var -> value) and `storage`
    (buffer data Var -> flat numpy array). Override `eval_<Node>` / `exec_<Node>` to extend."""

    def __init__(self):
        self.env: dict = {}
        self.storage: dict = {}
        self._eval_table = method_table(type(self), "eval_")
        self._exec_table = method_table(type(self), "exec_")

    # -- dispatch -------------------------------------------------------------------------
    def eval(self, expr):
        method = self._eval_table[type(expr)]
        if method is None:
            raise TIRError(f"the TensorIR interpreter cannot run {type(expr).__name__}")
        return method(self, expr)

    def exec(self, stmt) -> None:
        method = self._exec_table[type(stmt)]
        if method is None:
            raise TIRError(f"the TensorIR interpreter cannot run {type(stmt).__name__}")
        method(self, stmt)

    # -- expressions ----------------------------------------------------------------------
    def eval_IntImm(self, op):
        return bool(op.value) if op.dtype == "bool" else op.value

    def eval_FloatImm(self, op):
        return np_dtype(op.dtype).type(op.value)

    def eval_StringImm(self, op):
        return op.value

    def eval_Var(self, op):
        try:
            return self.env[op]
        except KeyError:
            raise TIRError(f"the interpreter found the unbound variable {op.name!r}") from None

    def eval_Cast(self, op):
        return _cast(self.eval(op.value), op.dtype)

    def eval_BinaryOp(self, op):
        a, b = self.eval(op.a), self.eval(op.b)
        kind = type(op)
        is_float = DataType(op.dtype).is_float
        if kind is tir_expr.Div:
            result = np.true_divide(a, b) if is_float else _trunc_div(a, b)
        elif kind is tir_expr.FloorDiv:
            result = np.floor(np.true_divide(a, b)) if is_float else a // b
        else:
            result = _ARITH[kind](a, b)
        return _cast(result, op.dtype)

    def eval_CmpOp(self, op):
        return _cast(_CMP[type(op)](self.eval(op.a), self.eval(op.b)), op.dtype)

    def eval_And(self, op):
        return _cast(np.logical_and(self.eval(op.a), self.eval(op.b)), op.dtype)

    def eval_Or(self, op):
        return _cast(np.logical_or(self.eval(op.a), self.eval(op.b)), op.dtype)

    def eval_Not(self, op):
        return _cast(np.logical_not(self.eval(op.a)), op.dtype)

    def eval_Select(self, op):
        cond, t, f = self.eval(op.condition), self.eval(op.true_value), self.eval(op.false_value)
        return _cast(np.where(cond, t, f), op.dtype) if isinstance(cond, np.ndarray) else (t if cond else f)

    def eval_Let(self, op):
        self.env[op.var] = self.eval(op.value)
        try:
            return self.eval(op.body)
        finally:
            del self.env[op.var]

    def eval_Ramp(self, op):
        base, stride = self.eval(op.base), self.eval(op.stride)
        return _cast(base + stride * np.arange(op.lanes), op.dtype)

    def eval_Broadcast(self, op):
        return _cast(np.full(op.lanes, self.eval(op.value)), op.dtype)

    def eval_Shuffle(self, op):
        lanes = np.concatenate([np.atleast_1d(self.eval(v)) for v in op.vectors])
        picked = lanes[[int(self.eval(i)) for i in op.indices]]
        return _cast(picked if len(picked) > 1 else picked[0], op.dtype)

    def eval_Call(self, op):
        name = op.op[4:] if op.op.startswith("tir.") else op.op
        if op.op == "tir.if_then_else":
            cond = self.eval(op.args[0])
            if isinstance(cond, np.ndarray):
                return _cast(np.where(cond, self.eval(op.args[1]), self.eval(op.args[2])), op.dtype)
            return self.eval(op.args[1] if cond else op.args[2])
        if op.op in _NO_VALUE_CALLS:
            return 0
        args = [self.eval(a) for a in op.args]
        if name in _UNARY:
            return _cast(_UNARY[name](args[0]), op.dtype)
        if name in _BINARY:
            return _cast(_BINARY[name](args[0], args[1]), op.dtype)
        if name == "popcount":
            return _cast(
                bin(int(args[0]) & ((1 << DataType(op.args[0].dtype).bits) - 1)).count("1"), op.dtype
            )
        if name == "reinterpret":
            value = np.asarray(args[0], dtype=np_dtype(op.args[0].dtype))
            return _cast(value.view(np_dtype(op.dtype)), op.dtype)
        if name == "infinity":
            return _cast(np.inf, op.dtype)
        raise TIRError(f"the TensorIR interpreter does not implement the call {op.op!r}")

    # -- memory ---------------------------------------------------------------------------
    def _offsets(self, buffer, indices):
        """Flat offsets of `indices` into the storage of `buffer`, bounds-checked."""
        idx = [self.eval(i) for i in indices]
        shape = [int(self.eval(d)) for d in buffer.shape]
        if len(idx) != len(shape):
            raise TIRError(
                f"buffer {buffer.name} has {len(shape)} dimensions, accessed with {len(idx)} indices"
            )
        for d, (value, extent) in enumerate(zip(idx, shape)):
            if np.any(np.asarray(value) < 0) or np.any(np.asarray(value) >= extent):
                raise TIRError(
                    f"out-of-bounds access {buffer.name}[{', '.join(map(str, idx))}]: index {value} of "
                    f"dimension {d} is outside [0, {extent})"
                )
        if buffer.strides:
            strides = [int(self.eval(s)) for s in buffer.strides]
        else:
            strides = [int(np.prod(shape[d + 1 :], dtype=np.int64)) for d in range(len(shape))]
        offset = sum((np.asarray(v, dtype=np.int64) * s for v, s in zip(idx, strides)), np.int64(0))
        if buffer.elem_offset is not None:
            offset = offset + int(self.eval(buffer.elem_offset))
        data = self._data(buffer)
        if np.any(offset < 0) or np.any(offset >= data.size):
            raise TIRError(
                f"access of {buffer.name} at flat offset {offset} is outside its {data.size} elements"
            )
        return data, offset

    def _data(self, buffer):
        try:
            return self.storage[buffer.data]
        except KeyError:
            raise TIRError(f"buffer {buffer.name} is used where its memory is not allocated") from None

    def eval_BufferLoad(self, op):
        data, offset = self._offsets(op.buffer, op.indices)
        if op.predicate is not None:
            mask = np.asarray(self.eval(op.predicate), dtype=bool)
            out = np.zeros(mask.shape, dtype=data.dtype)
            out[mask] = data[offset[mask]]
            return _cast(out, op.dtype)
        return _cast(data[offset], op.dtype)

    def exec_BufferStore(self, op):
        value = self.eval(op.value)
        data, offset = self._offsets(op.buffer, op.indices)
        if op.predicate is not None:
            mask = np.asarray(self.eval(op.predicate), dtype=bool)
            data[offset[mask]] = np.broadcast_to(value, mask.shape)[mask]
        else:
            data[offset] = value

    def allocate(self, data_var, dtype: str, size: int) -> None:
        dt = np_dtype(dtype)
        fill = np.nan if np.issubdtype(dt, np.floating) else 0
        self.storage[data_var] = np.full(max(size, 0), fill, dtype=dt)

    # -- statements -----------------------------------------------------------------------
    def exec_SeqStmt(self, op):
        for s in op.seq:
            self.exec(s)

    def exec_Evaluate(self, op):
        self.eval(op.value)

    def exec_For(self, op):
        low, extent = int(self.eval(op.min)), int(self.eval(op.extent))
        for value in range(low, low + extent):
            self.env[op.loop_var] = value
            self.exec(op.body)
        self.env.pop(op.loop_var, None)

    def exec_While(self, op):
        while self.eval(op.condition):
            self.exec(op.body)

    def exec_IfThenElse(self, op):
        if self.eval(op.condition):
            self.exec(op.then_case)
        elif op.else_case is not None:
            self.exec(op.else_case)

    def exec_LetStmt(self, op):
        self.env[op.var] = self.eval(op.value)
        self.exec(op.body)
        del self.env[op.var]

    def exec_AttrStmt(self, op):
        self.exec(op.body)

    def exec_AssertStmt(self, op):
        if not self.eval(op.condition):
            raise TIRError(f"assertion failed: {self.eval(op.message)}")
        self.exec(op.body)

    def exec_DeclBuffer(self, op):
        self.exec(op.body)

    def exec_Allocate(self, op):
        size = int(np.prod([int(self.eval(e)) for e in op.extents], dtype=np.int64))
        self.allocate(op.buffer_var, op.dtype, size)
        self.exec(op.body)
        del self.storage[op.buffer_var]

    def exec_BlockRealize(self, op):
        block = op.block
        if not self.eval(op.predicate):
            return
        values = [self.eval(v) for v in op.iter_values]
        for iv, value in zip(block.iter_vars, values):
            self.env[iv.var] = value
        for buf in block.alloc_buffers:
            self.allocate(
                buf.data, buf.dtype, int(np.prod([int(self.eval(d)) for d in buf.shape], dtype=np.int64))
            )
        for match in block.match_buffers:
            self._bind_match(match)
        if block.init is not None:
            at_min = all(
                value == (self.eval(iv.dom.min) if iv.dom is not None else 0)
                for iv, value in zip(block.iter_vars, values)
                if iv.iter_type == tir_stmt.IterType.COMM_REDUCE
            )
            if at_min:
                self.exec(block.init)
        self.exec(block.body)
        for buf in block.alloc_buffers:
            del self.storage[buf.data]
        for iv in block.iter_vars:
            self.env.pop(iv.var, None)

    def _bind_match(self, match):
        """A match_buffer views its source: same storage, offset and strides bound from the region."""
        buffer, source = match.buffer, match.source
        mins = [self.eval(r.min) for r in source.region]
        _, base = self._offsets(source.buffer, [tir_expr.const(int(m), "int64") for m in mins])
        self.storage[buffer.data] = self._data(source.buffer)
        src_shape = [int(self.eval(d)) for d in source.buffer.shape]
        if source.buffer.strides:
            src_strides = [int(self.eval(s)) for s in source.buffer.strides]
        else:
            src_strides = [int(np.prod(src_shape[d + 1 :], dtype=np.int64)) for d in range(len(src_shape))]
        extents = [self.eval(r.extent) for r in source.region][len(source.region) - buffer.ndim :]
        for dim, extent in zip(buffer.shape, extents):
            if isinstance(dim, tir_expr.Var):
                self.env[dim] = int(extent)
        for stride, value in zip(buffer.strides, src_strides[len(src_strides) - buffer.ndim :]):
            if isinstance(stride, tir_expr.Var):
                self.env[stride] = value
        if isinstance(buffer.elem_offset, tir_expr.Var):
            self.env[buffer.elem_offset] = int(base)
        elif not buffer.strides and buffer.elem_offset is None and int(base) != 0:
            raise TIRError(
                f"match_buffer {buffer.name} needs an elem_offset variable to view {source.buffer.name}"
            )


def _bind_dim(env: dict, dim, actual: int, what: str) -> None:
    if isinstance(dim, tir_expr.Var):
        if dim in env and env[dim] != actual:
            raise ValueError(f"{what}: expected {dim.name} = {env[dim]} (bound earlier), got {actual}")
        env[dim] = actual
    elif isinstance(dim, tir_expr.IntImm):
        if dim.value != actual:
            raise ValueError(f"{what}: expected {dim.value}, got {actual}")


def run_primfunc(func: PrimFunc, *args, **scalars) -> None:
    """Run `func` on numpy arrays (outputs written in place); scalar params by position or name."""
    if not isinstance(func, PrimFunc):
        raise TypeError(f"run_primfunc expects a PrimFunc, got {type(func).__name__}")
    if len(args) > len(func.params):
        raise ValueError(f"the function takes {len(func.params)} arguments, got {len(args)}")
    interp = Interpreter()
    env = interp.env
    by_name = {p.name: p for p in func.params}
    values = dict(zip(func.params, args))
    for name, value in scalars.items():
        if name not in by_name:
            raise ValueError(f"the function has no parameter named {name!r}")
        values[by_name[name]] = value
    for param in func.params:
        if param not in values:
            raise ValueError(f"missing a value for parameter {param.name!r}")
        value = values[param]
        buffer = func.buffer_map.get(param)
        if buffer is None:
            env[param] = _cast(value, param.dtype)
            continue
        if not isinstance(value, np.ndarray):
            raise ValueError(
                f"parameter {param.name!r} ({buffer.name}) expects a numpy array, got {type(value).__name__}"
            )
        if value.dtype != np_dtype(buffer.dtype):
            raise ValueError(
                f"parameter {param.name!r} ({buffer.name}) expects {buffer.dtype}, got {value.dtype}"
            )
        if value.ndim != len(buffer.shape):
            raise ValueError(
                f"parameter {param.name!r} ({buffer.name}) expects rank {len(buffer.shape)}, got {value.ndim}"
            )
        if not value.flags.c_contiguous:
            raise ValueError(f"parameter {param.name!r} ({buffer.name}) must be C-contiguous")
        for d, (dim, actual) in enumerate(zip(buffer.shape, value.shape)):
            _bind_dim(env, dim, actual, f"parameter {param.name!r} ({buffer.name}) dimension {d}")
        compact = [int(np.prod(value.shape[d + 1 :], dtype=np.int64)) for d in range(value.ndim)]
        for d, (stride, actual) in enumerate(zip(buffer.strides, compact)):
            _bind_dim(env, stride, actual, f"parameter {param.name!r} ({buffer.name}) stride {d}")
        if isinstance(buffer.elem_offset, tir_expr.Var):
            env[buffer.elem_offset] = 0
        interp.storage[buffer.data] = value.reshape(-1)
    interp.exec(func.body)


__all__ = ["Interpreter", "np_dtype", "run_primfunc"]
