"""Per-target intrinsic lowering rules: a table `(target kind, intrinsic name) -> rule`.

A rule takes the `Call` and returns the expression to generate instead (usually a
`call_pure_extern` or a formula of other intrinsics), or None / the call itself when it
does not apply. Rules registered for the kind ``"default"`` apply to every target.
The highest `level` wins, as in TVM's `register_intrin_lowering`. The table itself lives in
`graphc.ir.op_attr` (so `graphc.ir.register_intrin_lowering` is the same function); the
rules graphc ships are registered here, at level 1: libm for "llvm" and "c", each dialect's
math functions for "cuda" and "opencl" (see `MATH_FUNCTIONS`).

>>> from graphc import tir
>>> x = tir.Var("x", "float32")
>>> type(lower_intrin(tir.sigmoid(x), "llvm")).__name__   # 1 / (1 + exp(-x))
'Div'
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir.op_attr import _RULES, lowering_rules, register_intrin_lowering

Rule = Callable[[object], object]


def lower_intrin(call, kind: str):
    """Apply the best rule for `call` on `kind` (then the defaults) until none applies.

    Returns the rewritten expression, or `call` itself when no rule applies.
    """
    for _ in range(16):  # rules may chain (sigmoid -> exp); bound the chain
        rewritten = _apply_once(call, kind)
        if rewritten is None or rewritten is call:
            return call
        from ..tir.expr import Call

        if not isinstance(rewritten, Call):
            return rewritten
        call = rewritten
    return call


def _apply_once(call, kind: str):
    from ..tir.expr import convert

    for key_kind in (kind, "default"):
        for _level, rule in lowering_rules(key_kind, call.op):
            result = rule(call)
            if result is not None and result is not call:
                return convert(result)
    return None


__all__ = ["EXTRA_MATH", "MATH_FUNCTIONS", "has_rule", "lower_intrin", "math_function",
           "register_intrin_lowering", "_RULES"]


def has_rule(name: str, kind: str) -> bool:
    return bool(lowering_rules(kind, name) or lowering_rules("default", name))


# --- default formulas, valid on every target ---------------------------------------------


def _sigmoid(op):
    from ..tir import op as tir_op

    x = op.args[0]
    one = _one(x)
    return one / (one + tir_op.exp(-x))


def _rsqrt(op):
    from ..tir import op as tir_op

    x = op.args[0]
    return _one(x) / tir_op.sqrt(x)


def _exp10(op):
    from ..tir import op as tir_op

    x = op.args[0]
    return tir_op.pow(_const(10.0, x), x)


def _one(x):
    return _const(1.0, x)


def _const(value: float, like):
    from ..tir.expr import const

    return const(value, like.dtype)


def _libm(name: str, arity: int = 1):
    """A rule calling the C math library: `name` + 'f' for float32, `name` for float64."""

    def rule(op):
        from ..ir.dtype import DataType
        from ..tir.op import call_pure_extern

        dt = DataType(op.dtype)
        if dt.bits not in (32, 64) or dt.code != "float":
            return None  # the code generator widens float16/bfloat16 to float32 first
        return call_pure_extern(op.dtype, name + ("f" if dt.bits == 32 else ""), *op.args[:arity])

    return rule


register_intrin_lowering("tir.sigmoid", "default", _sigmoid, level=1)
register_intrin_lowering("tir.rsqrt", "default", _rsqrt, level=1)
register_intrin_lowering("tir.exp10", "default", _exp10, level=1)
_LIBM_UNARY = ["erf", "tanh", "log1p", "expm1", "tan", "asin", "acos", "atan", "sinh", "cosh",
               "asinh", "acosh", "atanh"]
for _name in _LIBM_UNARY:
    register_intrin_lowering(f"tir.{_name}", "llvm", _libm(_name), level=1)
for _name in ["atan2", "fmod", "hypot", "nextafter"]:
    register_intrin_lowering(f"tir.{_name}", "llvm", _libm(_name, 2), level=1)


# --- the math functions of the C-family targets ------------------------------------------
# tir name -> C99 name of the float64 function. CUDA and C add "f" for float32 (expf);
# OpenCL's builtins are overloaded on the argument type and keep the plain name. Rounding
# (`tir.round`) is to nearest even, as on the CPU (rint; nearbyint in C).
MATH_FUNCTIONS = {
    "tir.exp": "exp", "tir.exp2": "exp2", "tir.log": "log", "tir.log2": "log2", "tir.log10": "log10",
    "tir.log1p": "log1p", "tir.expm1": "expm1", "tir.sqrt": "sqrt", "tir.sin": "sin", "tir.cos": "cos",
    "tir.tan": "tan", "tir.asin": "asin", "tir.acos": "acos", "tir.atan": "atan", "tir.sinh": "sinh",
    "tir.cosh": "cosh", "tir.tanh": "tanh", "tir.asinh": "asinh", "tir.acosh": "acosh",
    "tir.atanh": "atanh", "tir.erf": "erf", "tir.floor": "floor", "tir.ceil": "ceil",
    "tir.round": "rint", "tir.nearbyint": "rint", "tir.trunc": "trunc", "tir.fabs": "fabs",
    "tir.pow": "pow", "tir.atan2": "atan2", "tir.fmod": "fmod", "tir.hypot": "hypot",
    "tir.copysign": "copysign", "tir.nextafter": "nextafter",
}  # fmt: skip
# functions a dialect has beyond C99, used instead of the default formulas
EXTRA_MATH = {
    "cuda": {"tir.rsqrt": "rsqrt", "tir.exp10": "exp10"},
    "opencl": {"tir.rsqrt": "rsqrt", "tir.exp10": "exp10"},
    "c": {"tir.round": "nearbyint", "tir.nearbyint": "nearbyint"},
}
F32_SUFFIX = {"cuda": "f", "opencl": "", "c": "f"}


def math_function(kind: str, op: str, dtype: str) -> str | None:
    """The name of `op` for a `dtype` (float32/float64) argument in target `kind`'s language."""
    from ..ir.dtype import DataType

    base = EXTRA_MATH.get(kind, {}).get(op) or MATH_FUNCTIONS.get(op)
    if base is None:
        return None
    return base + F32_SUFFIX.get(kind, "") if DataType(dtype).bits == 32 else base


def _dialect_math(kind: str, op_name: str):
    def rule(op):
        from ..ir.dtype import DataType
        from ..tir.op import call_pure_extern

        dt = DataType(op.dtype)
        if dt.code != "float" or dt.bits not in (32, 64):
            return None  # the code generator widens float16/bfloat16 to float32 first
        return call_pure_extern(op.dtype, math_function(kind, op_name, op.dtype), *op.args)

    return rule


for _kind in ("cuda", "opencl", "c"):
    for _op in {**MATH_FUNCTIONS, **EXTRA_MATH[_kind]}:
        register_intrin_lowering(_op, _kind, _dialect_math(_kind, _op), level=1)


# --- run-time checks in device code -------------------------------------------------------
# A GPU kernel has no way yet to stop and report an error (the LLVM back end returns an error
# record; the C-family launch path has none), so on "cuda", "opencl" and "c" the checks keep
# memory safe without reporting: an index outside its range is clamped into it, a bad size
# becomes 0. The CPU back end raises IndexError/ValueError as docs/codegen.md describes.


def _clamped_index(op):
    from ..tir.expr import IntImm, const
    from ..tir.generic import select
    from ..tir.op import max as max_of
    from ..tir.op import min as min_of

    index, extent, wrap = op.args[0], op.args[1], op.args[2]
    zero = const(0, index.dtype)
    if isinstance(wrap, IntImm) and wrap.value:
        index = select(index < zero, index + extent, index)
    return max_of(min_of(index, extent - const(1, index.dtype)), zero)


def _zero_if_bad(op):
    from ..tir.expr import const
    from ..tir.generic import select

    value, ok = op.args[0], op.args[1]
    return select(ok, value, const(0, value.dtype))


for _kind in ("cuda", "opencl", "c"):
    register_intrin_lowering("tir.check_index", _kind, _clamped_index, level=1)
    register_intrin_lowering("tir.check_size", _kind, _zero_if_bad, level=1)
