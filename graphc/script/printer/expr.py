"""Printing TensorIR expressions as script text, with parentheses only where needed.

Each printer rule returns `(text, precedence)`; a parent wraps a child in parentheses
when the child binds more loosely than Python would assume at that position.

>>> from graphc import tir
>>> i, j = tir.Var("i"), tir.Var("j")
>>> expr_text((i + j) * 2 + i // 4)
'(i + j) * 2 + i // 4'
>>> expr_text(tir.const(1.0)), expr_text(tir.const(4, "int64")), expr_text(tir.Cast("float32", i))
('T.float32(1.0)', 'T.int64(4)', 'T.Cast("float32", i)')
"""

from __future__ import annotations

import json
import math

from ...errors import TIRError
from ...ir.dispatch import method_table
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ...tir.generic import BINARY_BUILDERS
from .namer import Namer, sanitize

OR, AND, NOT, CMP, ADD, MUL, UNARY, ATOM = 1, 2, 3, 4, 9, 10, 11, 13

_BINARY = {tir_expr.Add: ("+", ADD), tir_expr.Sub: ("-", ADD), tir_expr.Mul: ("*", MUL),
           tir_expr.FloorDiv: ("//", MUL),
           tir_expr.FloorMod: ("%", MUL)}
_COMPARE = {tir_expr.EQ: "==", tir_expr.NE: "!=", tir_expr.LT: "<", tir_expr.LE: "<=", tir_expr.GT: ">",
            tir_expr.GE: ">="}
_FUNCS = {tir_expr.Min: "T.min", tir_expr.Max: "T.max"}


# The folding builder that parsing each node's operator spelling (`a + b`, `T.min(a, b)`,
# `a < b`, `not a`) calls; `Div` prints as `/` on floats and `T.truncdiv` on integers.
_SUGAR_BUILDERS = {
    **BINARY_BUILDERS,
    tir_expr.And: tir_expr.logical_and, tir_expr.Or: tir_expr.logical_or, tir_expr.Not: tir_expr.logical_not,
    **{cls: (lambda a, b, cls=cls: tir_expr._compare(cls, a, b)) for cls in _COMPARE},
}


def sugar_rebuilds(op) -> bool:
    """Whether parsing `op`'s operator spelling gives back `op` itself, not a folded form.

    The builders fold constants and identities (`0 + 7` is `7`, `x * 1` is `x`, `not not c`
    is `c`), so a node that the IR holds unfolded prints as its constructor, `T.Add(0, 7)`,
    which the parser builds as written. The rule is the one calls follow (see calls.py).
    """
    operands = (op.a,) if isinstance(op, tir_expr.Not) else (op.a, op.b)
    try:
        built = _SUGAR_BUILDERS[type(op)](*operands)
    except TIRError:  # e.g. an integer division by the constant zero
        return False
    if type(built) is not type(op) or built.dtype != op.dtype:
        return False
    return built.a is op.a and (isinstance(op, tir_expr.Not) or built.b is op.b)


def pystr(text: str) -> str:
    """A double-quoted Python string literal for `text`."""
    return json.dumps(text)


class ExprPrinter:
    """Prints PrimExprs; names come from `namer` (unnamed variables print their own name)."""

    def __init__(self, namer: Namer | None = None):
        self.namer = namer if namer is not None else Namer()
        self._rules = method_table(type(self), "print_")

    def __call__(self, expr) -> str:
        return self.visit(expr)[0]

    def visit(self, expr) -> tuple[str, int]:
        if isinstance(expr, bool | int | float | str):
            return self.python_value(expr), ATOM
        rule = self._rules[type(expr)]
        if rule is None:
            return f"<unprintable {type(expr).__name__}>", ATOM
        return rule(self, expr)

    def wrap(self, expr, min_prec: int) -> str:
        """`expr`'s text, parenthesized when it binds more loosely than `min_prec`."""
        text, prec = self.visit(expr)
        return f"({text})" if prec < min_prec else text

    def python_value(self, value) -> str:
        if isinstance(value, str):
            return pystr(value)
        return repr(value)

    # -- leaves -----------------------------------------------------------------------------
    def var_name(self, var) -> str:
        name = self.namer.get(var)
        return name if name is not None else sanitize(var.name)

    def print_Var(self, op):
        return self.var_name(op), ATOM

    def print_IntImm(self, op):
        if op.dtype == "bool":
            return f"T.bool({bool(op.value)})", ATOM
        if op.dtype == "int32":
            return str(op.value), (UNARY if op.value < 0 else ATOM)
        return f"T.{op.dtype}({op.value})", ATOM

    def print_FloatImm(self, op):
        value = op.value
        text = pystr(str(value)) if not math.isfinite(value) else repr(value)
        return f"T.{op.dtype}({text})", ATOM

    def print_StringImm(self, op):
        return pystr(op.value), ATOM

    # -- arithmetic -------------------------------------------------------------------------
    def print_BinaryOp(self, op):
        if not sugar_rebuilds(op):
            return self.constructor(op, [op.a, op.b])
        symbol = _BINARY.get(type(op))
        if symbol is None:
            if type(op) in _FUNCS:
                return self.call(_FUNCS[type(op)], [op.a, op.b])
            if type(op) is tir_expr.Div and DataType(op.dtype).is_float:
                symbol = ("/", MUL)
            else:
                name = "T.truncdiv" if type(op) is tir_expr.Div else "T.truncmod"
                return self.call(name, [op.a, op.b])
        text, prec = symbol
        return f"{self.wrap(op.a, prec)} {text} {self.wrap(op.b, prec + 1)}", prec

    def print_CmpOp(self, op):
        if not sugar_rebuilds(op):
            return self.constructor(op, [op.a, op.b])
        symbol = _COMPARE[type(op)]
        return f"{self.wrap(op.a, CMP + 1)} {symbol} {self.wrap(op.b, CMP + 1)}", CMP

    def print_And(self, op):
        if not sugar_rebuilds(op):
            return self.constructor(op, [op.a, op.b])
        return f"{self.wrap(op.a, AND)} and {self.wrap(op.b, AND + 1)}", AND

    def print_Or(self, op):
        if not sugar_rebuilds(op):
            return self.constructor(op, [op.a, op.b])
        return f"{self.wrap(op.a, OR)} or {self.wrap(op.b, OR + 1)}", OR

    def print_Not(self, op):
        if not sugar_rebuilds(op):
            return self.constructor(op, [op.a])
        return f"not {self.wrap(op.a, NOT)}", NOT

    def print_Cast(self, op):
        return f"T.Cast({pystr(op.dtype)}, {self(op.value)})", ATOM

    def print_Select(self, op):
        return self.call("T.Select", [op.condition, op.true_value, op.false_value])

    def print_Let(self, op):
        return self.call("T.Let", [op.var, op.value, op.body])

    def print_Ramp(self, op):
        return f"T.Ramp({self(op.base)}, {self(op.stride)}, {op.lanes})", ATOM

    def print_Broadcast(self, op):
        return f"T.Broadcast({self(op.value)}, {op.lanes})", ATOM

    def print_Shuffle(self, op):
        vectors = ", ".join(self(v) for v in op.vectors)
        indices = ", ".join(self(i) for i in op.indices)
        return f"T.Shuffle([{vectors}], [{indices}])", ATOM

    def print_BufferLoad(self, op):
        return f"{self.buffer_name(op.buffer)}[{self.indices(op.indices)}]", ATOM

    def buffer_name(self, buffer) -> str:
        name = self.namer.get(buffer)
        return name if name is not None else sanitize(buffer.name)

    def indices(self, indices) -> str:
        return ", ".join(self(i) for i in indices) if indices else "()"

    def print_Call(self, op):
        from .calls import call_text

        return call_text(self, op), ATOM

    def constructor(self, op, operands) -> tuple[str, int]:
        """`T.Add(a, b)`: the node as written, for a node its operator spelling would fold."""
        return self.call(f"T.{type(op).__name__}", operands)

    def call(self, name: str, args) -> tuple[str, int]:
        return f"{name}({', '.join(self(a) for a in args)})", ATOM


def expr_text(expr) -> str:
    """The script text of one expression (what `repr(expr)` shows)."""
    return ExprPrinter()(expr)
