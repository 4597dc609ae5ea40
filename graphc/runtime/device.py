"""Devices, and the per-device-type back ends (`DeviceAPI`) that allocate and copy memory on them.

A `Device` is a value: a device type (``"cpu"``, ``"cuda"``, ``"opencl"``) and an index.
Memory operations go through the `DeviceAPI` registered for the device type. The CPU
back end is built in; a GPU back end registers itself with `register_device_api`, or is
found on first use as the module named in ``_BACKEND_MODULES`` (which must call
`register_device_api` when imported).

>>> cpu(0)
cpu(0)
>>> device("llvm") == cpu()
True
>>> cpu().dlpack_code, cuda(1).dlpack_code
(1, 2)
>>> cpu().exist
True
"""

from __future__ import annotations

import importlib
import importlib.util
import operator

import numpy as np

from ..errors import DeviceError

# DLPack's DLDeviceType codes.
kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL = 1, 2, 3, 4

_CODE_OF = {"cpu": kDLCPU, "cuda": kDLCUDA, "opencl": kDLOpenCL}
_TYPE_OF_CODE = {kDLCPU: "cpu", kDLCUDA: "cuda", kDLCUDAHost: "cpu", kDLOpenCL: "opencl"}
_DISPLAY = {"cpu": "CPU", "cuda": "CUDA", "opencl": "OpenCL"}

# Names accepted by `device()`: device types, their aliases, and target kinds (as tvm.device does).
_ALIASES = {
    "cpu": "cpu", "llvm": "cpu", "c": "cpu", "stackvm": "cpu",
    "cuda": "cuda", "nvptx": "cuda", "gpu": "cuda",
    "opencl": "opencl", "cl": "opencl",
}  # fmt: skip

# Host memory for every tensor graphc allocates starts at a multiple of this many bytes.
ALIGNMENT = 64


class Device:
    """A device: a device type and an index, compared and hashed by value."""

    __slots__ = ("device_type", "index", "dlpack_code")

    def __init__(self, device_type: str | int, index: int = 0):
        if isinstance(device_type, int) and not isinstance(device_type, bool):
            if device_type not in _TYPE_OF_CODE:
                raise DeviceError(
                    f"unknown DLPack device type code {device_type}; "
                    f"expected one of {sorted(_TYPE_OF_CODE)} (cpu, cuda, cuda-host, opencl)"
                )
            kind = _TYPE_OF_CODE[device_type]
        else:
            kind = _normalize_name(device_type)
        given = index
        try:
            index = operator.index(index) if not isinstance(index, bool) else -1
        except TypeError:
            index = -1
        if index < 0:
            raise DeviceError(f"device index must be a non-negative int, got {given!r} for {kind}")
        object.__setattr__(self, "device_type", kind)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "dlpack_code", _CODE_OF[kind])

    def __setattr__(self, name, value):
        raise AttributeError("Device is immutable")

    def __reduce__(self):
        return (Device, (self.device_type, self.index))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Device):
            return NotImplemented
        return self.device_type == other.device_type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.device_type, self.index))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.index})"

    def __str__(self) -> str:
        return f"{self.device_type}:{self.index}"

    @property
    def api(self) -> DeviceAPI:
        """The back end serving this device type (an unavailable stub if none is registered)."""
        return get_device_api(self.device_type)

    @property
    def exist(self) -> bool:
        """Whether this device can be used now."""
        return self.api.exist(self.index)

    def sync(self) -> None:
        """Wait for all work queued on this device to finish.

        >>> cpu().sync()
        """
        self.api.synchronize(self.index)

    def create_raw_stream(self) -> int:
        """A new stream of this device (a CUDA stream handle), as TVM's `dev.create_raw_stream()`."""
        return self.api.create_stream(self.index)

    def set_raw_stream(self, stream: int) -> None:
        """Launch this device's kernels on `stream` from now on (0: the default stream)."""
        self.api.set_stream(self.index, stream)

    def free_raw_stream(self, stream: int) -> None:
        self.api.free_stream(self.index, stream)

    def _dlpack_device(self) -> tuple[int, int]:
        return (self.dlpack_code, self.index)


def _normalize_name(name) -> str:
    if isinstance(name, Device):
        return name.device_type
    kind = getattr(name, "kind", None)  # a Target: take its kind's name
    if kind is not None:
        name = getattr(kind, "name", kind)
    if not isinstance(name, str):
        raise DeviceError(f"expected a device name such as 'cpu', 'cuda' or 'llvm', got {name!r}")
    key = name.strip().split(" ", 1)[0].lower()  # "llvm -mcpu=x" -> "llvm"
    if key not in _ALIASES:
        raise DeviceError(
            f"unknown device {name!r}; expected one of {', '.join(sorted(_ALIASES))}"
        )
    return _ALIASES[key]


def cpu(index: int = 0) -> Device:
    """The host CPU.

    >>> cpu()
    cpu(0)
    """
    return Device("cpu", index)


def cuda(index: int = 0) -> Device:
    """A CUDA GPU.

    >>> cuda(1)
    cuda(1)
    """
    return Device("cuda", index)


def opencl(index: int = 0) -> Device:
    """An OpenCL device.

    >>> opencl()
    opencl(0)
    """
    return Device("opencl", index)


def device(name: str | int | Device, index: int = 0) -> Device:
    """A device from a device type, a target kind name (``"llvm"``, ``"nvptx"``) or a DLPack code.

    >>> device("cuda", 1), device("llvm"), device(1)
    (cuda(1), cpu(0), cpu(0))
    """
    if isinstance(name, Device):
        return name
    return Device(name, index)


class DeviceAPI:
    """The memory and synchronization operations of one device type; back ends subclass it.

    Allocations are opaque objects with an integer ``ptr`` attribute (the device address
    of their first byte); the memory is released by `free` or when the object is collected.
    """

    device_type: str = ""

    def exist(self, index: int) -> bool:
        raise NotImplementedError

    def alloc(self, index: int, nbytes: int, alignment: int = ALIGNMENT):
        raise NotImplementedError

    def free(self, allocation) -> None:
        raise NotImplementedError

    def copy_from_host(self, host: np.ndarray, dst_ptr: int, index: int) -> None:
        """Copy the bytes of the C-contiguous array `host` to device address `dst_ptr`."""
        raise NotImplementedError

    def copy_to_host(self, src_ptr: int, host: np.ndarray, index: int) -> None:
        """Fill the C-contiguous array `host` from device address `src_ptr`."""
        raise NotImplementedError

    def synchronize(self, index: int) -> None:
        raise NotImplementedError

    # -- streams: devices without them refuse --------------------------------------------------
    def create_stream(self, index: int) -> int:
        raise DeviceError(f"{_DISPLAY.get(self.device_type, self.device_type)} devices have no streams")

    def set_stream(self, index: int, stream: int) -> None:
        if stream:
            self.create_stream(index)

    def free_stream(self, index: int, stream: int) -> None:
        self.create_stream(index)


class _HostAllocation:
    """An aligned host buffer: `array` is a uint8 view that starts at an aligned address."""

    __slots__ = ("array", "ptr")

    def __init__(self, nbytes: int, alignment: int):
        raw = np.empty(nbytes + alignment, dtype=np.uint8)
        address = raw.__array_interface__["data"][0]
        offset = (-address) % alignment
        self.array = raw[offset : offset + nbytes]
        self.ptr = address + offset


class CPUDeviceAPI(DeviceAPI):
    """The host: memory is numpy-owned, copies are memmoves, synchronization is a no-op."""

    device_type = "cpu"

    def exist(self, index: int) -> bool:
        return True

    def alloc(self, index: int, nbytes: int, alignment: int = ALIGNMENT) -> _HostAllocation:
        return _HostAllocation(nbytes, alignment)

    def free(self, allocation) -> None:
        allocation.array = None

    def copy_from_host(self, host: np.ndarray, dst_ptr: int, index: int) -> None:
        import ctypes

        ctypes.memmove(dst_ptr, host.ctypes.data, host.nbytes)

    def copy_to_host(self, src_ptr: int, host: np.ndarray, index: int) -> None:
        import ctypes

        ctypes.memmove(host.ctypes.data, src_ptr, host.nbytes)

    def synchronize(self, index: int) -> None:
        return None


class _UnavailableDeviceAPI(DeviceAPI):
    """Stands in for a device type with no registered back end: it exists nowhere."""

    def __init__(self, device_type: str):
        self.device_type = device_type

    def exist(self, index: int) -> bool:
        return False

    def _fail(self, *args, **kwargs):
        name = _DISPLAY[self.device_type]
        raise DeviceError(
            f"{name} is not available: no {name} back end is registered "
            f"(graphc.runtime.{self.device_type}_api registers it when imported); use graphc.cpu() instead"
        )

    alloc = free = copy_from_host = copy_to_host = synchronize = _fail


_REGISTRY: dict[str, DeviceAPI] = {"cpu": CPUDeviceAPI()}
# Modules that register a back end when imported; tried on first use of their device type.
_BACKEND_MODULES = {"cuda": "graphc.runtime.cuda_api", "opencl": "graphc.runtime.opencl_api"}


def register_device_api(device_type: str, api: DeviceAPI) -> None:
    """Make `api` serve every device of `device_type` (replacing any earlier back end).

    >>> register_device_api("cpu", get_device_api("cpu"))
    """
    kind = _normalize_name(device_type)
    if not isinstance(api, DeviceAPI):
        raise DeviceError(f"expected a DeviceAPI for {kind!r}, got {type(api).__name__}")
    _REGISTRY[kind] = api


def get_device_api(device_type: str) -> DeviceAPI:
    """The back end for a device type; an unavailable stub when none is registered.

    >>> get_device_api("cpu").exist(0), get_device_api("cuda").exist(0)
    (True, False)
    """
    api = _REGISTRY.get(device_type)
    if api is not None:
        return api
    kind = _normalize_name(device_type)
    module = _BACKEND_MODULES.get(kind)
    if module is not None and kind not in _REGISTRY and importlib.util.find_spec(module) is not None:
        importlib.import_module(module)
    if kind not in _REGISTRY:
        _REGISTRY[kind] = _UnavailableDeviceAPI(kind)
    return _REGISTRY[kind]
