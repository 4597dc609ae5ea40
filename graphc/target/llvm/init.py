"""One-time LLVM initialisation and target machines, shared by codegen and the runtime.

>>> ensure_llvm()
>>> create_target_machine().triple != ""
True
"""

from __future__ import annotations

import ctypes.util
import functools
import threading

import llvmlite.binding as llvm

_LOCK = threading.Lock()
_READY = False


def ensure_llvm() -> None:
    """Initialise LLVM's native target and asm printer, and make libm symbols visible."""
    global _READY
    if _READY:
        return
    with _LOCK:
        if _READY:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        for lib in ("m", "c"):
            path = ctypes.util.find_library(lib)
            if path:
                llvm.load_library_permanently(path)
        _READY = True


@functools.lru_cache(maxsize=16)
def create_target_machine(triple: str = "", cpu: str = "", features: str = "", opt: int = 3):
    """A target machine for `triple` (default: the host), usable by the JIT (reloc default)."""
    ensure_llvm()
    triple = triple or llvm.get_process_triple()
    if not cpu:
        cpu = llvm.get_host_cpu_name()
        features = features or llvm.get_host_cpu_features().flatten()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=min(opt, 3),
                                        reloc="pic", codemodel="jitdefault", jit=False)
