"""Loops run by the VM: an ONNX loop body as a private Relax function, called by `vm.builtin.loop`.

A `Loop` whose trip count or condition is known only at run time (and a `Scan` over a length
known only at run time) becomes

    main:       res = R.call_pure_packed("vm.builtin.loop", cls.loop_body, n_carried, n_scan,
                                         where, scan_specs, has_trip, M, has_cond, cond,
                                         *initial_carried, *captured, sinfo_args=...)
    loop_body:  (iteration, condition, *carried, *captured[, outer_sizes]) ->
                    (condition, *carried, *scanned)

The body function is converted from the ONNX subgraph once. The outer values it reads
(captured by name in ONNX) become parameters, and so do the symbolic sizes of the enclosing
function it uses (one `R.Shape` parameter). A carried value whose shape changes from one
iteration to the next gets a parameter of new symbolic sizes (one per axis). The results in
`main` are known by rank and dtype only, and get new symbolic sizes by a `match_cast`.
"""

from __future__ import annotations

import onnx

from ... import relax, tir
from ...ir.module import IRModule
from ...ir.structural import structural_equal
from ...relax.analysis.vars import free_symbolic_vars
from ...relax.transform import ConvertToDataflow
from .common import Emitting

op = Emitting(relax.op)


def outer_names(graph) -> list[str]:
    """The names a subgraph (with its nested subgraphs) reads but does not define, in order."""
    defined, used = set(), {}

    def walk(g):
        defined.update(i.name for i in g.input)
        defined.update(t.name for t in g.initializer)
        for n in g.node:
            for name in n.input:
                if name:
                    used.setdefault(name, None)
            defined.update(o for o in n.output if o)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sub in a.graphs:
                        walk(sub)
        for o in g.output:
            used.setdefault(o.name, None)

    walk(graph)
    return [name for name in used if name not in defined]


def _general(sinfo: relax.TensorStructInfo, importer, hint: str) -> relax.TensorStructInfo:
    """`sinfo` with every size a new symbolic variable (rank and dtype kept)."""
    return relax.TensorStructInfo([importer.fresh_var(hint) for _ in range(sinfo.ndim)], sinfo.dtype)


def _tensor_sinfo(node, value, what: str) -> relax.TensorStructInfo:
    sinfo = value.struct_info
    if not isinstance(sinfo, relax.TensorStructInfo) or sinfo.ndim < 0:
        raise node.error(f"{what} is {sinfo}; a loop run at run time carries tensors of known rank only")
    if sinfo.shape_values is None:
        return _general(sinfo, node.importer, "carried")
    return sinfo


class LoopBody:
    """One conversion of the body subgraph into a Relax function: `func`, the outer values its
    extra parameters take (`captured_args`), and its result's struct info `ret`
    (condition, carried..., scanned...)."""

    def __init__(self, node, graph, specs: list, prologue=None, has_cond: bool = True, sequences=None):
        """`specs` gives the leading parameters as (body input name or None, name hint, struct
        info); `prologue(params, bindings)` may bind more body inputs from them (Scan's
        slices) before the body is converted. Without `has_cond` (Scan) the body's outputs
        are the carried and scanned values only, and the condition is always true.
        `sequences` maps the positions in `specs` of run-time sequences to their elements'
        (dtype, rank)."""
        from .importer import Known, sanitize
        from .sequence import element_info, run_time_sequence

        importer = node.importer
        sequences = sequences or {}
        self.params, bindings = [], {}
        for slot, (name, hint, sinfo) in enumerate(specs):
            var = relax.Var(sanitize(hint), sinfo)
            self.params.append(var)
            if slot in sequences:
                run_time_sequence(importer, var, *sequences[slot])
            if name is not None:
                bindings[name] = var
        first_carried = 2 if has_cond else 0  # the body's outputs after the condition, by slot
        self.out_elements = {}
        self.captured_args = []
        for name in outer_names(graph):
            if name in bindings or not importer.is_defined(name):
                continue
            value = importer.lookup_value(name)
            if isinstance(value, Known):  # a fresh copy: the body must not reuse main's bindings
                bindings[name] = Known(value.array, value.dtype)
            elif value is None:
                bindings[name] = None
            elif isinstance(value, list):
                elements = []
                for k, element in enumerate(value):
                    element = importer.output_value_of(element, name)
                    var = relax.Var(f"{sanitize(name)}_{k}", element.struct_info)
                    self.params.append(var)
                    self.captured_args.append(element)
                    elements.append(var)
                bindings[name] = elements
            else:
                var = relax.Var(sanitize(name), value.struct_info)
                self.params.append(var)
                self.captured_args.append(value)
                bindings[name] = var
        bb = importer.bb
        bb.begin_scope()
        importer.branch_depth += 1
        try:
            if prologue is not None:
                prologue(self.params, bindings)
            values = importer.graph_outputs(graph, bindings)
            first_out = 1 if has_cond else 0
            for slot in sequences:
                self.out_elements[slot] = element_info(importer, values[first_out + slot - first_carried])
            outs = [importer.output_value_of(v, o.name) for v, o in zip(values, graph.output)]
            if has_cond:
                cond = outs.pop(0)
                if cond.struct_info.ndim != 0:
                    cond = op.reshape(cond, relax.ShapeExpr([]))
                if cond.struct_info.dtype != "bool":
                    cond = op.astype(cond, "bool")
            else:
                cond = relax.const(True, "bool")
            for k, (v, o) in enumerate(zip(outs, graph.output[first_out:])):
                if first_carried + k in sequences:
                    if not isinstance(v.struct_info, relax.TupleStructInfo | relax.ObjectStructInfo):
                        raise node.error(f"body output {o.name!r} must be a sequence, as is what it carries")
                elif not isinstance(v.struct_info, relax.TensorStructInfo):
                    raise node.error(
                        f"body output {o.name!r} is a sequence or an optional: a loop run at "
                        "run time carries and scans tensors only"
                    )
            result = bb.emit(relax.Tuple([cond, *outs]))
        except BaseException:
            importer.branch_depth -= 1
            bb.discard_scope()
            raise
        importer.branch_depth -= 1
        body = relax.SeqExpr(bb.end_scope(), result)
        sizes = _free_sizes(self.params, body)
        if sizes:  # the enclosing function's sizes the body uses: one shape parameter
            var = relax.Var("outer_sizes", relax.ShapeStructInfo(sizes))
            self.params.append(var)
            self.captured_args.append(relax.ShapeExpr(sizes))
        func = bb.normalize(relax.Function(self.params, body, None, True, {}))
        # the body's pure operators in dataflow blocks, for FuseOps to fuse (main, holding
        # control flow, has none: without this each operator of the body would be a kernel)
        self.func = ConvertToDataflow()(IRModule({"body": func}))["body"]
        self.ret = self.func.body.struct_info


def _free_sizes(params, body) -> list:
    probe = relax.Function(params, body, None, True, {})
    return free_symbolic_vars(probe)


def run_time_loop(node, graph, carried: list):
    """A Loop as a call of `vm.builtin.loop` on a body function added to the module."""
    from .sequence import element_info, is_run_time

    importer = node.importer
    names = [i.name for i in graph.input]
    specs = [
        (names[0], "iteration", relax.TensorStructInfo([], "int64")),
        (names[1], "cond", relax.TensorStructInfo([], "bool")),
    ]
    initial, sequences = [], {}
    for k, (name, value) in enumerate(zip(names[2:], carried)):
        if value is None:
            raise node.error(f"loop-carried value {k} is an empty optional: a loop run at run time "
                             "carries tensors and sequences only")
        if isinstance(value, list) or is_run_time(value):
            info = element_info(importer, value) or (None, -1)
            dtype = _sequence_dtype(graph.input[2 + k]) or info[0]
            if dtype is None:
                raise node.error(f"loop-carried sequence {k}: the type of its elements is unknown")
            sequences[len(specs)] = (dtype, info[1])
            value = importer.output_value_of(value, "carried")
            initial.append(importer.emit(value) if isinstance(value, relax.Tuple) else value)
            specs.append((name, name, relax.ObjectStructInfo()))
            continue
        initial.append(importer.output_value_of(value, "carried"))
        specs.append((name, name, _tensor_sinfo(node, initial[-1], f"loop-carried value {k}")))
    given = [s[2] for s in specs]
    body = converged_body(node, graph, specs, range(2, len(specs)), sequences=sequences)
    kept = [g if g is s[2] else None for g, s in list(zip(given, specs))[2:]]  # shapes main knows
    elements = {}
    for slot, (dtype, ndim) in sequences.items():  # settled by converged_body
        elements[slot - 2] = (dtype, -1 if ndim is None else ndim)
    trip = (1, node.input(0)) if node.has_input(0) else (0, relax.const(0, "int64"))
    cond = (1, node.input(1)) if node.has_input(1) else (0, relax.const(True, "bool"))
    return call_loop(node, body, kept, [*trip, *cond], initial, elements)


def _sequence_dtype(value_info) -> str | None:
    """The element dtype an ONNX value's type gives it if it is a sequence (or an optional of one)."""
    from .dtypes import graphc_dtype

    t = value_info.type
    if t.HasField("optional_type"):
        t = t.optional_type.elem_type
    if not t.HasField("sequence_type") or not t.sequence_type.elem_type.HasField("tensor_type"):
        return None
    elem = t.sequence_type.elem_type.tensor_type.elem_type
    return graphc_dtype(elem, value_info.name) if elem else None


def run_time_scan(node, graph, states: list, xs: list, in_axes, in_dirs, out_axes, out_dirs):
    """A Scan as a call of `vm.builtin.loop`: the trip count is the scanned length, and the
    body function takes iteration `i`'s slice of each scan input (inputs scanned backwards
    are reversed once before the loop; outputs likewise after it)."""
    importer = node.importer
    states = [importer.output_value_of(v, "state") for v in states]
    for k, s in enumerate(states):
        if not isinstance(s.struct_info, relax.TensorStructInfo):
            raise node.error(f"scan state {k} is a sequence or an optional: graphc scans tensors only")
    xs = [importer.emit(op.flip(x, axis=a)) if d else x for x, a, d in zip(xs, in_axes, in_dirs)]
    names = [i.name for i in graph.input]
    n_state = len(states)
    specs = [
        (None, "iteration", relax.TensorStructInfo([], "int64")),
        (None, "cond", relax.TensorStructInfo([], "bool")),
    ]
    for k, (name, value) in enumerate(zip(names[:n_state], states)):
        specs.append((name, name, _tensor_sinfo(node, value, f"scan state {k}")))
    for k, x in enumerate(xs):
        specs.append((None, f"scanned_{k}", x.struct_info))
    given = [s[2] for s in specs]

    def prologue(params, bindings):
        i = params[0]
        for k, (name, a) in enumerate(zip(names[n_state:], in_axes)):
            x = params[2 + n_state + k]
            bindings[name] = importer.emit(op.take(x, i, axis=a))

    carried = range(2, 2 + n_state)
    body = converged_body(node, graph, specs, carried, prologue, has_cond=False)
    kept = [g if g is s[2] else None for g, s in list(zip(given, specs))[2 : 2 + n_state]]
    length = shape_of_axis(xs[0], in_axes[0])
    trip = importer.emit(op.shape_to_tensor(relax.ShapeExpr([length])))
    control = [1, trip, 0, relax.const(True, "bool")]
    # the scanned inputs go first among the captured values: the body takes them after the states
    outputs = list(call_loop(node, body, kept, control, states + xs))
    for k, (axis, direction) in enumerate(zip(out_axes, out_dirs)):
        value = outputs[n_state + k]
        if direction:
            value = importer.emit(op.flip(value, axis=0))
        rank = value.struct_info.ndim
        axis = axis % rank
        if axis:
            order = list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank))
            value = importer.emit(op.permute_dims(value, order))
        outputs[n_state + k] = value
    return tuple(outputs)


def shape_of_axis(x, axis: int):
    return x.struct_info.shape_values[axis]


def converged_body(
    node, graph, specs: list, carried, prologue=None, has_cond: bool = True, sequences=None
) -> LoopBody:
    """The body converted with carried parameters (the `specs` at positions `carried`) general
    enough for every iteration: a carried value whose result shape differs from its
    parameter's gets new symbolic sizes, a carried sequence (`sequences`) whose result's
    elements have another rank than its own gets rank -1 (unknown; None: no element yet, the
    body's decide), and the body is converted again."""
    importer = node.importer
    module = importer.bb.get()
    generalized = set()  # slots whose parameter has new symbolic sizes of its own
    for _ in range(len(carried) + 2):
        before = set(module.functions)
        body = LoopBody(node, graph, specs, prologue, has_cond, sequences)
        changed = False
        for k, slot in enumerate(carried):
            name, hint, sinfo = specs[slot]
            if isinstance(sinfo, relax.ObjectStructInfo):  # a run-time sequence: its elements' rank
                dtype, ndim = sequences[slot]
                out = body.out_elements.get(slot)
                out_ndim = -1 if out is None else out[1]
                settled = ndim if out_ndim in (ndim, None) else (out_ndim if ndim is None else -1)
                if settled != ndim:
                    sequences[slot] = (dtype, settled)
                    changed = True
                continue
            out = body.ret.fields[1 + k]
            if (
                not isinstance(out, relax.TensorStructInfo)
                or out.dtype != sinfo.dtype
                or out.ndim != sinfo.ndim
            ):
                raise node.error(
                    f"loop-carried value {k} enters the body as {sinfo} and leaves it as "
                    f"{out}: its dtype and rank must stay the same"
                )
            if slot not in generalized and not structural_equal(out, sinfo, map_free_vars=False):
                specs[slot] = (name, hint, _general(sinfo, importer, "carried"))
                generalized.add(slot)
                changed = True
        if not changed:
            return body
        for gv in set(module.functions) - before:  # nested loops' bodies of the attempt thrown away
            del module[gv]
    raise node.error("the shapes of the loop-carried values do not settle")  # pragma: no cover


def call_loop(node, body: LoopBody, kept: list, control: list, initial: list, sequences=None):
    """Emit the `vm.builtin.loop` call in the current block; the carried results (of the
    struct info `kept` gives, where not None; run-time sequences where `sequences` gives
    their elements' (dtype, rank) by carried index) and the stacked scan outputs, each with
    new symbolic sizes where they are not known."""
    from .importer import sanitize
    from .sequence import run_time_sequence

    sequences = sequences or {}
    importer = node.importer
    gv = importer.bb.add_func(body.func, f"{sanitize(node.name or 'loop')}_body")
    fields = body.ret.fields
    n_carried = len(kept)
    n_scan = len(fields) - 1 - n_carried
    specs, out_sinfos = [], []
    for k in range(n_carried):
        if k in sequences:
            out_sinfos.append(relax.ObjectStructInfo())
            continue
        out_sinfos.append(relax.TensorStructInfo(dtype=fields[1 + k].dtype, ndim=fields[1 + k].ndim))
    for sinfo in fields[1 + n_carried :]:
        dims = sinfo.shape_values or [None] * sinfo.ndim
        text = ",".join(str(int(d.value)) if isinstance(d, tir.IntImm) else "?" for d in dims)
        specs.append(f"{sinfo.dtype}:{text}")
        out_sinfos.append(relax.TensorStructInfo(dtype=sinfo.dtype, ndim=sinfo.ndim + 1))
    args = [
        gv,
        relax.PrimValue(n_carried),
        relax.PrimValue(n_scan),
        relax.StringImm(node.where),
        relax.StringImm(";".join(specs)),
    ]
    for i, value in enumerate(control):
        args.append(relax.PrimValue(value) if i % 2 == 0 else value)
    args += list(initial) + list(body.captured_args)
    call = relax.op.call_pure_packed("vm.builtin.loop", *args, sinfo_args=relax.TupleStructInfo(out_sinfos))
    result = importer.emit(call)
    outputs = []
    for k in range(n_carried + n_scan):
        value = importer.emit(relax.TupleGetItem(result, k))
        inner = fields[1 + k]
        if k in sequences:
            outputs.append(run_time_sequence(importer, value, *sequences[k]))
        elif k < n_carried and kept[k] is not None and kept[k].shape_values is not None:
            outputs.append(importer.bb.match_cast(value, kept[k]))
        elif k >= n_carried and _static(inner):
            dims = [importer.fresh_var("trips")] + list(inner.shape_values)
            outputs.append(importer.bb.match_cast(value, relax.TensorStructInfo(dims, inner.dtype)))
        else:
            outputs.append(importer.refine(value, "loop"))
    return tuple(outputs)


def _static(sinfo) -> bool:
    dims = sinfo.shape_values
    return dims is not None and all(isinstance(d, tir.IntImm) for d in dims)


__all__ = ["LoopBody", "call_loop", "converged_body", "outer_names", "run_time_loop", "run_time_scan"]
