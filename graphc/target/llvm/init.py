"""LLVM set-up for code generation: native target initialisation and shared target machines.

(The runtime loads compiled code with its own JIT set-up; this module serves the compiler.)

>>> ensure_llvm()
>>> tm = create_target_machine()
"""

from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm

_LOCK = threading.Lock()
_READY = False


def ensure_llvm() -> None:
    """Initialise LLVM's native target, asm printer and asm parser once."""
    global _READY
    if _READY:
        return
    with _LOCK:
        if not _READY:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            _READY = True


@functools.lru_cache(maxsize=16)
def create_target_machine(triple: str = "", cpu: str = "", features: str = "", opt: int = 3):
    """A shared target machine for `triple`/`cpu`/`features` (defaults: the host's)."""
    ensure_llvm()
    triple = triple or llvm.get_process_triple()
    if not cpu:
        cpu = llvm.get_host_cpu_name()
        features = features or llvm.get_host_cpu_features().flatten()
    return llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=min(max(opt, 0), 3), reloc="pic", codemodel="jitdefault")


__all__ = ["create_target_machine", "ensure_llvm"]
