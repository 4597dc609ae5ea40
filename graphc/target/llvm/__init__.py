"""The LLVM (CPU) back end: lowered PrimFuncs -> LLVM IR -> optimized object code -> Module."""

from .build import build_llvm
from .codegen import CODEGEN_VERSION, CodeGenLLVM, codegen_module

__all__ = ["CODEGEN_VERSION", "CodeGenLLVM", "build_llvm", "codegen_module"]
