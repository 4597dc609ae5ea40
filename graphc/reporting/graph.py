"""The dataflow graph of a Relax `main`, and its drawing as SVG.

Nodes are the model's inputs, its operator and kernel calls (a fused kernel carries the operators
fused into it) and its output; edges carry the tensor's shape and dtype. The layout comes from a
maintained library: Graphviz's `dot` when it is installed, else networkx's layered layout
(networkx is a dependency of graphc), so the page always has a drawing.

>>> from graphc.script import from_source
>>> mod = from_source('''
... @I.ir_module
... class Module:
...     @R.function
...     def main(x: R.Tensor((4,), "float32")):
...         with R.dataflow():
...             y = R.add(x, x)
...             z = R.multiply(y, x)
...             R.output(z)
...         return z
... ''')
>>> g = dataflow_graph(mod)
>>> [n.label for n in g.nodes], [(e.source, e.target, e.label) for e in g.edges][:2]
(['x', 'add', 'multiply', 'output'], [('n0', 'n1', '4 float32'), ('n1', 'n2', '4 float32')])
>>> "<svg" in draw_svg(g, layout="networkx")
True
"""

from __future__ import annotations

import html
import shutil
import subprocess
from dataclasses import dataclass, field

from ..ir.module import IRModule
from ..relax import expr as relax_expr
from ..relax.op.registry import Op, OpPatternKind
from ..relax.struct_info import TensorStructInfo, TupleStructInfo
from ..tir.function import PrimFunc

# op_pattern -> (name shown, fill colour); TVM's kinds
PATTERNS = {
    int(OpPatternKind.kElemWise): ("elementwise", "#b7e1a1"),
    int(OpPatternKind.kBroadcast): ("broadcast", "#cfe8f7"),
    int(OpPatternKind.kInjective): ("injective", "#fde9a9"),
    int(OpPatternKind.kCommReduce): ("reduction", "#f7c6a3"),
    int(OpPatternKind.kOutEWiseFusable): ("out-elementwise-fusible", "#e3c8f2"),
    int(OpPatternKind.kTuple): ("tuple", "#e6e6e6"),
    int(OpPatternKind.kOpaque): ("opaque", "#f4a7a7"),
}
IO_COLOUR = "#ffffff"


@dataclass
class GraphNode:
    id: str
    label: str
    kind: str  # "input", "kernel", "fused", "op", "tuple", "output"
    pattern: int | None = None
    members: list[str] = field(default_factory=list)  # the operators fused into a kernel
    kernel: str | None = None  # the PrimFunc it calls

    @property
    def pattern_name(self) -> str:
        return PATTERNS[self.pattern][0] if self.pattern in PATTERNS else self.kind

    @property
    def colour(self) -> str:
        return PATTERNS[self.pattern][1] if self.pattern in PATTERNS else IO_COLOUR


@dataclass
class GraphEdge:
    source: str
    target: str
    label: str


@dataclass
class DataflowGraph:
    nodes: list[GraphNode]
    edges: list[GraphEdge]


def tensor_label(sinfo) -> str:
    """'2x32 float32' for a tensor's struct info; tuples joined with ', '."""
    if isinstance(sinfo, TensorStructInfo):
        shape = getattr(sinfo.shape, "values", None)
        dims = (
            "x".join(str(getattr(d, "value", d)) for d in shape) if shape is not None else f"{sinfo.ndim}-d"
        )
        return f"{dims or 'scalar'} {sinfo.dtype}"
    if isinstance(sinfo, TupleStructInfo):
        return ", ".join(tensor_label(f) for f in sinfo.fields)
    return type(sinfo).__name__.replace("StructInfo", "").lower()


def _pattern_of(mod: IRModule, name: str) -> int | None:
    if name in mod:
        pattern = mod[name].attrs.get("op_pattern") if mod[name].attrs else None
        return int(pattern) if pattern is not None else None
    return None


def dataflow_graph(
    mod: IRModule, members: dict[str, list[tuple[str, int | None]]] | None = None
) -> DataflowGraph:
    """The graph of `mod["main"]`. `members` maps a fused kernel's name to its operators (name,
    op_pattern), as FuseOps grouped them; the kernel is coloured by its strongest pattern."""
    members = members or {}
    func = mod["main"]
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    producer: dict[int, str] = {}  # id(var) -> node id

    def add(label, kind, **kw) -> GraphNode:
        node = GraphNode(f"n{len(nodes)}", label, kind, **kw)
        nodes.append(node)
        return node

    def connect(value, target: str) -> None:
        if isinstance(value, relax_expr.Var) and id(value) in producer:
            if any(e.source == producer[id(value)] and e.target == target for e in edges[-8:]):
                return  # one edge per pair of nodes
            edges.append(GraphEdge(producer[id(value)], target, tensor_label(value.struct_info)))
        elif isinstance(value, relax_expr.Tuple):
            for item in value.fields:
                connect(item, target)

    for param in func.params:
        producer[id(param)] = add(param.name_hint, "input").id
    body = func.body
    for block in body.blocks:
        for binding in block.bindings:
            node = _node_for(binding.value, mod, members, add)
            if node is None:  # an alias or a constant: the var stands for what it binds
                if isinstance(binding.value, relax_expr.Var) and id(binding.value) in producer:
                    producer[id(binding.var)] = producer[id(binding.value)]
                continue
            for arg in _call_inputs(binding.value):
                connect(arg, node.id)
            producer[id(binding.var)] = node.id
    out = add("output", "output")
    connect(body.body, out.id)
    return DataflowGraph(nodes, edges)


def _call_inputs(value) -> list:
    if isinstance(value, relax_expr.Call):
        if isinstance(value.op, Op) and value.op.name == "relax.call_tir":
            return (
                list(value.args[1].fields) if isinstance(value.args[1], relax_expr.Tuple) else [value.args[1]]
            )
        return list(value.args)
    if isinstance(value, relax_expr.Tuple):
        return list(value.fields)
    if isinstance(value, relax_expr.TupleGetItem):
        return [value.tuple_value]
    return []


def _node_for(value, mod, members, add) -> GraphNode | None:
    if isinstance(value, relax_expr.Call):
        op = value.op
        if isinstance(op, Op) and op.name == "relax.call_tir":
            name = op_name = value.args[0].name_hint
            fused = members.get(name)
            if fused:
                patterns = [p for _, p in fused if p is not None]
                return add(
                    name,
                    "fused",
                    pattern=max(patterns) if patterns else None,
                    members=[m for m, _ in fused],
                    kernel=op_name,
                )
            return add(name, "kernel", pattern=_pattern_of(mod, name), kernel=op_name)
        if isinstance(op, Op):
            pattern = op.get_attr("TOpPattern")
            return add(
                op.name.removeprefix("relax."), "op", pattern=int(pattern) if pattern is not None else None
            )
        name = getattr(op, "name_hint", None) or type(op).__name__
        return add(name, "op", kernel=name if name in mod and isinstance(mod[name], PrimFunc) else None)
    if isinstance(value, relax_expr.Tuple):
        return add("tuple", "tuple", pattern=int(OpPatternKind.kTuple))
    if isinstance(value, relax_expr.TupleGetItem):
        return add(f"[{value.index}]", "tuple", pattern=int(OpPatternKind.kTuple))
    return None


# ----------------------------------------------------------------------------------------------
# drawing


def layout_engine(layout: str = "auto") -> str:
    """ "dot" or "networkx": `layout` itself, or for "auto" dot when Graphviz is installed."""
    if layout == "auto":
        return "dot" if shutil.which("dot") else "networkx"
    if layout not in ("dot", "networkx"):
        raise ValueError(f"unknown graph layout {layout!r}; use 'auto', 'dot' or 'networkx'")
    if layout == "dot" and not shutil.which("dot"):
        raise ValueError(
            "graph layout 'dot' needs Graphviz's `dot` program on PATH (apt-get install graphviz)"
        )
    return layout


def draw_svg(graph: DataflowGraph, layout: str = "auto") -> str:
    """The graph as an inline SVG element; each node's group has `id` = node id and class "gnode"."""
    if layout_engine(layout) == "dot":
        return _draw_with_dot(graph)
    return _draw_with_networkx(graph)


def _node_text(node: GraphNode) -> str:
    if node.members:
        return f"{node.label}\\n({len(node.members)} ops)"
    return node.label


def _dot_source(graph: DataflowGraph) -> str:
    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [
        "digraph main {",
        "  rankdir=TB; bgcolor=transparent;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8, color="#777777"];',
    ]
    for n in graph.nodes:
        shape = ", shape=ellipse" if n.kind in ("input", "output") else ""
        label = q(n.label + (f" ({len(n.members)} ops)" if n.members else ""))
        lines.append(
            f'  {n.id} [id={q(n.id)}, class="gnode", label={label}, fillcolor={q(n.colour)}, '
            f"tooltip={q(n.pattern_name)}{shape}];"
        )
    for e in graph.edges:
        lines.append(f"  {e.source} -> {e.target} [label={q(e.label)}];")
    lines.append("}")
    return "\n".join(lines)


def _draw_with_dot(graph: DataflowGraph) -> str:
    out = subprocess.run(
        ["dot", "-Tsvg"], input=_dot_source(graph), capture_output=True, text=True, timeout=300, check=True
    )
    svg = out.stdout
    return svg[svg.index("<svg") :]  # without the XML prologue and doctype: inline in the page


_NODE_W, _NODE_H, _GAP_X, _GAP_Y = 170, 34, 30, 56


def _draw_with_networkx(graph: DataflowGraph) -> str:
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(n.id for n in graph.nodes)
    g.add_edges_from((e.source, e.target) for e in graph.edges)
    for layer, ids in enumerate(nx.topological_generations(g)):
        for node_id in ids:
            g.nodes[node_id]["layer"] = layer
    pos = nx.multipartite_layout(g, subset_key="layer", align="horizontal")
    layers: dict[int, list[str]] = {}
    for node_id in g.nodes:
        layers.setdefault(g.nodes[node_id]["layer"], []).append(node_id)
    widest = max(len(ids) for ids in layers.values())
    xs = sorted({round(p[0], 9) for p in pos.values()})
    span = (xs[-1] - xs[0]) or 1.0
    width = widest * (_NODE_W + _GAP_X) + _GAP_X
    height = len(layers) * (_NODE_H + _GAP_Y) + _GAP_Y
    at = {}
    for node_id, (x, _) in pos.items():
        cx = _GAP_X + _NODE_W / 2 + (x - xs[0]) / span * (width - 2 * _GAP_X - _NODE_W)
        cy = _GAP_Y / 2 + g.nodes[node_id]["layer"] * (_NODE_H + _GAP_Y) + _NODE_H / 2
        at[node_id] = (cx, cy)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica" font-size="10">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#777"/></marker></defs>',
    ]
    for e in graph.edges:
        (x1, y1), (x2, y2) = at[e.source], at[e.target]
        parts.append(
            f'<g class="edge"><line x1="{x1:.1f}" y1="{y1 + _NODE_H / 2:.1f}" x2="{x2:.1f}" '
            f'y2="{y2 - _NODE_H / 2:.1f}" stroke="#777" marker-end="url(#arrow)"/>'
            f'<text x="{(x1 + x2) / 2 + 4:.1f}" y="{(y1 + y2) / 2:.1f}" fill="#555" font-size="8">'
            f"{html.escape(e.label)}</text></g>"
        )
    for n in graph.nodes:
        x, y = at[n.id]
        rx = _NODE_H / 2 if n.kind in ("input", "output") else 6
        text = n.label + (f" ({len(n.members)} ops)" if n.members else "")
        if len(text) > 30:
            text = text[:28] + "…"
        parts.append(
            f'<g id="{n.id}" class="gnode"><title>{html.escape(n.label)}: {n.pattern_name}</title>'
            f'<rect x="{x - _NODE_W / 2:.1f}" y="{y - _NODE_H / 2:.1f}" width="{_NODE_W}" '
            f'height="{_NODE_H}" rx="{rx:.0f}" fill="{n.colour}" stroke="#444"/>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{html.escape(text)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


__all__ = [
    "PATTERNS",
    "DataflowGraph",
    "GraphEdge",
    "GraphNode",
    "dataflow_graph",
    "draw_svg",
    "layout_engine",
    "tensor_label",
]
