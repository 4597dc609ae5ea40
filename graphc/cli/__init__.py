"""The `graphc` command line: tvmc's workflow (compile a model file, run it, look at it).

    graphc compile MODEL [--target llvm] [--input-shapes "data:[1,3,224,224]"] [-o model.graphc]
    graphc run model.graphc [--inputs in.npz] [--output out.npz] [--print-time] [--profile]
    graphc show MODEL [--stage imported|legalized|fused|scheduled|lowered|bytecode] [--function NAME]
    graphc tune MODEL [--target llvm] [--trials N] [--timeout S] [--time-budget S] -o records.json

MODEL is an `.onnx` file, a `.pt2` file (`torch.export.save`) or `module.py:factory` (a
function returning the model and example inputs). Each subcommand is one module here with
`add_parser(subparsers)` and `run(args) -> exit status`, listed in `COMMANDS`; a new one plugs in
by joining the list. Exit status: 0 ok, 1 an error in the
model or the inputs (one or two lines; `--verbose` adds the traceback), 2 a usage error.
"""

from .app import COMMANDS, main

__all__ = ["COMMANDS", "main"]
