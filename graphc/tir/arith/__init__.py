"""Integer arithmetic analysis: the simplifier, bounds, modular sets and interval sets.

>>> from graphc.tir import Var
>>> from graphc.tir.arith import simplify
>>> i, j = Var("i"), Var("j")
>>> simplify(i * 4 + j - i * 4) is j
True
"""

from .analyzer import Analyzer
from .bound import NEG_INF, POS_INF, ConstIntBound
from .evaluate import evaluate
from .int_set import IntervalSet
from .modular import ModularSet
from .simplify_stmt import simplify_stmt


def simplify(expr, analyzer: Analyzer | None = None):
    """Simplify one expression with a fresh (or the given) Analyzer."""
    return (analyzer or Analyzer()).simplify(expr)


__all__ = [
    "Analyzer", "ConstIntBound", "IntervalSet", "ModularSet", "NEG_INF", "POS_INF", "evaluate",
    "simplify", "simplify_stmt",
]  # fmt: skip
