"""Text of Relax nodes for `repr`/`str`: a thin bridge to the script printer in graphc.script.

The printer itself (`graphc.script.printer.relax`) registers with `graphc.script` when this
module is imported, so `str(func)`, `mod.script()` and `mod.show()` print Relax.
`repr` of a single node uses the nodes' own names (no renaming, tensors summarized).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> relax.op.add(x, x)
R.add(x, x)
"""

from __future__ import annotations


def expr_text(e) -> str:
    """One-line text of an expression (functions print in full)."""
    from ..script.printer.relax import expr_text as _text

    return _text(e)


def binding_text(b) -> str:
    from ..script.printer.relax import binding_text as _text

    return _text(b)


def block_lines(block, indent: str = "") -> list[str]:
    from ..script.printer.relax import block_text

    return [indent + line for line in block_text(block).split("\n")]


def _register() -> None:
    """Hook the Relax printer into graphc.script (imported lazily: script sits above relax)."""
    from ..script.printer import relax as _printer  # noqa: F401  (registers on import)


_register()
