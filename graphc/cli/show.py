"""`graphc show MODEL --stage NAME [--function NAME]`: the IR of a model at one compile stage."""

from __future__ import annotations

import os
import sys

from .common import MODEL_HELP, add_model_arguments, check_model_path, shapes_of, target_of, usage_error

NAME = "show"
HELP = "print a model's IR at a compile stage (or a compiled file's bytecode), highlighted on a terminal"


def add_arguments(parser) -> None:
    from ..driver import STAGES

    add_model_arguments(parser, MODEL_HELP + ", or an executable written by `graphc compile` (bytecode)")
    parser.add_argument("--stage", choices=STAGES,
                        help="the stage to show (default: imported; bytecode for an executable file)")
    parser.add_argument("--function", metavar="NAME", help="show only this function")
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                        help="highlight the script syntax (default: auto, on a terminal)")
    parser.add_argument("--constants", action="store_true",
                        help="print the tensor constants (weights) too, not just how many there are")


def run(args) -> int:
    from ..driver import compile_to
    from ..loader import load
    from .progress import Progress

    if _is_executable(args.model):
        if args.stage not in (None, "bytecode"):
            raise usage_error(f"{args.model} is compiled: only its bytecode can be shown (--stage bytecode)")
        from ..vm import Executable

        print(_bytecode(Executable.load(args.model), args.function))
        return 0
    check_model_path(args.model)
    stage = args.stage or "imported"
    target = target_of(args)
    progress = Progress()
    progress("importing the model", 0, 0)
    mod = load(args.model, shape_dict=shapes_of(args))
    result = compile_to(mod, stage, target, progress=progress)
    progress.done(f"{args.model} at stage {stage!r} ({progress.elapsed():.1f} s)")
    if stage == "bytecode":
        print(_bytecode(result, args.function))
        return 0
    text = _function_script(result, args.function) if args.function else result.script()
    print(_highlight(text if args.constants else _without_constants(text), args.color))
    return 0


def _is_executable(path: str) -> bool:
    from ..vm.executable import MAGIC

    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def _function_script(mod, name: str) -> str:
    names = [gv.name_hint for gv in mod.get_global_vars()]
    if name not in names:
        raise usage_error(f"--function {name!r}: the module has no such function; it has {', '.join(names)}")
    return mod[name].script()


def _bytecode(exe, name: str | None) -> str:
    text = exe.as_text()
    if name is None:
        return text
    for part in text.split("\n\n"):
        if part.startswith(f"@{name}("):
            return part
    raise usage_error(f"--function {name!r}: the executable has no VM function of that name; it has "
                      f"{', '.join(exe.function_names)}")


def _highlight(text: str, color: str) -> str:
    """The script syntax in colours where wanted (`always`, or `auto` on a terminal without NO_COLOR)."""
    wanted = color == "always" or (color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    if not wanted:
        return text
    from ..script.printer.highlight import highlight

    return highlight(text)


def _without_constants(text: str) -> str:
    """The script with its `metadata = {...}` section (the tensor constants' bytes) folded into a
    comment; the constants are still referred to as `metadata[...][i]` in the code."""
    lines = text.split("\n")
    try:
        start = lines.index(next(line for line in lines if line.startswith("metadata = {")))
        end = lines.index("]}", start)
    except (StopIteration, ValueError):
        return text
    count = end - start - 1
    note = f"# metadata: {count} tensor constant{'s' if count != 1 else ''} (shown with --constants)"
    return "\n".join(lines[:start] + [note] + lines[end + 1:])
