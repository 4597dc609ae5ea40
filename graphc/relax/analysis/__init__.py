"""Analyses of Relax IR: variable collections and the well-formedness check.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> y = relax.Var("y", relax.TensorStructInfo((2,), "float32"))
>>> [v.name_hint for v in relax.analysis.free_vars(relax.op.add(x, y))]
['x', 'y']
"""

from .graph_partitioner import GraphPartitioner, post_dominator_tree
from .tir_op_pattern import analyze_op_pattern_kind
from .vars import all_global_vars, all_vars, bound_vars, free_symbolic_vars, free_vars, used_vars
from .well_formed import WellFormedChecker, verify_well_formed, well_formed

__all__ = [
    "GraphPartitioner", "WellFormedChecker", "all_global_vars", "all_vars", "analyze_op_pattern_kind",
    "bound_vars", "free_symbolic_vars", "free_vars", "post_dominator_tree", "verify_well_formed",
    "used_vars", "well_formed",
]
