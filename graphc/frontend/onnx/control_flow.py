"""Control flow: If, and Loop / Scan.

If becomes a Relax `If` whose branches are the converted subgraphs (a condition known at
import picks its branch right away). A branch's outputs whose shapes differ between the
branches get new symbolic sizes (a `match_cast` after the If).

A Loop or Scan known at import to run at most UNROLL_LIMIT iterations (a constant trip
count, and Loop's condition known at each iteration) is unrolled: each iteration's body is
converted anew in a scope of its own, and scan outputs are stacked. Any other runs as a loop
in the VM: the body becomes a private Relax function that `vm.builtin.loop` calls once per
iteration (loop_function.py).
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from .common import Emitting, ndim_of, shape_of
from .loop_function import run_time_loop as _run_time_loop
from .loop_function import run_time_scan as _run_time_scan
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


UNROLL_LIMIT = 16  # iterations: a Loop or Scan known at import to run at most this many is unrolled


class _RunTime(Exception):
    """Unrolling met a condition known only at run time: the loop runs in the VM instead."""


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
    """A Loop of at most UNROLL_LIMIT iterations known at import (its trip count a constant and
    its condition known at each iteration) is unrolled; any other runs as a loop in the VM
    (`vm.builtin.loop` calling the body, a private Relax function, once per iteration)."""
    importer = node.importer
    body = node.attr("body")
    trip = node.const(0) if node.has_input(0) else None
    cond_value = importer.lookup_value(node.inputs[1]) if node.has_input(1) else None
    node.mark_read(0, 1)
    carried = [importer.lookup_value(name) if name else None for name in node.inputs[2:]]
    node.mark_read(*range(2, len(node.inputs)))
    running = True if cond_value is None else _truth(importer, cond_value)
    if trip is not None:
        if trip.size != 1 or int(trip.reshape(-1)[0]) < 0:
            raise node.error(f"the trip count M must be a non-negative scalar, got {trip.tolist()!r}")
    if trip is not None and running is not None:
        count = int(trip.reshape(-1)[0])
        if count <= UNROLL_LIMIT:
            unrolled = _try_unroll(node, body, count, running, carried)
            if unrolled is not None:
                return unrolled
    if not node.has_input(0) and not node.has_input(1):
        raise node.error("a Loop with neither a trip count nor a condition never ends")
    return _run_time_loop(node, body, carried)


def _try_unroll(node, body, count: int, running: bool, carried: list):
    """The loop unrolled into the current block, or None (nothing emitted) when a condition
    turns out to be known only at run time."""
    importer = node.importer
    module = importer.bb.get()
    before = set(module.functions)
    importer.bb.begin_scope()
    importer.branch_depth += 1  # values emitted here may be thrown away: cache none of them
    try:
        result = _unroll(node, body, count, running, carried)
    except _RunTime:
        importer.branch_depth -= 1
        importer.bb.discard_scope()
        for gv in set(module.functions) - before:  # bodies of loops nested in the attempt
            del module[gv]
        return None
    except BaseException:
        importer.branch_depth -= 1
        importer.bb.discard_scope()
        raise
    importer.branch_depth -= 1
    for block in importer.bb.end_scope():
        for binding in block.bindings:
            importer.bb.emit_normalized(binding)
    return result


def _unroll(node, body, count: int, running: bool, carried: list):
    importer = node.importer
    n_carried = len(carried)
    n_scan = len(body.output) - 1 - n_carried
    scans: list[list] = [[] for _ in range(n_scan)]
    names = [i.name for i in body.input]
    iteration = 0
    while running and iteration < count:
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
        running = _truth(importer, cond_out)
        if running is None:
            raise _RunTime
        iteration += 1
    stacked = []
    for pieces in scans:
        if not pieces:
            raise _RunTime  # no iteration gives the shape: the VM's loop knows it from the body
        exprs = [importer.output_value_of(p, "scan") for p in pieces]
        stacked.append(op.stack(exprs, axis=0) if len(exprs) > 1 else op.expand_dims(exprs[0], [0]))
    return tuple(carried) + tuple(stacked)


@converter("Scan", since=9)
def scan(node):
    """Scan over the scan inputs' common length: unrolled when it is known at import and at
    most UNROLL_LIMIT, else a loop run by the VM."""
    n_scan_in = node.attr("num_scan_inputs")
    n_state = len(node.inputs) - n_scan_in
    states = [node.importer.lookup_value(n) for n in node.inputs[:n_state]]
    xs = [node.input(i) for i in range(n_state, len(node.inputs))]
    node.mark_read(*range(n_state))
    return _scan(node, states, xs, axis_attrs=True)


@converter("Scan", since=8)
def scan8(node):
    """Scan-8: a batch axis first (unrolled over the batch, known at import), the scanned axis
    second; the optional sequence lengths must be absent."""
    if node.has_input(0):
        raise node.error("sequence_lens is not supported (every batch entry scans the whole length)")
    n_scan_in = node.attr("num_scan_inputs")
    directions = node.attr("directions", None) or [0] * n_scan_in
    n_state = len(node.inputs) - 1 - n_scan_in
    states = [node.input(i) for i in range(1, 1 + n_state)]
    xs = [node.input(i) for i in range(1 + n_state, len(node.inputs))]
    firsts = [shape_of(v)[0] for v in states + xs]
    batches = {int(d.value) if isinstance(d, tir.IntImm) else str(d) for d in firsts}
    if len(batches) != 1 or not all(isinstance(d, int) for d in batches):
        raise node.error(f"the batch axes must be one size known at import, got {sorted(map(str, batches))}")
    batch = batches.pop()
    per_batch = []
    for b in range(batch):
        pick = [op.squeeze(op.strided_slice(v, [0], [b], [b + 1]), [0]) for v in states + xs]
        per_batch.append(_scan(node, pick[:n_state], pick[n_state:], directions=directions))
    count = len(per_batch[0])
    return tuple(op.stack([outs[k] for outs in per_batch], axis=0) for k in range(count))


def _scan(node, states: list, xs: list, axis_attrs: bool = False, directions=None):
    importer = node.importer
    body = node.attr("body")
    n_state, n_scan_in = len(states), len(xs)
    n_out = len(body.output) - n_state
    in_axes = (node.attr("scan_input_axes", None) if axis_attrs else None) or [0] * n_scan_in
    in_dirs = (node.attr("scan_input_directions", None) if axis_attrs else directions) or [0] * n_scan_in
    out_axes = (node.attr("scan_output_axes", None) if axis_attrs else None) or [0] * n_out
    out_dirs = (node.attr("scan_output_directions", None) if axis_attrs else None) or [0] * n_out
    in_axes = [a % ndim_of(x) for x, a in zip(xs, in_axes)]
    lengths = {shape_of(x)[a] for x, a in zip(xs, in_axes)}
    static = {int(d.value) for d in lengths if isinstance(d, tir.IntImm)}
    if len(static) > 1:
        raise node.error(f"scan inputs of different lengths {sorted(static)}")
    if static and len(lengths) == 1 and next(iter(static)) <= UNROLL_LIMIT:
        length = static.pop()
        names = [i.name for i in body.input]
        pieces: list[list] = [[] for _ in range(n_out)]
        for t in range(length):
            bindings = dict(zip(names[:n_state], states))
            for name, x, a, direction in zip(names[n_state:], xs, in_axes, in_dirs):
                index = length - 1 - t if direction else t
                bindings[name] = op.squeeze(op.strided_slice(x, [a], [index], [index + 1]), [a])
            outs = _unrolled_body(node, body, {k: importer.bind(v) for k, v in bindings.items()})
            states = list(outs[:n_state])
            for k, value in enumerate(outs[n_state:]):
                value = importer.output_value_of(value, "scan")
                if not isinstance(value.struct_info, relax.TensorStructInfo):
                    raise node.error(f"scan output {k} ({body.output[n_state + k].name!r}) is a sequence or "
                                     f"an optional, {value.struct_info}: scan outputs are tensors, stacked "
                                     "along the scanned axis")
                pieces[k].append(value)
        outputs = []
        for k in range(n_out):
            parts = pieces[k] if not out_dirs[k] else list(reversed(pieces[k]))
            rank = ndim_of(parts[0]) + 1
            outputs.append(op.stack(parts, axis=out_axes[k] % rank))
        return tuple(states) + tuple(outputs)
    return _run_time_scan(node, body, states, xs, in_axes, in_dirs, out_axes, out_dirs)
