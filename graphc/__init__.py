"""graphc: a Python machine-learning compiler in the spirit of Apache TVM Unity.

Every subpackage loads on first use, so `import graphc.runtime` / `graphc.vm` (running a
saved executable) never loads the compiler.

>>> import graphc
>>> graphc.IRModule is graphc.ir.IRModule
True
"""

from . import errors
from .errors import GraphcError

TVMError = GraphcError  # TVM's base error: `except graphc.TVMError` catches every graphc error

__version__ = "0.1.0"

_LAZY = {
    # name: (module, attribute or None for the module itself)
    "ir": ("graphc.ir", None),
    "tir": ("graphc.tir", None),
    "IRModule": ("graphc.ir", "IRModule"),
    "relax": ("graphc.relax", None),
    "topi": ("graphc.topi", None),
    "dlight": ("graphc.dlight", None),
    "vm": ("graphc.vm", None),
    "driver": ("graphc.driver", None),
    "te": ("graphc.te", None),
    "script": ("graphc.script", None),
    "target": ("graphc.target", None),
    "runtime": ("graphc.runtime", None),
    "nd": ("graphc.runtime.nd", None),
    "Target": ("graphc.target", "Target"),
    "build": ("graphc.driver", "build"),
    "lower": ("graphc.driver", "lower"),
    "compile": ("graphc.driver", "compile"),
    "cpu": ("graphc.runtime", "cpu"),
    "cuda": ("graphc.runtime", "cuda"),
    "opencl": ("graphc.runtime", "opencl"),
    "device": ("graphc.runtime", "device"),
    "Device": ("graphc.runtime", "Device"),
    "Tensor": ("graphc.runtime", "Tensor"),
    "nn": ("graphc.relax.frontend.nn", None),
    "frontend": ("graphc.frontend", None),
    "DataType": ("graphc.ir", "DataType"),
    "register_func": ("graphc.runtime.registry", "register_func"),
    "register_global_func": ("graphc.runtime.registry", "register_global_func"),
    "get_global_func": ("graphc.runtime.registry", "get_global_func"),
    "list_global_func_names": ("graphc.runtime.registry", "list_global_func_names"),
    "transform": ("graphc.transform", None),
    "report": ("graphc.reporting", "report"),
    "tune": ("graphc.tune", None),  # a package, and callable: graphc.tune(model, target, ...)
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module_name, attr = _LAZY[name]
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphc' has no attribute {name!r}")


__all__ = ["GraphcError", "TVMError", "errors", *_LAZY]
