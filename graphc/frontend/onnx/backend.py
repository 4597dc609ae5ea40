"""`graphc.frontend.onnx.backend`: ONNX's backend interface (`onnx.backend.base.Backend`) over
graphc, TVM's and the ONNX backend tests' spelling.

It compiles and runs models, which a frontend never does (DESIGN.md: frontends produce IR), so
it is implemented with the runners above the layers, in graphc/onnx_backend.py, and looked up
here by name when this module loads (the frontend package does not import the compiler).
"""

import importlib

_impl = importlib.import_module("graphc.onnx_backend")

GraphcBackend = _impl.GraphcBackend
GraphcRep = _impl.GraphcRep
prepare = _impl.prepare
run_model = _impl.run_model
run_node = _impl.run_node
supports_device = _impl.supports_device

__all__ = ["GraphcBackend", "GraphcRep", "prepare", "run_model", "run_node", "supports_device"]
