"""Which variables an expression or statement uses.

A Var is used where an expression reads it: an index, a value, a loop's bounds, a
condition. The places that define a variable (a loop's `loop_var`, a `Let`'s var, a
block's iter vars) and the buffers an access names are not uses of their own.

>>> from graphc import tir
>>> i, j = tir.Var("i"), tir.Var("j")
>>> uses_var(i * 2 + 1, i), uses_var(i * 2 + 1, j)
(True, False)
>>> uses_any_var(i + j, {j})
True
>>> [v.name for v in used_vars(j * i + j, i - 1)]
['j', 'i']
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


def _visit(visitor, node) -> None:
    if isinstance(node, PrimExpr):
        visitor.visit_expr(node)
    else:
        visitor.visit_stmt(node)


def _search(node, wanted) -> bool:
    try:
        _visit(_FindUse(wanted), node)
    except _Found:
        return True
    return False


def uses_var(node, var: Var) -> bool:
    """Whether `var` occurs in the expression or statement `node`."""
    return _search(node, lambda v: v is var)


def uses_any_var(node, variables) -> bool:
    """Whether any of `variables` (a set or dict of Vars) occurs in `node`."""
    return _search(node, lambda v: v in variables)


class VarCollector(StmtExprVisitor):
    """Collects the Vars the nodes it visits use, in order of first use (see `used_vars`).

    Subclass it to also walk nodes that the TensorIR visitors take for leaves (`te`'s
    `ProducerLoad` and `Reduce`); `collect` visits the nodes and returns the list.
    """

    def __init__(self):
        self.found: dict = {}  # Var -> None: a set that keeps the order of first use

    def visit_Var(self, op):
        self.found[op] = None

    def collect(self, nodes) -> list:
        for node in nodes:
            _visit(self, node)
        return list(self.found)


def used_vars(*nodes) -> list:
    """Every Var the expressions or statements `nodes` use, once each, in order of first use."""
    return VarCollector().collect(nodes)
