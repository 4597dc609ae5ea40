"""Which variables an expression or statement uses.

>>> from graphc import tir
>>> i, j = tir.Var("i"), tir.Var("j")
>>> uses_var(i * 2 + 1, i), uses_var(i * 2 + 1, j)
(True, False)
>>> uses_any_var(i + j, {j})
True
"""

from __future__ import annotations

from ..expr import PrimExpr, Var
from ..functor import StmtExprVisitor


class _Found(Exception):
    """Raised to stop the walk at the first use."""


class _FindUse(StmtExprVisitor):
    def __init__(self, wanted):
        self.wanted = wanted

    def visit_Var(self, op):
        if self.wanted(op):
            raise _Found


def _search(node, wanted) -> bool:
    finder = _FindUse(wanted)
    try:
        if isinstance(node, PrimExpr):
            finder.visit_expr(node)
        else:
            finder.visit_stmt(node)
    except _Found:
        return True
    return False


def uses_var(node, var: Var) -> bool:
    """Whether `var` occurs in the expression or statement `node`."""
    return _search(node, lambda v: v is var)


def uses_any_var(node, variables) -> bool:
    """Whether any of `variables` (a set or dict of Vars) occurs in `node`."""
    return _search(node, lambda v: v in variables)
