"""GPU modules: host code (a CPU `Module`) plus device code (CUDA cubins/PTX or OpenCL C).

`graphc.build(mod, "cuda" | "opencl")` returns a `DeviceModule`. Its functions are the
PrimFuncs' host code, compiled by LLVM for the CPU: they check nothing themselves (the
`Kernel` in front of them checks the arguments), compute the grid and block sizes from the
arguments' shapes and hand each launch to the runtime through a callback, the *launcher*:

    host(slots)  ->  launcher(record)  ->  DeviceAPI.launch(code, kernel, grid, block, args)

A record is int64 slots `[context, opcode, ...]`: opcode 0 launches kernel `record[2]` on
grid `record[3:6]`, blocks `record[6:9]`, with `record[9]` bytes of dynamic shared memory
and the kernel's arguments from `record[10]` (pointers, integers, floats as the bits of a
double); opcode 1 allocates `record[2]` bytes of device memory and writes the address to
`record[3]`; opcode 2 frees `record[2]`. The context (one per module and device, loaded on
first use) says which device and which loaded code. A failure inside the launcher is kept
and raised again once the host function returns (it returns -1).

`lib.imported_modules[0]` is the device code: `get_source()` gives the CUDA C or OpenCL C,
`get_source("ptx")` the PTX. Modules save to bytes and load back without the compiler
(the magic `GRAPHCDEV1`).

>>> code = DeviceCode("opencl", "__kernel void k() {}", [{"name": "k", "params": []}])
>>> DeviceSourceModule(code).get_source()
'__kernel void k() {}'
"""

from __future__ import annotations

import ctypes
import itertools
import json
import struct
import threading
import weakref

import numpy as np

from ..errors import DeviceError, GraphcError
from .device import Device
from .kernel import Kernel, KernelError
from .module import Module, RuntimeModule

MAGIC = b"GRAPHCDEV1"
LAUNCH, ALLOC, FREE = 0, 1, 2
_RECORD_HEAD = 10  # slots before a launch's kernel arguments


class DeviceCode:
    """The device half of a GPU module, as plain data.

    `kind` is "cuda" or "opencl"; `source` the CUDA C / OpenCL C; `kernels` each kernel's
    name and parameters (`{"kind": "pointer" | "scalar", "name", "dtype"}`); `binaries` the
    compiled images by name (`{"sm_80": cubin}`); `ptx` the PTX text (CUDA); `info` what the
    compiler reported per kernel (registers, spills).
    """

    def __init__(self, kind: str, source: str, kernels: list, binaries: dict | None = None,
                 ptx: str | None = None, info: dict | None = None):
        self.kind, self.source, self.kernels = kind, source, list(kernels)
        self.binaries = dict(binaries or {})
        self.ptx = ptx
        self.info = dict(info or {})


class DeviceSourceModule:
    """`imported_modules[0]` of a GPU module: the device code, to inspect."""

    def __init__(self, code: DeviceCode):
        self.code = code
        self.type_key = code.kind
        self.imported_modules: list = []

    def get_source(self, fmt: str = "") -> str:
        """The CUDA C / OpenCL C ("", "cu", "cl", "c"), or the PTX ("ptx")."""
        if fmt in ("", "cu", "cl", "c", "cuda", "opencl", "source"):
            return self.code.source
        if fmt == "ptx":
            if self.code.ptx is None:
                raise GraphcError(f"a {self.code.kind} module has no PTX; only CUDA modules do")
            return self.code.ptx
        raise ValueError(f"unknown source format {fmt!r}; expected '' (the source) or 'ptx'")

    @property
    def kernel_info(self) -> dict:
        """Per kernel, what the device compiler reported (registers, spill stores/loads per arch)."""
        return self.code.info

    def __repr__(self) -> str:
        return f"<graphc {self.code.kind} device code: {', '.join(k['name'] for k in self.code.kernels)}>"


# -- the launcher ------------------------------------------------------------------------------

class _Context:
    """A module's device code loaded on one device, and the memory its host code allocated."""

    def __init__(self, module: DeviceModule, device: Device):
        self.module, self.device = module, device
        self.api = device.api
        self.loaded = self.api.load_code(device.index, module.device_code)
        self.workspace: dict = {}


# context id -> weak reference to the _Context; the module owns its contexts, so device code is
# released with the module (ids are never reused)
_CONTEXTS: dict = {}
_CONTEXT_IDS = itertools.count()
_FAILURE = threading.local()


def _register(context: _Context) -> int:
    ctx_id = next(_CONTEXT_IDS)
    _CONTEXTS[ctx_id] = weakref.ref(context, lambda _, k=ctx_id: _CONTEXTS.pop(k, None))
    return ctx_id


def _launch(record) -> int:
    try:
        ref = _CONTEXTS.get(record[0])
        context = ref() if ref is not None else None
        if context is None:
            raise GraphcError("a GPU function ran after its module was released")
        op = record[1]
        if op == LAUNCH:
            code = context.module.device_code
            index = record[2]
            kernel = code.kernels[index]
            n = len(kernel["params"])
            args = [record[_RECORD_HEAD + k] for k in range(n)]
            grid = (record[3], record[4], record[5])
            block = (record[6], record[7], record[8])
            if min(grid) <= 0:
                return 0  # nothing to do (an empty tensor)
            context.api.launch(context.loaded, index, grid, block, record[9], args)
        elif op == ALLOC:
            allocation = context.api.alloc(context.device.index, max(int(record[2]), 1))
            context.workspace[allocation.ptr] = allocation
            record[3] = allocation.ptr
        elif op == FREE:
            context.workspace.pop(record[2], None)
        else:
            raise GraphcError(f"the host code asked the launcher for unknown operation {op}")
        return 0
    except BaseException as err:  # noqa: BLE001 - handed back to the caller after the host returns
        _FAILURE.error = err
        return -1


LAUNCHER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_int64))(_launch)
LAUNCHER_ADDRESS = ctypes.cast(LAUNCHER, ctypes.c_void_p).value


def raise_launch_failure(name: str, rc: int) -> None:
    """Raise what made host function `name` return `rc` < 0 (kept by the launcher)."""
    err = getattr(_FAILURE, "error", None)
    _FAILURE.error = None
    if err is None:
        raise KernelError(f"{name} failed with code {rc}")
    raise err


class DeviceKernel(Kernel):
    """A GPU function: argument checks, then the host code, which launches the kernels.

    Arguments are graphc tensors (or torch CUDA tensors, on CUDA) on one device of the
    module's kind; `on(device)` gives the kernel bound to a device (what the VM uses: its
    `trailing_slots` are the launcher and the context, filled after the symbolic variables).
    """

    def __init__(self, meta: dict, address: int, owner: DeviceModule, device: Device | None = None):
        super().__init__(meta, address, owner)
        self.module = owner
        self.device = device
        self._nslots += 2
        self.num_slots = self._nslots
        self.trailing_slots = () if device is None else (LAUNCHER_ADDRESS, owner.context(device))

    def on(self, device: Device) -> DeviceKernel:
        """This kernel launching on `device` (arguments must live there)."""
        if device.device_type != self.device_type:
            raise DeviceError(f"{self.name} is {self.device_type} code; it cannot run on {device}")
        return self.module.get_function(self.name, device)

    def raise_error(self, rc: int) -> None:
        if rc < 0:
            raise_launch_failure(self.name, rc)
        super().raise_error(rc)

    def _device_of(self, args) -> Device:
        found = None
        for arg in args:
            dev = getattr(arg, "device", None)
            if isinstance(dev, Device):
                here = dev
            elif dev is not None and getattr(dev, "type", None) == self.device_type:  # a torch tensor
                here = Device(self.device_type, dev.index or 0)
            else:
                continue
            if found is not None and here != found:
                raise DeviceError(f"{self.name}: arguments live on {found} and {here}; "
                                  "put them on one device")
            found = here
        if found is None:
            raise DeviceError(f"{self.name} runs on {self.device_type}: pass tensors on a {self.device_type} "
                              f"device, e.g. graphc.runtime.tensor(array, graphc.{self.device_type}())")
        return found

    def __call__(self, *args) -> None:
        local = self._local
        slots = getattr(local, "slots", None)
        if slots is None:  # one slot array per thread, reused by every call
            slots = local.slots = np.zeros(self._nslots, np.int64)
            local.address = slots.__array_interface__["data"][0]
        device = self.device or self._device_of(args)
        self._check(args, slots, [])
        slots[-2] = LAUNCHER_ADDRESS
        slots[-1] = self.module.context(device)
        rc = self._fn(local.address)
        if rc:
            self.raise_error(rc)


class DeviceModule(RuntimeModule):
    """Host code and device code of GPU kernels: `lib["name"](*tensors)`."""

    type_key = "device"

    def __init__(self, host: Module, device_code: DeviceCode, target: dict | None = None):
        self.host = host
        self.device_code = device_code
        self.target = dict(target or {})
        self.imported_modules = [DeviceSourceModule(device_code)]
        self.functions = host.functions
        self._contexts: dict = {}
        self._kernels: dict = {}
        self._lock = threading.Lock()

    def context(self, device: Device) -> int:
        """The launch context id of this module on `device` (loading the device code once)."""
        found = self._contexts.get(device)
        if found is None:
            with self._lock:
                found = self._contexts.get(device)
                if found is None:
                    context = _Context(self, device)
                    found = self._contexts[device] = (_register(context), context)
        return found[0]

    def get_function(self, name: str, device: Device | None = None) -> DeviceKernel:
        key = (name, device)
        kernel = self._kernels.get(key)
        if kernel is None:
            host = self.host.get_function(name)
            kernel = self._kernels[key] = DeviceKernel(host.meta, host.address, self, device)
        return kernel

    def get_source(self, fmt: str = "ll") -> str:
        """The host code's LLVM IR ("ll") or assembly ("asm"); the device code is
        `imported_modules[0].get_source()`."""
        return self.host.get_source(fmt)

    def __repr__(self) -> str:
        return f"<graphc.runtime.DeviceModule {self.target.get('str', self.device_code.kind)}: " \
               f"{', '.join(self.functions)}>"

    # -- serialisation --------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        code = self.device_code
        names = sorted(code.binaries)
        header = json.dumps({"kind": code.kind, "source": code.source, "kernels": code.kernels,
                             "ptx": code.ptx,
                             "info": code.info, "target": self.target, "binaries": names,
                             "sizes": [len(code.binaries[n]) for n in names]}).encode()
        host = self.host.to_bytes()
        parts = [MAGIC, struct.pack("<QQ", len(header), len(host)), header, host]
        parts += [code.binaries[n] for n in names]
        return b"".join(parts)

    @staticmethod
    def from_bytes(data: bytes) -> DeviceModule:
        if not data.startswith(MAGIC):
            raise GraphcError("not a graphc GPU module: bad magic bytes")
        try:
            hlen, host_len = struct.unpack_from("<QQ", data, len(MAGIC))
            pos = len(MAGIC) + 16
            header = json.loads(data[pos:pos + hlen])
            pos += hlen
            host = Module.from_bytes(data[pos:pos + host_len])
            pos += host_len
            binaries = {}
            for name, size in zip(header["binaries"], header["sizes"]):
                binaries[name] = data[pos:pos + size]
                pos += size
        except (KeyError, ValueError, struct.error) as err:
            raise GraphcError(f"a GPU module is malformed: {err}") from err
        code = DeviceCode(header["kind"], header["source"], header["kernels"], binaries, header["ptx"],
                          header["info"])
        return DeviceModule(host, code, header["target"])


__all__ = ["DeviceCode", "DeviceKernel", "DeviceModule", "DeviceSourceModule", "LAUNCHER_ADDRESS", "MAGIC"]
