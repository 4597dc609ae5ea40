"""The graphc runtime: devices, tensors and compiled modules, usable without the compiler.

Nothing here imports the compiler packages (``tir``, ``te``, ``relax``, ``target``,
``script``), so a saved executable loads and runs with the runtime alone.

>>> import graphc.runtime as rt
>>> rt.tensor([1, 2, 3], dtype="int32").shape
(3,)
>>> rt.cpu(0)
cpu(0)
"""

from .device import Device, DeviceAPI, cpu, cuda, device, get_device_api, opencl, register_device_api
from .dlpack import from_dlpack
from .tensor import Tensor, empty, tensor
from .thread_pool import get_num_threads, set_num_threads  # registers the kernels' thread state

_LAZY = {
    # loaded on first access: they pull in llvmlite and the profiler, which tensors alone do not need
    "Module": (".module", "Module"),
    "load_module": (".module", "load_module"),
    "nd": (".nd", None),
    "profiling": (".profiling", None),
    "time_evaluator": (".profiling", "time_evaluator"),
    "BenchmarkResult": (".profiling", "BenchmarkResult"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module_name, attr = _LAZY[name]
        module = importlib.import_module(module_name, __name__)
        value = module if attr is None else getattr(module, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphc.runtime' has no attribute {name!r}")


__all__ = [
    "Device",
    "DeviceAPI",
    "Tensor",
    "cpu",
    "cuda",
    "device",
    "empty",
    "from_dlpack",
    "get_device_api",
    "get_num_threads",
    "opencl",
    "register_device_api",
    "set_num_threads",
    "tensor",
    *_LAZY,
]
