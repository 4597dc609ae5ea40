"""Control flow: If, and Loop / Scan.

If becomes a Relax `If` whose branches are the converted subgraphs (a condition known at
import picks its branch right away). A branch's outputs whose shapes differ between the
branches get new symbolic sizes (a `match_cast` after the If).

Loop and Scan are unrolled at import: their trip counts (Loop's M, the scanned axis' length)
and Loop's conditions must be known when the model is imported; each iteration's body is
converted anew in a scope of its own, and scan outputs are stacked.
"""

from __future__ import annotations

import numpy as np

from ... import relax
from .common import Emitting, ndim_of, shape_of
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


UNROLL_LIMIT = 1024  # iterations: a Loop or Scan with more is refused


def _scalar(node, value, dtype: str):
    """A 0-d tensor of `dtype` holding a Python number or a 0-d/1-element tensor."""
    if isinstance(value, int | float | bool):
        return relax.const(value, dtype)
    return value


def _unrolled_body(node, graph, bindings: dict):
    """One iteration of a loop body converted in a scope of its own; its output values."""
    importer = node.importer
    importer.branch_depth += 1  # nothing the body binds may be cached for the next iteration
    try:
        return importer.graph_outputs(graph, bindings)
    finally:
        importer.branch_depth -= 1


def _truth(importer, value):
    """True / False when a loop condition is known at import, else None."""
    from .importer import Known

    if isinstance(value, Known) and value.is_numeric:
        return bool(value.array.reshape(-1)[0])
    if isinstance(value, relax.Constant):
        return bool(value.data.numpy().reshape(-1)[0])
    return None


@converter("Loop", since=1)
def loop(node):
    """A Loop whose trip count is known at import and whose condition stays true (or is known
    at each iteration) is unrolled; each iteration's scan outputs are stacked."""
    importer = node.importer
    body = node.attr("body")
    trip = node.const(0) if node.has_input(0) else None
    if node.has_input(0) and trip is None:
        raise node.error("a trip count computed at run time is not supported (graphc unrolls loops)")
    count = int(trip.reshape(-1)[0]) if trip is not None else None
    cond_value = importer.lookup_value(node.inputs[1]) if node.has_input(1) else None
    node.mark_read(1)
    running = True if cond_value is None else _truth(importer, cond_value)
    if running is None:
        raise node.error("a loop condition computed at run time is not supported (graphc unrolls loops)")
    if count is None:
        count = UNROLL_LIMIT + 1
    carried = [importer.lookup_value(name) if name else None for name in node.inputs[2:]]
    node.mark_read(*range(2, len(node.inputs)))
    n_carried = len(carried)
    n_scan = len(body.output) - 1 - n_carried
    scans: list[list] = [[] for _ in range(n_scan)]
    names = [i.name for i in body.input]
    iteration = 0
    while running and iteration < count:
        if iteration >= UNROLL_LIMIT:
            raise node.error(f"more than {UNROLL_LIMIT} iterations: not unrolled")
        bindings = {names[0]: np.asarray(iteration, dtype="int64")}
        if len(names) > 1:
            bindings[names[1]] = np.asarray(True)
        for name, value in zip(names[2:], carried):
            bindings[name] = value
        bindings = {k: importer.bind(v) for k, v in bindings.items()}
        outs = _unrolled_body(node, body, bindings)
        cond_out, carried, scan_values = outs[0], list(outs[1 : 1 + n_carried]), outs[1 + n_carried :]
        for k, value in enumerate(scan_values):
            scans[k].append(value)
        truth = _truth(importer, cond_out)
        if truth is None:
            raise node.error("a loop condition computed at run time is not supported (graphc unrolls loops)")
        running = truth
        iteration += 1
    stacked = []
    for k, pieces in enumerate(scans):
        if not pieces:
            raise node.error(f"scan output {k} of a loop that runs no iteration has no shape graphc knows")
        exprs = [importer.output_value_of(p, "scan") for p in pieces]
        stacked.append(op.stack(exprs, axis=0) if len(exprs) > 1 else op.expand_dims(exprs[0], [0]))
    return tuple(carried) + tuple(stacked)


@converter("Scan", since=9)
def scan(node):
    """Scan over a sequence length known at import, unrolled."""
    importer = node.importer
    body = node.attr("body")
    n_scan_in = node.attr("num_scan_inputs")
    n_state = len(node.inputs) - n_scan_in
    states = [importer.lookup_value(n) for n in node.inputs[:n_state]]
    xs = [node.input(i) for i in range(n_state, len(node.inputs))]
    node.mark_read(*range(n_state))
    in_axes = node.attr("scan_input_axes", None) or [0] * n_scan_in
    in_dirs = node.attr("scan_input_directions", None) or [0] * n_scan_in
    n_out = len(body.output) - n_state
    out_axes = node.attr("scan_output_axes", None) or [0] * n_out
    out_dirs = node.attr("scan_output_directions", None) or [0] * n_out
    lengths = set()
    for x, a in zip(xs, in_axes):
        d = shape_of(x)[a % ndim_of(x)]
        if not hasattr(d, "value"):
            raise node.error(
                f"a scan length known only at run time ({d}) is not supported (graphc unrolls scans)"
            )
        lengths.add(int(d.value))
    if len(lengths) != 1:
        raise node.error(f"scan inputs of different lengths {sorted(lengths)}")
    length = lengths.pop()
    if length > UNROLL_LIMIT:
        raise node.error(f"a scan of {length} steps is not unrolled (limit {UNROLL_LIMIT})")
    names = [i.name for i in body.input]
    pieces: list[list] = [[] for _ in range(n_out)]
    for t in range(length):
        bindings = dict(zip(names[:n_state], states))
        for name, x, a, direction in zip(names[n_state:], xs, in_axes, in_dirs):
            a = a % ndim_of(x)
            index = length - 1 - t if direction else t
            bindings[name] = op.squeeze(op.strided_slice(x, [a], [index], [index + 1]), [a])
        outs = _unrolled_body(node, body, {k: importer.bind(v) for k, v in bindings.items()})
        states = list(outs[:n_state])
        for k, value in enumerate(outs[n_state:]):
            pieces[k].append(importer.output_value_of(value, "scan"))
    outputs = []
    for k in range(n_out):
        parts = pieces[k] if not out_dirs[k] else list(reversed(pieces[k]))
        rank = ndim_of(parts[0]) + 1
        outputs.append(op.stack(parts, axis=out_axes[k] % rank))
    return tuple(states) + tuple(outputs)
