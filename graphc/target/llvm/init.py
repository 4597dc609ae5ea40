"""LLVM set-up for code generation: native target initialisation and shared target machines.

(The runtime loads compiled code with its own JIT set-up; this module serves the compiler.)

>>> ensure_llvm()
>>> tm = create_target_machine()
"""

from __future__ import annotations

import functools

from . import object_compiler


def ensure_llvm() -> None:
    """Initialise LLVM's native target, asm printer and asm parser once."""
    object_compiler._ensure_llvm()


@functools.lru_cache(maxsize=16)
def create_target_machine(triple: str = "", cpu: str = "", features: str = "", opt: int = 3):
    """A shared target machine for `triple`/`cpu`/`features` (defaults: the host's)."""
    return object_compiler.target_machine(triple, cpu, features, opt)


__all__ = ["create_target_machine", "ensure_llvm"]
