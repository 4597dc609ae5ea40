"""Importer helpers and model authoring inside Relax: `relax.frontend.nn` (also `graphc.nn`) and
`detach_params`, TVM's spelling. Importers of other frameworks' models live in `graphc.frontend`;
`relax.frontend.onnx` (TVM's `relax.frontend.onnx.from_onnx`) is `graphc.frontend.onnx`, looked
up on first use.
"""

from . import nn
from .common import detach_params


def __getattr__(name):
    # TVM's relax.frontend.onnx.from_onnx: the importer lives in graphc.frontend (relax does not
    # import its frontends), found when asked for
    if name == "onnx":
        import importlib

        return importlib.import_module("graphc.frontend.onnx")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["detach_params", "nn"]
