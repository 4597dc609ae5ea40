"""The runtime Module: compiled machine code loaded into the process, with callable kernels.

A Module holds object code (what the compiler cached) plus each kernel's calling-convention
metadata, loads the code with LLVM's MCJIT (`add_object_file`) and hands out `Kernel`
callables. It can be saved to and loaded from bytes without the compiler.

>>> mod = Module(b"", [], {"triple": "", "cpu": "", "features": "", "str": "llvm"}, load=False)
>>> mod.entry_name is None, "main" in mod
(True, False)
"""

from __future__ import annotations

import abc
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


def ensure_jit() -> None:
    """Initialise LLVM's native target for MCJIT once, and make libm visible to loaded code."""
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
def _shared_machine(triple: str, cpu: str, features: str, opt: int):
    return _machine(triple, cpu, features, opt)


def _machine(triple: str, cpu: str, features: str, opt: int):
    ensure_jit()
    return llvm.Target.from_triple(triple or llvm.get_process_triple()).create_target_machine(
        cpu=cpu, features=features, opt=opt, reloc="pic", codemodel="jitdefault")


def _jit_target_machine(target: dict, shared: bool = True):
    """The target machine of the code a Module holds, as the compiler recorded it.

    An MCJIT engine takes ownership of the machine it is given, so it gets a fresh one
    (`shared=False`); inspection (`get_source("asm")`) shares a cached one.
    """
    args = (target.get("triple", ""), target.get("cpu", ""), target.get("features", ""),
            min(max(int(target.get("opt", 3)), 0), 3))
    return _shared_machine(*args) if shared else _machine(*args)


class RuntimeModule(abc.ABC):
    """What every compiled module offers: kernels by name, source to inspect, bytes to save.

    Subclasses: `Module` (machine code for this CPU), `DeviceModule` (a GPU module: host code
    plus CUDA or OpenCL kernels) and `CSourceModule` (target "c"). A module's `functions` maps
    each kernel name to its calling-convention metadata; `imported_modules` lists the modules
    it carries (a GPU module's device code).
    """

    type_key = ""
    functions: dict
    imported_modules: list

    @abc.abstractmethod
    def get_function(self, name: str):
        """The callable kernel `name`; a KeyError listing the names when there is none."""

    @abc.abstractmethod
    def get_source(self, fmt: str = "") -> str:
        """Source text of the compiled code, in the formats the module names."""

    @abc.abstractmethod
    def to_bytes(self) -> bytes:
        """The module as bytes that `load_module` / `module_from_bytes` read back."""

    def __getitem__(self, name: str):
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

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, **kwargs):
        """A function `f(*args) -> BenchmarkResult` that times `func_name` (see runtime.profiling)."""
        from .profiling import time_evaluator

        kernel = self.get_function(func_name)
        return time_evaluator(kernel, dev, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                              **kwargs)

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    def export_library(self, path) -> None:
        """Write the module to `path` (`graphc.runtime.load_module` reads it back)."""
        self.save(path)


class Module(RuntimeModule):
    """Compiled kernels: `mod["name"](*args)`, `mod(*args)`, `mod.get_source("ll"|"asm")`."""

    type_key = "llvm"

    def __init__(self, object_code: bytes | list[bytes], functions: list[dict], target: dict,
                 ll_source: str | list[str] | None = None, load: bool = True):
        # the code may come as several object files (compiled in parallel), each with its IR
        self.objects = [bytes(o) for o in (object_code if isinstance(object_code, list) else [object_code])]
        self.object_code = self.objects[0]
        self.functions = {meta["name"]: meta for meta in functions}
        self.target = dict(target)
        self.imported_modules: list = []
        self._ll = ll_source
        self._engines = None  # one MCJIT engine per object file, made on first use
        self._kernels: dict[str, Kernel] = {}
        if load and self.functions:
            self._load()

    # -- loading ------------------------------------------------------------------------------
    def _load(self) -> None:
        """Load each object file into its own MCJIT engine.

        One engine per object, never several objects in one: RuntimeDyld resolves a
        `R_X86_64_GOTOFF64` relocation (the large code model's way to address a local function
        or constant) against the first `.got` section it loaded, so in the second object of an
        engine the address of an outlined parallel body came out wrong and a worker thread
        jumped into the middle of an instruction (SIGILL). The parts share no symbols (every
        helper is internal to its part), so separate engines lose nothing."""
        ensure_jit()
        engines = []
        for obj in self.objects:
            machine = _jit_target_machine(self.target, False)
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            engine.finalize_object()
            engines.append(engine)
        self._engines = engines

    def get_function(self, name: str) -> Kernel:
        """The kernel called `name`; raises KeyError listing the names when there is none."""
        kernel = self._kernels.get(name)
        if kernel is not None:
            return kernel
        meta = self.functions.get(name)
        if meta is None:
            names = ", ".join(self.functions) or "none"
            raise KeyError(f"module has no function {name!r}; it has: {names}")
        if self._engines is None:
            self._load()
        part = meta.get("object")  # which object file defines it (absent: look in each)
        engines = self._engines if part is None else self._engines[part:part + 1]
        address = 0
        for engine in engines:
            address = engine.get_function_address(name)
            if address:
                break
        if not address:
            raise GraphcError(f"function {name!r} is not in the loaded machine code")
        kernel = Kernel(meta, address, owner=self)
        self._kernels[name] = kernel
        return kernel

    # -- inspection -----------------------------------------------------------------------------
    def get_source(self, fmt: str = "ll") -> str:
        """The optimized LLVM IR ("ll") or the target assembly ("asm", "s")."""
        if self._ll is None:
            raise GraphcError("this module was loaded without its LLVM IR; rebuild it to inspect source")
        parts = self._ll if isinstance(self._ll, list) else [self._ll]
        if fmt in ("ll", "llvm", ""):
            return "\n".join(parts)
        if fmt in ("asm", "s"):
            ensure_jit()
            machine = _jit_target_machine(self.target)
            return "\n".join(machine.emit_assembly(llvm.parse_assembly(p)) for p in parts)
        raise ValueError(f"unknown source format {fmt!r}; expected 'll' or 'asm'")

    def __repr__(self) -> str:
        return f"<graphc.runtime.Module {self.target.get('str', '')}: {', '.join(self.functions)}>"

    # -- serialisation --------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        fields = {"functions": list(self.functions.values()), "target": self.target, "ll": self._ll}
        if len(self.objects) > 1:
            fields["objects"] = [len(o) for o in self.objects]  # the object files, one after another
        header = json.dumps(fields).encode()
        return _MAGIC + struct.pack("<Q", len(header)) + header + b"".join(self.objects)

    @staticmethod
    def from_bytes(data: bytes) -> Module:
        if not data.startswith(_MAGIC):
            raise GraphcError("not a graphc module: bad magic bytes")
        (size,) = struct.unpack_from("<Q", data, len(_MAGIC))
        start = len(_MAGIC) + 8
        header = json.loads(data[start:start + size])
        code = data[start + size:]
        objects = []
        for n in header.get("objects", [len(code)]):
            objects.append(code[:n])
            code = code[n:]
        return Module(objects, header["functions"], header["target"], header["ll"])


def _load_device_module(data: bytes, where: str):
    from .device_module import DeviceModule

    return DeviceModule.from_bytes(data)


def _load_source_module(data: bytes, where: str):
    from .source_module import CSourceModule

    return CSourceModule.from_bytes(data)


# magic bytes -> fn(data, where) -> loaded object; kernel Modules here, VM executables by graphc.vm
_LOADERS: dict[bytes, object] = {
    _MAGIC: lambda data, where: Module.from_bytes(data),
    b"GRAPHCDEV1": _load_device_module,  # graphc.runtime.device_module.MAGIC (GPU modules)
    b"GRAPHCCSRC1": _load_source_module,  # graphc.runtime.source_module.MAGIC (target "c")
}
_KERNEL_MAGICS = (_MAGIC, b"GRAPHCDEV1", b"GRAPHCCSRC1")


def register_loader(magic: bytes, loader) -> None:
    """Let `load_module` load files that start with `magic` with `loader(data, where)`.

    `graphc.vm` registers its executables this way when it is imported, so the runtime
    itself never imports the VM.
    """
    _LOADERS[bytes(magic)] = loader


def module_from_bytes(data: bytes, where: str = "data"):
    """A kernel module (CPU, GPU or C source) from the bytes its `to_bytes` wrote."""
    for magic in _KERNEL_MAGICS:
        if data.startswith(magic):
            return _LOADERS[magic](data, where)
    raise GraphcError(f"{where} is not a graphc kernel module: it starts with {bytes(data[:10])!r}")


def load_module(path):
    """Load a file saved by graphc: a kernel Module (`Module.save`) or a VM Executable
    (`export_library`; loadable once `graphc.vm` is imported), told apart by its magic bytes.
    """
    with open(path, "rb") as f:
        data = f.read()
    where = f"file {str(path)!r}"
    for magic, loader in _LOADERS.items():
        if data.startswith(magic):
            return loader(data, where)
    raise GraphcError(f"{where} is not a file graphc can load: it starts with {data[:10]!r}, not with the "
                      f"magic bytes of a kernel module or, once graphc.vm is imported, of a VM executable")
