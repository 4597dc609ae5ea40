"""LLVM initialisation and target machines for the compiler (shared with the runtime).

>>> ensure_llvm()
>>> tm = create_target_machine()
"""

from ...runtime.module import create_target_machine, ensure_llvm

__all__ = ["create_target_machine", "ensure_llvm"]
