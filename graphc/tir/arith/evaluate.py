"""Evaluate a scalar expression on concrete values (a reference for tests and constant folding).

Integers are exact Python ints (wrapped to the dtype only by Cast), floats are Python
floats, bools are Python bools. `env` maps Vars to values and Buffers to numpy arrays.

>>> from graphc.tir import Var, truncdiv
>>> i, j = Var("i"), Var("j")
>>> evaluate((i * 4 + j) // 3, {i: 2, j: -1}), evaluate(truncdiv(i - 9, 2), {i: 2})
(2, -3)
"""

from __future__ import annotations

import math

from ...errors import TIRError
from ...ir.dtype import DataType
from .. import expr as tir_expr


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _trunc_mod(a: int, b: int) -> int:
    return a - b * _trunc_div(a, b)


def _check_div(b, expr):
    if b == 0 and not isinstance(b, float):
        raise ZeroDivisionError(f"integer division by zero evaluating {type(expr).__name__}")
    return b


_BINARY = {
    tir_expr.Add: lambda a, b: a + b,
    tir_expr.Sub: lambda a, b: a - b,
    tir_expr.Mul: lambda a, b: a * b,
    tir_expr.Min: min,
    tir_expr.Max: max,
    tir_expr.EQ: lambda a, b: a == b,
    tir_expr.NE: lambda a, b: a != b,
    tir_expr.LT: lambda a, b: a < b,
    tir_expr.LE: lambda a, b: a <= b,
    tir_expr.GT: lambda a, b: a > b,
    tir_expr.GE: lambda a, b: a >= b,
}

_CALLS = {
    "tir.exp": math.exp, "tir.log": math.log, "tir.sqrt": math.sqrt, "tir.tanh": math.tanh,
    "tir.sin": math.sin, "tir.cos": math.cos, "tir.floor": math.floor, "tir.ceil": math.ceil,
    "tir.fabs": abs, "tir.abs": abs, "tir.erf": math.erf, "tir.pow": math.pow,
    "tir.sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)), "tir.likely": lambda x: x,
}  # fmt: skip


def evaluate(expr: tir_expr.PrimExpr, env: dict):
    """The value of `expr` with the variables (and buffers) given by `env`."""
    return _Evaluator(env).eval(expr)


class _Evaluator:
    def __init__(self, env: dict):
        self.env = dict(env)

    def eval(self, e):
        if isinstance(e, tir_expr.IntImm):
            return bool(e.value) if e.dtype == "bool" else e.value
        if isinstance(e, tir_expr.FloatImm):
            return e.value
        if isinstance(e, tir_expr.Var):
            if e not in self.env:
                raise TIRError(f"evaluate: variable {e.name!r} has no value in the environment")
            return self.env[e]
        fn = _BINARY.get(type(e))
        if fn is not None:
            return fn(self.eval(e.a), self.eval(e.b))
        if isinstance(e, tir_expr.FloorDiv | tir_expr.FloorMod | tir_expr.Div | tir_expr.Mod):
            return self._division(e)
        if isinstance(e, tir_expr.And):
            return bool(self.eval(e.a)) and bool(self.eval(e.b))
        if isinstance(e, tir_expr.Or):
            return bool(self.eval(e.a)) or bool(self.eval(e.b))
        if isinstance(e, tir_expr.Not):
            return not self.eval(e.a)
        if isinstance(e, tir_expr.Select):
            cond = self.eval(e.condition)
            t, f = self.eval(e.true_value), self.eval(e.false_value)
            return t if cond else f
        if isinstance(e, tir_expr.Cast):
            return _cast(self.eval(e.value), e.dtype)
        if isinstance(e, tir_expr.Let):
            self.env[e.var] = self.eval(e.value)
            return self.eval(e.body)
        if isinstance(e, tir_expr.Call):
            return self._call(e)
        if isinstance(e, tir_expr.BufferLoad):
            array = self.env.get(e.buffer)
            if array is None:
                raise TIRError(f"evaluate: buffer {e.buffer.name!r} has no array in the environment")
            return array[tuple(self.eval(i) for i in e.indices)].item()
        raise TIRError(f"evaluate: cannot evaluate a {type(e).__name__} expression")

    def _division(self, e):
        a, b = self.eval(e.a), _check_div(self.eval(e.b), e)
        if DataType(e.dtype).is_float:
            if isinstance(e, tir_expr.Div):
                return a / b
            raise TIRError(f"evaluate: {type(e).__name__} on floats")
        if isinstance(e, tir_expr.FloorDiv):
            return a // b
        if isinstance(e, tir_expr.FloorMod):
            return a % b
        if isinstance(e, tir_expr.Div):
            return _trunc_div(a, b)
        return _trunc_mod(a, b)

    def _call(self, e: tir_expr.Call):
        if e.op == "tir.if_then_else":
            return self.eval(e.args[1]) if self.eval(e.args[0]) else self.eval(e.args[2])
        fn = _CALLS.get(e.op)
        if fn is None:
            raise TIRError(f"evaluate: no reference implementation for the call {e.op}")
        return fn(*(self.eval(a) for a in e.args))


def _cast(value, dtype: str):
    dt = DataType(dtype)
    if dt.is_bool:
        return bool(value)
    if dt.is_float:
        return float(value)
    value = int(value)
    bits = dt.bits
    value &= (1 << bits) - 1
    if dt.is_int and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value
