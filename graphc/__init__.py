"""graphc: a Python machine-learning compiler in the spirit of Apache TVM Unity.

>>> import graphc
>>> graphc.IRModule is graphc.ir.IRModule
True
"""

from . import errors, ir, tir
from .errors import GraphcError
from .ir import IRModule

__version__ = "0.1.0"

_LAZY = {
    # name: (module, attribute or None for the module itself)
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


__all__ = ["GraphcError", "IRModule", "errors", "ir", "tir", *_LAZY]
