"""The report as one self-contained HTML page: summary, graph, kernels, compile time, stages.

No network at view time: the styles, the script and the drawings (SVG) are inside the page.
"""

from __future__ import annotations

import difflib
import html
import json

from ..ir.module import IRModule
from ..relax.expr_functor import ExprVisitor
from ..script.printer.highlight import highlight_html
from ..tir.function import PrimFunc
from .collect import CompileRecord
from .graph import PATTERNS, DataflowGraph, tensor_label

STAGE_TITLES = {
    "imported": "Imported (the Relax module of the model)",
    "legalized": "Legalized (every operator a call of a tensor program)",
    "fused": "Fused (FoldConstant, FuseOps, FuseTIR)",
    "scheduled": "Scheduled (default schedules)",
    "lowered": "Lowered (VM lowering, kernels in lowered TensorIR)",
    "bytecode": "Bytecode (the VM executable)",
}

_CSS = """
body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:12px 20px}header h1{margin:0;font-size:20px}
nav{position:sticky;top:0;background:#eceff1;padding:6px 20px;border-bottom:1px solid #cfd8dc;z-index:2}
nav a{margin-right:16px;color:#263238;text-decoration:none;font-weight:600}
section{padding:10px 20px;border-bottom:1px solid #e0e0e0}h2{font-size:18px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#eceff1}td.l,th.l{text-align:left}
pre{background:#fff;border:1px solid #ddd;padding:8px;overflow:auto;font-size:12px;line-height:1.35}
details{margin:3px 0}summary{cursor:pointer;font-family:monospace}
.hl-keyword{color:#a626a4;font-weight:bold}.hl-namespace{color:#0184bc}.hl-string{color:#50a14f}
.hl-number{color:#986801}.hl-comment{color:#a0a1a7}.hl-decorator{color:#4078f2;font-weight:bold}
.d-add{background:#e6ffec}.d-del{background:#ffebe9}.d-hunk{color:#6f42c1}
.tag{display:inline-block;padding:0 6px;border-radius:8px;font-size:11px;margin-left:6px}
.changed{background:#ffe0b2}.same{background:#e0e0e0}
#graph-wrap{display:flex;gap:12px;align-items:flex-start}
#graph{overflow:auto;max-height:80vh;border:1px solid #ddd;background:#fff;flex:3}
#panel{flex:2;max-height:80vh;overflow:auto;font-size:13px}
.gnode{cursor:pointer}
.gnode.sel rect,.gnode.sel polygon,.gnode.sel ellipse,.gnode.sel path{stroke:#d50000;stroke-width:3}
.legend span{display:inline-block;padding:2px 8px;margin:2px;border:1px solid #999;border-radius:4px;
 font-size:12px}
.note{color:#666;font-size:13px}
"""

_JS = """
(function(){
  var info = JSON.parse(document.getElementById('graph-data').textContent);
  function code(id){var el = document.getElementById(id); return el ? el.querySelector('pre') : null;}
  function add(panel, tag, text){var el = document.createElement(tag); el.textContent = text;
    panel.appendChild(el); return el;}
  function show(nodeId){
    var n = info[nodeId], panel = document.getElementById('panel');
    if(!n){return;}
    document.querySelectorAll('.gnode.sel').forEach(function(g){g.classList.remove('sel');});
    var g = document.getElementById(nodeId);
    if(g){g.classList.add('sel');}
    panel.textContent = '';
    add(panel, 'h3', n.label);
    add(panel, 'p', n.kind + ', pattern: ' + n.pattern + (n.rule ? ', schedule rule: ' + n.rule : ''));
    if(n.members.length){add(panel, 'p', 'fused operators: ' + n.members.join(', '));}
    if(!n.kernel){return;}
    [['fused', 'before scheduling'], ['scheduled', 'after scheduling']].forEach(function(s){
      var pre = code('fn-' + s[0] + '-' + n.kernel);
      if(pre){add(panel, 'h4', n.kernel + ' ' + s[1]); panel.appendChild(pre.cloneNode(true));}
    });
  }
  document.querySelectorAll('.gnode').forEach(function(g){
    g.addEventListener('click', function(){show(g.id);});
  });
  function openHash(){
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    while(el){if(el.tagName === 'DETAILS'){el.open = true;} el = el.parentElement;}
  }
  window.addEventListener('hashchange', openHash);
  openHash();
  document.body.setAttribute('data-ready', '1');
})();
"""


def _e(text) -> str:
    return html.escape(str(text))


def _fmt(value, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)


def bar_chart(items: list[tuple[str, float, str]], title: str, width: int = 760) -> str:
    """A horizontal bar chart as SVG: (label, value, text beside the bar), in the given order."""
    if not items:
        return '<p class="note">nothing to chart</p>'
    row, label_w = 18, min(max(len(label) for label, _, _ in items) * 7 + 10, 330)
    top = max(value for _, value, _ in items) or 1.0
    bar_w = width - label_w - 150
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
        f'height="{row * len(items) + 24}" font-family="Helvetica" font-size="11">'
        f'<text x="0" y="12" font-weight="bold">{_e(title)}</text>'
    ]
    for i, (label, value, text) in enumerate(items):
        y = 20 + i * row
        short = label if len(label) * 7 + 10 <= label_w else label[: label_w // 7 - 2] + "…"
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">{_e(short)}</text>'
            f'<rect x="{label_w}" y="{y + 2}" width="{max(value / top * bar_w, 1):.1f}" height="{row - 5}" '
            f'fill="#4f83cc"/><text x="{label_w + value / top * bar_w + 6:.1f}" y="{y + 12}">{_e(text)}'
            f"</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


# ----------------------------------------------------------------------------------------------
# the model summary


class _Constants(ExprVisitor):
    def __init__(self):
        self.count = 0
        self.elements = 0
        self.nbytes = 0
        self.seen = set()

    def visit_Constant(self, const):  # noqa: N802 - the visitor's naming
        if id(const) in self.seen:
            return
        self.seen.add(id(const))
        data = const.data
        size = int(getattr(data, "size", 1))
        if size > 1 or getattr(data, "ndim", 0) > 0:
            self.count += 1
            self.elements += size
            self.nbytes += int(getattr(data, "nbytes", 0))


def _signature_rows(func) -> str:
    rows = [
        f'<tr><td class="l">input</td><td class="l">{_e(p.name_hint)}</td>'
        f'<td class="l">{_e(tensor_label(p.struct_info))}</td></tr>'
        for p in func.params
    ]
    ret = func.ret_struct_info if func.ret_struct_info is not None else func.body.struct_info
    rows.append(
        f'<tr><td class="l">output</td><td class="l">–</td><td class="l">{_e(tensor_label(ret))}</td></tr>'
    )
    return "".join(rows)


def summary_section(record: CompileRecord, machine: dict[str, str], title: str) -> str:
    imported: IRModule = record.stage("imported")
    main = imported["main"]
    consts = _Constants()
    consts.visit_expr(main)
    lower = main.attrs.get("tir_var_lower_bound", {}) if main.attrs else {}
    upper = main.attrs.get("tir_var_upper_bound", {}) if main.attrs else {}
    ranges = ", ".join(
        f"{_e(k)} in [{lower.get(k, 1)}, {upper.get(k, '∞')}]" for k in sorted(set(lower) | set(upper))
    )
    kernels = sum(1 for _, f in record.stage("lowered").items() if isinstance(f, PrimFunc))
    facts = [
        ("model", title),
        ("target", str(record.target)),
        ("machine", f"{machine['cpu']}, {machine['cores']} cores"),
        ("graphc", machine["graphc"]),
        ("python", machine["python"]),
        ("parameters", f"{consts.elements:,} in {consts.count} tensors ({_bytes(consts.nbytes)})"),
        ("symbolic dimensions", ranges or "none"),
        ("kernels", str(kernels)),
        ("compile time", f"{sum(s.seconds for s in record.stages):.2f} s"),
    ]
    fact_rows = "".join(f'<tr><th class="l">{_e(k)}</th><td class="l">{_e(v)}</td></tr>' for k, v in facts)
    return (
        f'<section id="summary"><h2>Model summary</h2><table>{fact_rows}</table><h3>Inputs and outputs</h3>'
        f'<table><tr><th class="l">kind</th><th class="l">name</th><th class="l">shape and dtype</th></tr>'
        f"{_signature_rows(main)}</table></section>"
    )


# ----------------------------------------------------------------------------------------------
# the graph


def graph_section(graph: DataflowGraph, svg: str, engine: str, record: CompileRecord) -> str:
    scheduled = record.stage("scheduled")
    info = {}
    for n in graph.nodes:
        rule = None
        if n.kernel and n.kernel in scheduled and isinstance(scheduled[n.kernel], PrimFunc):
            rule = scheduled[n.kernel].attrs.get("dlight.rule")
        info[n.id] = {
            "label": n.label,
            "kind": n.kind,
            "pattern": n.pattern_name,
            "members": n.members,
            "kernel": n.kernel,
            "rule": rule,
        }
    legend = "".join(
        f'<span style="background:{colour}">{_e(name)}</span>' for name, colour in PATTERNS.values()
    )
    data = json.dumps(info).replace("</", "<\\/")
    fused = sum(1 for n in graph.nodes if n.kind == "fused")
    return (
        f'<section id="graph-section"><h2>Dataflow graph of main</h2>'
        f'<p class="note">{len(graph.nodes)} nodes, {fused} fused kernels; layout by {_e(engine)}. '
        f"Click a node for its operators and its tensor program before and after scheduling.</p>"
        f'<div class="legend">{legend}</div><div id="graph-wrap"><div id="graph">{svg}</div>'
        f'<div id="panel"><p class="note">Select a node.</p></div></div>'
        f'<script type="application/json" id="graph-data">{data}</script></section>'
    )


# ----------------------------------------------------------------------------------------------
# kernels


def kernel_section(record: CompileRecord) -> str:
    if not record.kernels:
        return (
            f'<section id="kernels"><h2>Kernels</h2><p class="note">{_e(record.profile_note)}</p></section>'
        )
    peaks = record.peaks
    scheduled = record.stage("scheduled")
    rows = sorted(record.kernels, key=lambda k: -k.seconds)
    chart = bar_chart(
        [(k.name, k.seconds * 1e3, f"{k.seconds * 1e3:.3f} ms ({k.share * 100:.1f}%)") for k in rows[:40]],
        "time per kernel (ms), one call of main",
    )
    body = []
    for k in rows:
        if k.name in scheduled and isinstance(scheduled[k.name], PrimFunc):
            link = f'<a href="#fn-scheduled-{_e(k.name)}">{_e(k.name)}</a>'
            rule = scheduled[k.name].attrs.get("dlight.rule") or "(unscheduled)"
        else:
            link, rule = _e(k.name), "–"
        of_peak = None
        if peaks and (k.gflops or k.gbytes):
            of_peak = max((k.gflops or 0) / peaks.gflops, (k.gbytes or 0) / peaks.gbytes) * 100
        body.append(
            f'<tr><td class="l">{link}</td><td class="l">{_e(k.kind)}</td><td class="l">{_e(rule)}</td>'
            f"<td>{k.calls}</td><td>{k.seconds * 1e3:.4f}</td><td>{k.share * 100:.2f}</td>"
            f"<td>{_fmt(k.gflops)}</td><td>{_fmt(k.gbytes)}</td><td>{_fmt(of_peak)}</td></tr>"
        )
    peak_note = (
        f"Peaks measured now: {peaks.gflops:.0f} GFLOP/s (numpy float32 matmul, 512³) and "
        f"{peaks.gbytes:.1f} GB/s (64 MiB copy, read + write). '% of peak' is the larger of the "
        "kernel's GFLOP/s over the FLOP peak and its GB/s (arguments read or written once) over the "
        "bandwidth peak."
        if peaks
        else ""
    )
    total = record.profile_total or 0.0
    return (
        f'<section id="kernels"><h2>Kernels</h2><p class="note">One profiled call of main after a warm-up: '
        f"{total * 1e3:.3f} ms in all. {_e(peak_note)}</p>{chart}"
        f'<table><tr><th class="l">kernel</th><th class="l">kind</th><th class="l">schedule rule</th>'
        f"<th>calls</th><th>total ms</th><th>share %</th><th>GFLOP/s</th><th>GB/s</th><th>% of peak</th></tr>"
        f"{''.join(body)}</table></section>"
    )


# ----------------------------------------------------------------------------------------------
# compile time


def compile_time_section(record: CompileRecord) -> str:
    stages = bar_chart(
        [(s.name, s.seconds, f"{s.seconds:.3f} s") for s in record.stages], "seconds per stage"
    )
    steps = bar_chart(
        [(message, seconds, f"{seconds:.3f} s") for message, seconds in record.steps],
        "seconds per step (machine code: LLVM or NVRTC)",
    )
    by_name: dict[str, float] = {}
    leaves = [p for i, p in enumerate(record.passes) if not _has_children(record.passes, i)]
    for p in leaves:
        by_name[p.name] = by_name.get(p.name, 0.0) + p.seconds
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:30]
    passes = bar_chart([(name, sec, f"{sec:.3f} s") for name, sec in top], "seconds per pass (all runs)")
    rows = []
    for p in record.passes:
        tag = (
            '<span class="tag changed">changed</span>'
            if p.changed
            else '<span class="tag same">no change</span>'
        )
        rows.append(
            f'<tr><td class="l">{_e(p.stage)}</td><td class="l">{"&nbsp;&nbsp;" * p.depth}{_e(p.name)}</td>'
            f'<td>{p.seconds * 1e3:.2f}</td><td class="l">{tag}</td></tr>'
        )
    return (
        f'<section id="compile-time"><h2>Compile time</h2>{stages}{steps}{passes}'
        f"<details><summary>every pass that ran ({len(record.passes)}), in order</summary>"
        f'<table><tr><th class="l">stage</th><th class="l">pass</th><th>ms</th><th class="l">module</th></tr>'
        f"{''.join(rows)}</table></details></section>"
    )


def _has_children(passes, index: int) -> bool:
    """Whether the pass at `index` ran others (they are recorded before it, one level deeper)."""
    depth = passes[index].depth
    return index > 0 and passes[index - 1].depth > depth


# ----------------------------------------------------------------------------------------------
# stages


def function_texts(result) -> dict[str, str]:
    """Each function's script text (constants folded), or the bytecode's text by VM function."""
    if isinstance(result, IRModule):
        return {gv.name_hint: func.script(show_constants=False) for gv, func in result.items()}
    return {"bytecode": result.as_text()}


def _diff_html(before: str, after: str) -> str:
    lines = []
    for line in list(difflib.unified_diff(before.split("\n"), after.split("\n"), lineterm="", n=2))[2:]:
        cls = {"+": "d-add", "-": "d-del", "@": "d-hunk"}.get(line[:1], "")
        lines.append(f'<span class="{cls}">{_e(line)}</span>' if cls else _e(line))
    return "\n".join(lines)


def stages_section(texts: dict[str, dict[str, str]], record: CompileRecord) -> str:
    parts = [
        '<section id="stages"><h2>Stages</h2><p class="note">Each stage\'s functions, highlighted as '
        "<code>.show()</code> highlights them; a changed function shows its diff against the previous "
        "stage.</p>"
    ]
    previous: dict[str, str] = {}
    for stage in record.stages:
        funcs = texts[stage.name]
        changed = [n for n in funcs if previous.get(n) != funcs[n]]
        parts.append(
            f'<details id="stage-{stage.name}"><summary><b>{_e(STAGE_TITLES[stage.name])}</b> — '
            f"{len(funcs)} functions, {len(changed)} new or changed, {stage.seconds:.3f} s</summary>"
        )
        for name, text in funcs.items():
            status = "new" if name not in previous else ("changed" if name in changed else "unchanged")
            diff = ""
            if status == "changed":
                diff = (
                    f"<details><summary>diff against the previous stage</summary>"
                    f"<pre>{_diff_html(previous[name], text)}</pre></details>"
                )
            parts.append(
                f'<details id="fn-{stage.name}-{_e(name)}"><summary>{_e(name)} '
                f'<span class="tag {"same" if status == "unchanged" else "changed"}">{status}</span>'
                f"</summary><pre>{highlight_html(text)}</pre>{diff}</details>"
            )
        parts.append("</details>")
        previous = funcs
    parts.append("</section>")
    return "".join(parts)


def render(title: str, sections: list[str]) -> str:
    nav = "".join(
        f'<a href="#{anchor}">{name}</a>'
        for anchor, name in (
            ("summary", "Summary"),
            ("graph-section", "Graph"),
            ("kernels", "Kernels"),
            ("compile-time", "Compile time"),
            ("stages", "Stages"),
        )
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>graphc report: {_e(title)}</title>"
        f"<style>{_CSS}</style></head><body><header><h1>graphc report: {_e(title)}</h1></header>"
        f"<nav>{nav}</nav>{''.join(sections)}<script>{_JS}</script></body></html>"
    )


__all__ = [
    "STAGE_TITLES",
    "bar_chart",
    "compile_time_section",
    "function_texts",
    "graph_section",
    "kernel_section",
    "render",
    "stages_section",
    "summary_section",
]
