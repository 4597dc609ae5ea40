"""The runtime Module: compiled machine code loaded into the process, with callable kernels.

A Module holds object code (what the compiler cached) plus each kernel's calling-convention
metadata, loads the code with LLVM's MCJIT (`add_object_file`) and hands out `Kernel`
callables. It can be saved to and loaded from bytes without the compiler.

>>> mod = Module(b"", [], {"triple": "", "cpu": "", "features": "", "str": "llvm"}, load=False)
>>> mod.entry_name is None, "main" in mod
(True, False)
"""

from __future__ import annotations

import ctypes.util
import functools
import json
import struct
import threading

import llvmlite.binding as llvm

from ..errors import GraphcError
from .kernel import Kernel

_LOCK = threading.Lock()
_READY = False
_MAGIC = b"GRAPHCMOD1"
_VM_MAGIC = b"GRAPHCVM"  # graphc.vm.executable.MAGIC


def ensure_llvm() -> None:
    """Initialise LLVM's native target and asm printer once, and make libm visible to the JIT."""
    global _READY
    if _READY:
        return
    with _LOCK:
        if _READY:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        # libm for math calls; libgcc_s for the half-precision conversion helpers LLVM may call
        for lib in ("m", "c", "gcc_s"):
            path = ctypes.util.find_library(lib)
            if path:
                llvm.load_library_permanently(path)
        _READY = True


@functools.lru_cache(maxsize=16)
def create_target_machine(triple: str = "", cpu: str = "", features: str = "", opt: int = 3):
    """A shared target machine for `triple`/`cpu`/`features` (defaults: the host).

    Never give a shared one to an execution engine (it takes ownership); see `new_target_machine`.
    """
    return new_target_machine(triple, cpu, features, opt)


def new_target_machine(triple: str = "", cpu: str = "", features: str = "", opt: int = 3):
    """A fresh target machine (an MCJIT engine owns the one it is given)."""
    ensure_llvm()
    triple = triple or llvm.get_process_triple()
    if not cpu:
        cpu = llvm.get_host_cpu_name()
        features = features or llvm.get_host_cpu_features().flatten()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=min(max(opt, 0), 3),
                                        reloc="pic", codemodel="jitdefault")


class Module:
    """Compiled kernels: `mod["name"](*args)`, `mod(*args)`, `mod.get_source("ll"|"asm")`."""

    def __init__(self, object_code: bytes, functions: list[dict], target: dict,
                 ll_source: str | None = None, load: bool = True):
        self.object_code = bytes(object_code)
        self.functions = {meta["name"]: meta for meta in functions}
        self.target = dict(target)
        self._ll = ll_source
        self._engine = None
        self._kernels: dict[str, Kernel] = {}
        if load and self.functions:
            self._load()

    # -- loading ------------------------------------------------------------------------------
    def _tm(self, fresh: bool = False):
        t = self.target
        make = new_target_machine if fresh else create_target_machine
        return make(t.get("triple", ""), t.get("cpu", ""), t.get("features", ""), int(t.get("opt", 3)))

    def _load(self) -> None:
        ensure_llvm()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self._tm(fresh=True))
        engine.add_object_file(llvm.ObjectFileRef.from_data(self.object_code))
        engine.finalize_object()
        self._engine = engine

    def get_function(self, name: str) -> Kernel:
        """The kernel called `name`; raises KeyError listing the names when there is none."""
        kernel = self._kernels.get(name)
        if kernel is not None:
            return kernel
        meta = self.functions.get(name)
        if meta is None:
            names = ", ".join(self.functions) or "none"
            raise KeyError(f"module has no function {name!r}; it has: {names}")
        if self._engine is None:
            self._load()
        address = self._engine.get_function_address(name)
        if not address:
            raise GraphcError(f"function {name!r} is not in the loaded machine code")
        kernel = Kernel(meta, address, owner=self)
        self._kernels[name] = kernel
        return kernel

    def __getitem__(self, name: str) -> Kernel:
        return self.get_function(name)

    def __contains__(self, name) -> bool:
        return name in self.functions

    @property
    def entry_name(self) -> str | None:
        """The single function's name ("main" when several include it); None when empty."""
        if len(self.functions) == 1:
            return next(iter(self.functions))
        return "main" if "main" in self.functions else None

    def __call__(self, *args):
        name = self.entry_name
        if name is None:
            raise GraphcError(f"module has several functions ({', '.join(self.functions)}); "
                              'call one by name, e.g. mod["name"](...)')
        return self.get_function(name)(*args)

    # -- inspection -----------------------------------------------------------------------------
    def get_source(self, fmt: str = "ll") -> str:
        """The optimized LLVM IR ("ll") or the target assembly ("asm", "s")."""
        if self._ll is None:
            raise GraphcError("this module was loaded without its LLVM IR; rebuild it to inspect source")
        if fmt in ("ll", "llvm", ""):
            return self._ll
        if fmt in ("asm", "s"):
            ensure_llvm()
            llmod = llvm.parse_assembly(self._ll)
            return self._tm().emit_assembly(llmod)
        raise ValueError(f"unknown source format {fmt!r}; expected 'll' or 'asm'")

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, **kwargs):
        """A function `f(*args) -> BenchmarkResult` that times `func_name` (see runtime.profiling)."""
        from .profiling import time_evaluator

        kernel = self.get_function(func_name)
        return time_evaluator(kernel, dev, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                              **kwargs)

    def __repr__(self) -> str:
        return f"<graphc.runtime.Module {self.target.get('str', '')}: {', '.join(self.functions)}>"

    # -- serialisation --------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        header = json.dumps({"functions": list(self.functions.values()), "target": self.target,
                             "ll": self._ll}).encode()
        return _MAGIC + struct.pack("<Q", len(header)) + header + self.object_code

    @staticmethod
    def from_bytes(data: bytes) -> Module:
        if not data.startswith(_MAGIC):
            raise GraphcError("not a graphc module: bad magic bytes")
        (size,) = struct.unpack_from("<Q", data, len(_MAGIC))
        start = len(_MAGIC) + 8
        header = json.loads(data[start:start + size])
        return Module(data[start + size:], header["functions"], header["target"], header["ll"])

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    export_library = save


def load_module(path):
    """Load a kernel Module saved with `Module.save`, or a VM Executable saved with `export_library`.

    The file's magic bytes say which; the VM is imported only when the file is an executable.
    """
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(_VM_MAGIC):
        from ..vm.executable import Executable  # lazy: the runtime does not need the VM otherwise

        return Executable.from_bytes(data, where=f"file {str(path)!r}")
    return Module.from_bytes(data)
