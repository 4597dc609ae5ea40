"""Per-target intrinsic lowering rules: a table `(target kind, intrinsic name) -> rule`.

A rule takes the `Call` and returns the expression to generate instead (usually a
`call_pure_extern` or a formula of other intrinsics), or None / the call itself when it
does not apply. Rules registered for the kind ``"default"`` apply to every target.
The highest `level` wins, as in TVM's `register_intrin_lowering`.

>>> from graphc import tir
>>> x = tir.Var("x", "float32")
>>> type(lower_intrin(tir.sigmoid(x), "llvm")).__name__   # 1 / (1 + exp(-x))
'Div'
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import TargetError

Rule = Callable[[object], object]
# (kind, name) -> list of (level, rule), highest level first
_RULES: dict[tuple[str, str], list[tuple[int, Rule]]] = {}


def register_intrin_lowering(op_name: str, target: str = "default", f: Rule | None = None,
                             level: int = 10, override: bool = False):
    """Register `f` to lower the intrinsic `op_name` on target kind `target` (a decorator too).

    >>> from graphc import tir
    >>> tir.register_intrin("tir.demo_twice", 1)
    Intrinsic(name='tir.demo_twice', num_args=1, pure=True, float_only=False)
    >>> _ = register_intrin_lowering("tir.demo_twice", "llvm", lambda op: op.args[0] * 2)
    >>> type(lower_intrin(tir.call_intrin("float32", "tir.demo_twice", 1.5), "llvm")).__name__
    'FloatImm'
    """
    if not op_name.startswith("tir."):
        op_name = "tir." + op_name
    kind = str(target).split()[0]

    def register(rule: Rule) -> Rule:
        entries = _RULES.setdefault((kind, op_name), [])
        if override:
            entries.clear()
        elif any(lvl == level for lvl, _ in entries):
            raise TargetError(
                f"a lowering rule for {op_name} on {kind!r} at level {level} exists; "
                "pass a different level or override=True"
            )
        entries.append((level, rule))
        entries.sort(key=lambda e: -e[0])
        return rule

    return register if f is None else register(f)


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

    for key in ((kind, call.op), ("default", call.op)):
        for _level, rule in _RULES.get(key, ()):
            result = rule(call)
            if result is not None and result is not call:
                return convert(result)
    return None


def has_rule(name: str, kind: str) -> bool:
    return bool(_RULES.get((kind, name)) or _RULES.get(("default", name)))


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
