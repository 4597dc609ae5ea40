"""The C-family source code generator: one base (`CodeGenC`) and the CUDA, OpenCL and C dialects."""

from .codegen import CodeGenC
from .dialect import CUDA, DIALECTS, OPENCL, C, Dialect

__all__ = ["C", "CUDA", "DIALECTS", "OPENCL", "CodeGenC", "Dialect"]
