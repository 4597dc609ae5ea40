"""`graphc report MODEL [-o report.html]`: the one-file HTML report of what the compiler did."""

from __future__ import annotations

import os
from pathlib import Path

from .common import add_model_arguments, check_model_path, shapes_of, target_of

NAME = "report"
HELP = "write an HTML report of a model's compilation: stages, fused graph, kernel profile, compile time"


def add_arguments(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument(
        "-o", "--output", metavar="PATH", help="the HTML file to write (default: the model's name with .html)"
    )
    parser.add_argument(
        "--no-profile", action="store_true", help="do not run the model to profile its kernels"
    )
    parser.add_argument(
        "--layout",
        choices=["auto", "dot", "networkx"],
        default="auto",
        help="how the graph is laid out: Graphviz's dot, networkx, or auto (dot when installed)",
    )


def run(args) -> int:
    from ..loader import load
    from ..reporting import report
    from .progress import Progress

    target = target_of(args)
    shapes = shapes_of(args)
    kind = check_model_path(args.model)
    file = args.model.rpartition(":")[0] if kind == "factory" else args.model
    output = args.output or Path(file).stem + ".html"
    progress = Progress()
    progress("importing the model", 0, 0)
    mod = load(args.model, shape_dict=shapes)
    report(
        mod,
        target,
        path=output,
        profile=not args.no_profile,
        layout=args.layout,
        title=os.path.basename(file),
        progress=progress,
    )
    size = os.path.getsize(output)
    progress.done(
        f"report on {args.model} for {target}: {size / 1e6:.2f} MB -> {output} ({progress.elapsed():.1f} s)"
    )
    return 0
