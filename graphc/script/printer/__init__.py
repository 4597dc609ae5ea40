"""The script printer: IR as re-parseable Python text (`script`, `show`, `expr_text`).

Other IRs (Relax) plug in with `register_function_printer(cls, fn)` for functions inside
an IRModule, `register_printer(cls, fn)` for standalone nodes and `register_repr_printer(cls,
fn)` for the one-line `repr` of a node. IR nodes reach these printers only at call time,
through `graphc.ir.node.repr_text` and `Node.script`, so the IR layers never import the
printer. The Relax printers register themselves the first time something is printed in a
process that has imported the Relax IR.

>>> from graphc import tir
>>> i = tir.Var("i")
>>> script(i * 2 + 1)
'i * 2 + 1'
"""

from __future__ import annotations

import sys

from ...ir.dispatch import rule_table
from ...ir.module import IRModule
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.buffer import Buffer
from ...tir.function import PrimFunc
from .expr import ExprPrinter, expr_text, pystr
from .function import func_name, prim_func_lines
from .highlight import highlight
from .tir import StmtPrinter

# type -> fn(func, name) -> (lines, namespaces used such as {"T"})
_FUNCTION_PRINTERS: dict[type, object] = {
    PrimFunc: lambda func, name: (prim_func_lines(func, name), {"T"}),
}
# type -> fn(node, **kwargs) -> str
_PRINTERS: dict[type, object] = {}
# type -> fn(node) -> str, the text of repr(node)
_REPR_PRINTERS: dict[type, object] = {}
# the same, for subclasses too (cleared when a printer is registered)
_function_printer, _printer = rule_table(_FUNCTION_PRINTERS), rule_table(_PRINTERS)
_repr_printer = rule_table(_REPR_PRINTERS)
_RELAX_PRINTERS_LOADED = False

_IMPORTS = {"I": "ir", "T": "tir", "R": "relax"}  # in this order (TVM's)


def register_function_printer(cls: type, fn) -> None:
    """Print functions of type `cls` inside modules with `fn(func, name) -> (lines, {"R", ...})`."""
    _FUNCTION_PRINTERS[cls] = fn
    _function_printer.clear()


def register_printer(cls: type, fn) -> None:
    """Print standalone nodes of type `cls` with `fn(node, **kwargs) -> str`."""
    _PRINTERS[cls] = fn
    _printer.clear()


def register_repr_printer(cls: type, fn) -> None:
    """Give nodes of type `cls` the `repr` text `fn(node) -> str` (names as they are, one line)."""
    _REPR_PRINTERS[cls] = fn
    _repr_printer.clear()


def _load_relax_printers() -> None:
    """Register the Relax printers once the Relax IR is in use (only then can Relax nodes exist)."""
    global _RELAX_PRINTERS_LOADED
    if not _RELAX_PRINTERS_LOADED and "graphc.relax" in sys.modules:
        _RELAX_PRINTERS_LOADED = True
        from . import relax  # noqa: F401  (registers on import)


def _header(namespaces) -> list[str]:
    return [f"# from graphc.script import {module} as {ns}" for ns, module in _IMPORTS.items()
            if ns in namespaces]


def _function(func, name: str) -> tuple[list[str], set]:
    _load_relax_printers()
    fn = _function_printer[type(func)]
    if fn is None:
        return [f"# <unprintable function {name}: {type(func).__name__}>"], set()
    return fn(func, name)


def module_text(mod: IRModule) -> str:
    namespaces, body = {"I"}, []
    if mod.attrs:
        body.append(f"    I.module_attrs({StmtPrinter().value(dict(mod.attrs))})")
    # TensorIR functions first, then the others (Relax), each group by name: TVM's order.
    for gv in sorted(mod.get_global_vars(), key=lambda g: not isinstance(mod[g], PrimFunc)):
        lines, used = _function(mod[gv], gv.name_hint)
        namespaces |= used
        if body:
            body.append("")
        body.extend("    " + line if line else "" for line in lines)
    if not body:
        body.append("    pass")
    return "\n".join(_header(namespaces) + ["", "@I.ir_module", "class Module:"] + body)


def _script(node, **kwargs) -> str:
    _load_relax_printers()
    custom = _printer[type(node)]
    if custom is not None:
        return custom(node, **kwargs)
    if isinstance(node, IRModule):
        return module_text(node)
    if isinstance(node, PrimFunc):
        lines, used = _function(node, kwargs.get("name") or func_name(node))
        return "\n".join(_header(used) + [""] + lines)
    if type(node) in _FUNCTION_PRINTERS:
        lines, used = _function(node, kwargs.get("name") or "main")
        return "\n".join(_header(used) + [""] + lines)
    if isinstance(node, tir_stmt.Stmt):
        return StmtPrinter().stmt_text(node)
    if isinstance(node, tir_expr.PrimExpr):
        return expr_text(node)
    if isinstance(node, Buffer):
        return StmtPrinter().buffer_call("T.Buffer", node)
    if isinstance(node, tir_stmt.BufferRegion):
        return StmtPrinter().region(node)
    if isinstance(node, tir_expr.Range):
        return f"T.Range({expr_text(node.min)}, {expr_text(node.extent)})"
    return repr(node)


def script(node, **kwargs) -> str:
    """`node` (IRModule, PrimFunc, Stmt, PrimExpr, Buffer) printed in the script syntax.

    >>> from graphc import tir
    >>> print(script(tir.decl_buffer((2, 3), "int8", "A")))
    T.Buffer((2, 3), "int8")
    """
    return _script(node, **kwargs)


def repr_text(node) -> str:
    """The text of `repr(node)`: its registered repr printer, else `script(node)`.

    >>> from graphc import tir
    >>> repr_text(tir.Var("n") + 1)
    'n + 1'
    """
    _load_relax_printers()
    custom = _repr_printer[type(node)]
    return custom(node) if custom is not None else _script(node)


def show(node, **kwargs) -> None:
    """Print `script(node)`, with ANSI colours only when stdout is a terminal."""
    text = script(node, **kwargs)
    if sys.stdout.isatty():
        text = highlight(text)
    print(text)


__all__ = ["ExprPrinter", "StmtPrinter", "expr_text", "module_text", "pystr", "register_function_printer",
           "register_printer", "register_repr_printer", "repr_text", "script", "show"]
