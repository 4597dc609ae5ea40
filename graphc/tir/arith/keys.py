"""Hashable structural keys and readable sort texts for expressions, used by the simplifier.

Two expressions get the same key when they have the same structure over the same variable
(and buffer) objects, so the canonical form can collect `i * 4` and `4 * i` into one term.

>>> from graphc.tir import Var
>>> i = Var("i")
>>> expr_key(i * 4 + 1) == expr_key(i * 4 + 1), expr_key(i) == expr_key(Var("i"))
(True, False)
>>> expr_text(i * 4 + 1)
'i * 4 + 1'
"""

from __future__ import annotations

from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Sub,
    Var,
)  # fmt: skip

_KEYS: dict[int, tuple] = {}
_MAX_CACHE = 200_000


def expr_key(expr) -> tuple:
    """A hashable key equal for structurally identical expressions over the same Vars."""
    hit = _KEYS.get(id(expr))
    if hit is not None and hit[0] is expr:
        return hit[1]
    key = _make_key(expr)
    if len(_KEYS) > _MAX_CACHE:
        _KEYS.clear()
    _KEYS[id(expr)] = (expr, key)
    return key


def _make_key(expr) -> tuple:
    if isinstance(expr, Var):
        return ("var", id(expr))
    if isinstance(expr, IntImm | FloatImm):
        return ("const", expr.dtype, expr.value)
    if isinstance(expr, StringImm):
        return ("str", expr.value)
    if isinstance(expr, PrimExpr):
        parts: list = [type(expr).__name__, expr.dtype]
        for name in expr.__dataclass_fields__:
            if name == "dtype":
                continue
            parts.append(_field_key(getattr(expr, name)))
        return tuple(parts)
    return _field_key(expr)


def _field_key(value):
    if isinstance(value, PrimExpr):
        return expr_key(value)
    if isinstance(value, tuple | list):
        return tuple(_field_key(v) for v in value)
    if value is None or isinstance(value, int | float | str | bool):
        return value
    return ("obj", id(value))


_INFIX = {
    Add: ("+", 4), Sub: ("-", 4), Mul: ("*", 5), FloorDiv: ("//", 5), FloorMod: ("%", 5),
    EQ: ("==", 2), NE: ("!=", 2), LT: ("<", 2), LE: ("<=", 2), GT: (">", 2), GE: (">=", 2),
    And: ("and", 1), Or: ("or", 0),
}  # fmt: skip


def expr_text(expr, _parent_prec: int = -1) -> str:
    """A short readable text of an expression, independent of the script printer."""
    op = _INFIX.get(type(expr))
    if op is not None:
        sym, prec = op
        rhs_prec = prec + 1 if isinstance(expr, Sub | FloorDiv | FloorMod | Mul) else prec
        text = f"{expr_text(expr.a, prec)} {sym} {expr_text(expr.b, rhs_prec)}"
        return f"({text})" if prec < _parent_prec else text
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, IntImm):
        if expr.dtype == "bool":
            return "True" if expr.value else "False"
        return str(expr.value) if expr.dtype == "int32" else f"{expr.dtype}({expr.value})"
    if isinstance(expr, FloatImm):
        return repr(expr.value)
    if isinstance(expr, StringImm):
        return repr(expr.value)
    if isinstance(expr, Min | Max | Div | Mod):
        name = {Min: "min", Max: "max", Div: "truncdiv", Mod: "truncmod"}[type(expr)]
        return f"{name}({expr_text(expr.a)}, {expr_text(expr.b)})"
    if isinstance(expr, Not):
        return f"not {expr_text(expr.a, 3)}"
    if isinstance(expr, Select):
        parts = (expr.condition, expr.true_value, expr.false_value)
        return "select(" + ", ".join(expr_text(p) for p in parts) + ")"
    if isinstance(expr, Cast):
        return f"{expr.dtype}({expr_text(expr.value)})"
    if isinstance(expr, BufferLoad):
        return f"{expr.buffer.name}[" + ", ".join(expr_text(i) for i in expr.indices) + "]"
    if isinstance(expr, Call):
        return f"{expr.op}(" + ", ".join(expr_text(a) for a in expr.args) + ")"
    if isinstance(expr, Let):
        return f"let({expr.var.name} = {expr_text(expr.value)}, {expr_text(expr.body)})"
    return type(expr).__name__


def sort_key(expr) -> tuple:
    """A deterministic ordering key: variables by name, then by structure text."""
    return (0 if isinstance(expr, Var) else 1, expr_text(expr), str(expr_key(expr)))
