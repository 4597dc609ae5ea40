"""`graphc compile MODEL [-o model.graphc]`: a model file to one executable file."""

from __future__ import annotations

import os
from pathlib import Path

from .common import add_model_arguments, check_model_path, shapes_of, target_of, usage_error

NAME = "compile"
HELP = "compile a model file into an executable file (run it with `graphc run`)"


def add_arguments(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--tuning-records", metavar="FILE",
                        help="tuning records to apply (written by `graphc tune`): the kernels they know "
                             "get their best tuned schedule, the others the default one")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="the executable file to write (default: the model's name with .graphc)")


def default_output(model: str) -> str:
    """`resnet.onnx` -> `resnet.graphc`, `models/mlp.py:make` -> `mlp.graphc` (in the working directory)."""
    file = model.rpartition(":")[0] if check_model_path(model) == "factory" else model
    return Path(file).stem + ".graphc"


def run(args) -> int:
    from ..driver import compile as compile_model
    from ..loader import load
    from .progress import Progress

    target = target_of(args)
    shapes = shapes_of(args)
    records = None
    if args.tuning_records:
        from ..tune.database import Database, TuningRecordError

        try:
            records = Database.open(args.tuning_records)
        except TuningRecordError as err:
            raise usage_error(f"--tuning-records: {err}") from err
    output = args.output or default_output(args.model)
    progress = Progress()
    progress("importing the model", 0, 0)
    mod = load(args.model, shape_dict=shapes)
    exe = compile_model(mod, target, tuning_records=records, progress=progress)
    exe.export_library(output)
    kernels = sum(1 for f in exe.functions if f.kind == "kernel")
    size = os.path.getsize(output)
    progress.done(f"compiled {args.model} for {target}: {kernels} kernels, {size / 1e6:.2f} MB -> {output} "
                  f"({progress.elapsed():.1f} s)")
    return 0
