"""Control flow: If, and Loop / Scan.

If becomes a Relax `If` whose branches are the converted subgraphs (a condition known at
import picks its branch right away). A branch's outputs whose shapes differ between the
branches get new symbolic sizes (a `match_cast` after the If).
"""

from __future__ import annotations

from ... import relax
from .common import Emitting, ndim_of
from .registry import converter

op = Emitting(relax.op)


@converter("If", since=1)
def if_op(node):
    importer = node.importer
    then_graph, else_graph = node.attr("then_branch"), node.attr("else_branch")
    known = node.const(0)
    if known is not None:
        graph = then_graph if bool(known.reshape(-1)[0]) else else_graph
        return tuple(importer.graph_outputs(graph))
    cond = node.input(0)
    if ndim_of(cond) != 0:
        cond = op.reshape(cond, relax.ShapeExpr([]))
    true_branch = importer.branch(then_graph)
    false_branch = importer.branch(else_graph)
    result = importer.emit(relax.If(cond, true_branch, false_branch))
    count = len(then_graph.output)
    if count == 1:
        return importer.refine(result)
    return tuple(importer.refine(importer.emit(relax.TupleGetItem(result, i))) for i in range(count))
