"""`graphc.report`: one self-contained HTML page showing what the compiler did to a model.

The page has the model's summary (inputs and outputs with their symbolic shapes and ranges,
parameters, target, machine), the dataflow graph of `main` with the fused kernels coloured by
their fusion pattern (click one for its operators and its tensor program before and after
scheduling), the kernels' profile against the machine's measured peaks, where the compile time
went (by stage and by pass), and every stage's module with a diff against the previous stage.
"""

from __future__ import annotations

import os
import time

from .collect import CompileRecord, collect, machine_summary
from .graph import dataflow_graph, draw_svg, layout_engine
from .page import (
    compile_time_section,
    function_texts,
    graph_section,
    kernel_section,
    render,
    stages_section,
    summary_section,
)


def report(
    model,
    target="llvm",
    *,
    example_inputs=None,
    dynamic_shapes=None,
    inputs=None,
    path="report.html",
    profile: bool = True,
    layout: str = "auto",
    title: str | None = None,
    progress=None,
) -> str:
    """Compile `model` (anything `graphc.compile` takes) for `target`, run it once profiled (CPU
    targets, when `profile`), and write the HTML report to `path`; returns the path.

    `inputs` are the profiled run's inputs (default: `example_inputs`, else random inputs of
    the declared shapes). `layout` picks the graph drawing: "dot" (Graphviz), "networkx", or
    "auto" (dot when installed).
    """
    engine = layout_engine(layout)
    start = time.perf_counter()
    record: CompileRecord = collect(
        model,
        target,
        example_inputs=example_inputs,
        dynamic_shapes=dynamic_shapes,
        inputs=inputs,
        profile=profile,
        progress=progress,
    )
    title = title or _title_of(model)
    graph = dataflow_graph(record.stage("fused"), record.fused_members)
    texts = {stage.name: function_texts(stage.result) for stage in record.stages}
    page = render(
        title,
        [
            summary_section(record, machine_summary(), title),
            graph_section(graph, draw_svg(graph, engine), engine, record),
            kernel_section(record),
            compile_time_section(record),
            stages_section(texts, record),
        ],
    )
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
        f.write(f"\n<!-- built in {time.perf_counter() - start:.1f} s -->\n")
    return path


def _title_of(model) -> str:
    if isinstance(model, str | os.PathLike):
        return os.path.basename(os.fspath(model))
    return type(model).__name__


__all__ = ["CompileRecord", "collect", "dataflow_graph", "draw_svg", "report"]
