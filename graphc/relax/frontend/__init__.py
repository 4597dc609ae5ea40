"""Model authoring inside Relax (`relax.frontend.nn`, also `graphc.nn`), TVM's spelling.

Importers of other frameworks' models live in `graphc.frontend`; `detach_params` is
re-exported here because TVM's tutorial calls it as `relax.frontend.detach_params`, and
`relax.frontend.onnx` (TVM's `relax.frontend.onnx.from_onnx`) is `graphc.frontend.onnx`,
looked up on first use.
"""

from . import nn


def detach_params(mod):
    """See `graphc.frontend.detach_params`."""
    from ...frontend.common import detach_params as _detach

    return _detach(mod)


def __getattr__(name):
    # TVM's relax.frontend.onnx.from_onnx: the importer lives in graphc.frontend (relax does not
    # know its frontends), found when asked for
    if name == "onnx":
        import importlib

        return importlib.import_module("graphc.frontend.onnx")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["detach_params", "nn"]
