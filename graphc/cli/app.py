"""The `graphc` program: the argument parser, the subcommand table, and errors as short messages.

>>> main(["--version"])
graphc 0.1.0
0
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings

from . import compile as compile_cmd
from . import report as report_cmd
from . import run as run_cmd
from . import show as show_cmd
from . import tune as tune_cmd

# Each subcommand module has NAME, HELP, add_arguments(parser) and run(args) -> exit status.
COMMANDS = [compile_cmd, run_cmd, show_cmd, report_cmd, tune_cmd]

OK, MODEL_ERROR, USAGE_ERROR = 0, 1, 2


class UsageError(Exception):
    """A command line that asks for something impossible (bad option values): exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    verbose_help = "on an error, print the full message and the traceback"
    # `graphc -v run ...` and `graphc run -v ...` both work: the subcommands' flag does not reset
    # the top-level one when absent
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=verbose_help)
    parser = argparse.ArgumentParser(
        prog="graphc",
        description="Compile models (ONNX, torch.export, PyTorch modules) with graphc, run and inspect them.")
    parser.add_argument("-v", "--verbose", action="store_true", help=verbose_help)
    parser.add_argument("--version", action="store_true", help="print graphc's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(command.NAME, parents=[common], help=command.HELP, description=command.HELP)
        command.add_arguments(p)
        p.set_defaults(handler=command.run)
    return parser


def main(argv=None) -> int:
    """Run the command line `argv` (default: sys.argv[1:]); the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)  # exits with status 2 on a usage error
    if args.version:
        from .. import __version__

        print(f"graphc {__version__}")
        return OK
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    with warnings.catch_warnings():
        if not args.verbose:  # the frameworks' deprecation notices are not the user's business
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
        try:
            return args.handler(args)
        except UsageError as err:
            parser.exit(USAGE_ERROR, f"graphc {args.command}: error: {err}\n")
        except KeyboardInterrupt:
            print("graphc: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # the reader (`| head`) stopped reading: nothing is wrong
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return OK
        except Exception as err:  # noqa: BLE001 - every error becomes a short message (--verbose: all)
            report_error(args.command, err, args.verbose)
            return MODEL_ERROR


def report_error(command: str, err: BaseException, verbose: bool) -> None:
    """One or two lines on stderr: the error's first line, then the rest folded into one (or a hint)."""
    from ..errors import GraphcError

    if verbose:
        traceback.print_exception(err, file=sys.stderr)
    text = str(err).strip() or type(err).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0]
    if not isinstance(err, GraphcError | ValueError | TypeError | OSError | ImportError):
        first = f"{type(err).__name__}: {first}"  # a framework's or an unexpected error: say which
    print(f"graphc {command}: error: {first}", file=sys.stderr)
    rest = "; ".join(lines[1:])
    if rest and not verbose:
        if len(rest) > 300:
            rest = rest[:300].rsplit(";", 1)[0] + "; ... (--verbose shows all)"
        print(f"  {rest}", file=sys.stderr)
    elif not verbose and not isinstance(err, GraphcError | ValueError | OSError):
        print("  run again with --verbose for the traceback", file=sys.stderr)


__all__ = ["COMMANDS", "UsageError", "build_parser", "main", "report_error"]
