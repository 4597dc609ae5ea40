"""What the subcommands share: the model arguments (MODEL, --target, --input-shapes) and their reading."""

from __future__ import annotations

import argparse

MODEL_HELP = ("the model: an .onnx file, a .pt2 file (torch.export.save) or module.py:factory (a function "
              "returning the model, or (model, example_inputs[, dynamic_shapes]))")


def add_model_arguments(parser: argparse.ArgumentParser, model_help: str = MODEL_HELP) -> None:
    parser.add_argument("model", metavar="MODEL", help=model_help)
    parser.add_argument("--target", default="llvm",
                        help='what to compile for: llvm (this CPU), "llvm -mcpu=NAME -mattr=+f1,+f2", cuda, '
                             "opencl (default: llvm)")
    parser.add_argument("--input-shapes", metavar="SHAPES",
                        help='shapes of the model inputs the file leaves open, "name:[d0,d1,...] ..." '
                             '(e.g. "data:[1,3,224,224]")')


def usage_error(message: str):
    from .app import UsageError

    return UsageError(message)


def target_of(args):
    """The Target named by --target; a usage error when graphc does not know it."""
    from ..errors import TargetError
    from ..target import Target

    try:
        return Target.resolve(args.target)
    except (TargetError, ValueError) as err:
        raise usage_error(f"--target {args.target!r}: {err}") from err


def shapes_of(args) -> dict | None:
    from ..runner import parse_shapes

    if not args.input_shapes:
        return None
    if check_model_path(args.model) == "pt2":
        raise usage_error("--input-shapes: a .pt2 program keeps the shapes it was exported with (export "
                          "it with torch.export.Dim for other sizes); the option is for .onnx files and "
                          "module.py:factory models")
    try:
        return parse_shapes(args.input_shapes)
    except ValueError as err:
        raise usage_error(f"--input-shapes: {err}") from err


def check_model_path(path: str) -> str:
    """The kind of model `path` names ("onnx", "pt2", "factory"); a usage error otherwise."""
    from ..loader import ModelFileError, model_kind

    try:
        return model_kind(path)
    except ModelFileError as err:
        raise usage_error(str(err)) from err


__all__ = ["MODEL_HELP", "add_model_arguments", "check_model_path", "shapes_of", "target_of", "usage_error"]


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value
