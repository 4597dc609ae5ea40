"""How a `Call` prints: the friendly `T.exp(x)` when that rebuilds the same node, else exact.

The friendly spelling is checked by calling the `T.` builder on the printed arguments and
comparing structurally; when the builder would produce something else (a different result
dtype, say) the call prints as `T.call_intrin(...)` or `T.call_node(...)`, which rebuild the
node exactly, so printing then parsing always gives back the same IR.

>>> from graphc import tir
>>> x = tir.Var("x", "float32")
>>> from graphc.script.printer.expr import expr_text
>>> expr_text(tir.exp(x)), expr_text(tir.Call("float16", "tir.exp", (x,)))
('T.exp(x)', 'T.call_intrin("float16", "tir.exp", x)')
"""

from __future__ import annotations

from ...ir.structural import structural_equal
from ...tir import expr as tir_expr
from ...tir.op import INTRINSICS
from .expr import pystr

_EXTERN = ("tir.call_extern", "tir.call_pure_extern")


def _rebuilds(builder, args, op) -> bool:
    try:
        return structural_equal(builder(*args), op)
    except (TypeError, ValueError):  # the builder rejects these arguments (graphc's errors subclass these)
        return False


def call_text(printer, op: tir_expr.Call) -> str:
    from .. import tir as T

    args = list(op.args)
    if op.op in _EXTERN and args and isinstance(args[0], tir_expr.StringImm):
        name = op.op[len("tir."):]
        rest = ", ".join(printer(a) for a in args[1:])
        sep = ", " if rest else ""
        return f"T.{name}({pystr(op.dtype)}, {pystr(args[0].value)}{sep}{rest})"
    if op.op.startswith("tir."):
        name = op.op[len("tir."):]
        builder = getattr(T, name, None)
        if callable(builder) and not isinstance(builder, T.ScriptOnly) and _rebuilds(builder, args, op):
            return f"T.{name}({', '.join(printer(a) for a in args)})"
    rest = "".join(", " + printer(a) for a in args)
    intrin = INTRINSICS.get(op.op)
    has_str = any(isinstance(a, tir_expr.StringImm) for a in args)
    if intrin is not None and not has_str and (intrin.num_args is None or intrin.num_args == len(args)):
        return f"T.call_intrin({pystr(op.dtype)}, {pystr(op.op)}{rest})"
    return f"T.call_node({pystr(op.dtype)}, {pystr(op.op)}{rest})"
