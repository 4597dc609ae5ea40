"""The CUDA back end of the runtime, on the CUDA driver API through `cuda-bindings`.

`graphc.cuda(i)` is CUDA device i. Each device uses its primary context; memory comes from
`cuMemAlloc`, copies are `cuMemcpyHtoD`/`cuMemcpyDtoH` (synchronous), kernels are loaded from
the module's cubin for the device's architecture (or, when there is none, JIT-compiled from
its PTX by the driver) and launched with `cuLaunchKernel` on the legacy default stream, which
orders them with the copies.

Importing this module never fails: without `cuda-bindings`, without the NVIDIA driver or
without a device, `exist` is False and using the device raises a `DeviceError` that says which
of those is missing.
"""

from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

from ..errors import DeviceError
from .device import ALIGNMENT, DeviceAPI, register_device_api

_CTYPES = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
           "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
           "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
           "float16": ctypes.c_float, "bfloat16": ctypes.c_float, "bool": ctypes.c_int32}


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as err:
        raise DeviceError("CUDA is not available: the Python package cuda-bindings is not installed "
                          "(pip install 'graphc[cuda]')") from err
    return driver


def _check(driver, result, what: str):
    """The values `result` carries after its CUresult, or a DeviceError naming the failure."""
    if not isinstance(result, tuple):
        result = (result,)
    code, *values = result
    if code != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(code)
        raise DeviceError(f"CUDA failed to {what}: {name.decode() if isinstance(name, bytes) else code}")
    return values[0] if len(values) == 1 else values


class _Allocation:
    __slots__ = ("api", "ptr", "index", "nbytes", "__weakref__")

    def __init__(self, api, ptr: int, index: int, nbytes: int):
        self.api, self.ptr, self.index, self.nbytes = api, ptr, index, nbytes

    def __del__(self):
        if self.api is not None and self.ptr:
            self.api._free_ptr(self.index, self.ptr)


class _Loaded:
    """A module's kernels loaded on one device."""

    def __init__(self, index: int, module, functions: list, kernels: list):
        self.index, self.module, self.functions, self.meta = index, module, functions, kernels


def _version(arch: str) -> tuple[int, int]:
    digits = arch.removeprefix("sm_").rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits[:-1] or 0), int(digits[-1:] or 0)


def pick_image(binaries: dict, ptx: str | None, arch: str) -> bytes:
    """The code to load on a device of `arch`: its own cubin; else a cubin of the same major
    version and a lower minor one (binary compatible); else the PTX, which the driver compiles.

    >>> pick_image({"sm_80": b"A", "sm_90": b"B"}, None, "sm_86")
    b'A'
    >>> pick_image({"sm_90": b"B"}, "ptx", "sm_80")
    b'ptx\\x00'
    """
    if arch in binaries:
        return binaries[arch]
    major, minor = _version(arch)
    compatible = [a for a in binaries if _version(a)[0] == major and _version(a)[1] <= minor]
    if compatible:
        return binaries[max(compatible, key=_version)]
    if ptx is None:
        raise DeviceError(f"the module has cubins for {', '.join(binaries)} but the device is {arch}, and no "
                          f"PTX; rebuild with target 'cuda -arch={arch}'")
    return ptx.encode() + b"\0"


class CUDADeviceAPI(DeviceAPI):
    """CUDA devices through the driver API."""

    device_type = "cuda"

    def __init__(self):
        self._lock = threading.Lock()
        self._count: int | None = None
        self._problem: str | None = None
        self._contexts: dict = {}
        self._arch: dict = {}
        self._streams: dict = {}  # device index -> the stream its kernels launch on (0: legacy default)

    # -- devices -----------------------------------------------------------------------------------
    def _init(self) -> int:
        if self._count is not None:
            return self._count
        with self._lock:
            if self._count is not None:
                return self._count
            count = 0
            try:
                driver = _driver()
                try:
                    _check(driver, driver.cuInit(0), "initialize the driver")
                    count = _check(driver, driver.cuDeviceGetCount(), "count devices")
                    if count == 0:
                        self._problem = "the NVIDIA driver reports no CUDA device"
                except DeviceError as err:
                    self._problem = f"the NVIDIA driver could not start ({err})"
                except Exception as err:  # noqa: BLE001 - the bindings raise a loader error without libcuda
                    self._problem = f"the NVIDIA driver (libcuda) is not installed or cannot be loaded " \
                                    f"({err})"
            except DeviceError as err:
                self._problem = str(err).removeprefix("CUDA is not available: ")
            self._count = count
            return count

    def exist(self, index: int) -> bool:
        return 0 <= index < self._init()

    def _context(self, index: int):
        """Make device `index`'s primary context current; returns the driver module."""
        count = self._init()
        if not 0 <= index < count:
            if self._problem:
                raise DeviceError(f"CUDA is not available: {self._problem}")
            raise DeviceError(f"there is no CUDA device {index}: this machine has {count}")
        driver = _driver()
        ctx = self._contexts.get(index)
        if ctx is None:
            with self._lock:
                ctx = self._contexts.get(index)
                if ctx is None:
                    dev = _check(driver, driver.cuDeviceGet(index), f"open device {index}")
                    ctx = self._contexts[index] = _check(driver, driver.cuDevicePrimaryCtxRetain(dev),
                                                         f"create a context on device {index}")
        _check(driver, driver.cuCtxSetCurrent(ctx), f"use the context of device {index}")
        return driver

    def arch(self, index: int) -> str:
        """The device's architecture, e.g. "sm_90"."""
        arch = self._arch.get(index)
        if arch is None:
            driver = self._context(index)
            dev = _check(driver, driver.cuDeviceGet(index), f"open device {index}")
            attr = driver.CUdevice_attribute
            major, minor = (
                _check(driver, driver.cuDeviceGetAttribute(which, dev), "read the compute capability")
                for which in (attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
            arch = self._arch[index] = f"sm_{major}{minor}"
        return arch

    # -- memory ----------------------------------------------------------------------------------
    def alloc(self, index: int, nbytes: int, alignment: int = ALIGNMENT) -> _Allocation:
        driver = self._context(index)
        ptr = _check(driver, driver.cuMemAlloc(max(int(nbytes), 1)),
                     f"allocate {nbytes} bytes on cuda({index})")
        return _Allocation(self, int(ptr), index, int(nbytes))

    def _free_ptr(self, index: int, ptr: int) -> None:
        try:
            driver = self._context(index)
            driver.cuMemFree(driver.CUdeviceptr(ptr))
        except Exception:  # noqa: BLE001 - freeing at interpreter exit may find the driver gone
            pass

    def free(self, allocation) -> None:
        if allocation.ptr:
            self._free_ptr(allocation.index, allocation.ptr)
        allocation.ptr = 0
        allocation.api = None

    def copy_from_host(self, host: np.ndarray, dst_ptr: int, index: int) -> None:
        driver = self._context(index)
        host = np.ascontiguousarray(host)
        dst = driver.CUdeviceptr(dst_ptr)
        _check(driver, driver.cuMemcpyHtoD(dst, host.ctypes.data, host.nbytes), "copy to the device")

    def copy_to_host(self, src_ptr: int, host: np.ndarray, index: int) -> None:
        driver = self._context(index)
        src = driver.CUdeviceptr(src_ptr)
        _check(driver, driver.cuMemcpyDtoH(host.ctypes.data, src, host.nbytes), "copy from the device")

    def synchronize(self, index: int) -> None:
        driver = self._context(index)
        _check(driver, driver.cuCtxSynchronize(), f"synchronize cuda({index})")

    # -- streams ---------------------------------------------------------------------------------
    # Copies are synchronous and run on the legacy default stream, which waits for every blocking
    # stream: work launched on a stream made here is ordered before the copies that follow it.
    def create_stream(self, index: int) -> int:
        driver = self._context(index)
        stream = _check(driver, driver.cuStreamCreate(0), f"create a stream on cuda({index})")
        return int(stream)

    def set_stream(self, index: int, stream: int) -> None:
        self._streams[index] = int(stream)

    def free_stream(self, index: int, stream: int) -> None:
        driver = self._context(index)
        if self._streams.get(index) == stream:
            self._streams[index] = 0
        _check(driver, driver.cuStreamDestroy(driver.CUstream(stream)), f"destroy a stream of cuda({index})")

    # -- kernels ---------------------------------------------------------------------------------
    def load_code(self, index: int, code) -> _Loaded:
        if code.kind != "cuda":
            raise DeviceError(f"a CUDA device cannot run {code.kind} code")
        driver = self._context(index)
        arch = self.arch(index)
        image = pick_image(code.binaries, code.ptx, arch)
        module = _check(driver, driver.cuModuleLoadData(image), f"load the kernels on cuda({index}) ({arch})")
        functions = [_check(driver, driver.cuModuleGetFunction(module, k["name"].encode()),
                            f"find kernel {k['name']}") for k in code.kernels]
        return _Loaded(index, module, functions, code.kernels)

    def launch(self, loaded: _Loaded, kernel_index: int, grid, block, dyn_shared: int, args) -> None:
        driver = self._context(loaded.index)
        meta = loaded.meta[kernel_index]
        values = []
        for param, raw in zip(meta["params"], args):
            if param["kind"] == "pointer":
                values.append(ctypes.c_uint64(raw & 0xFFFFFFFFFFFFFFFF))
            elif param["dtype"].startswith(("float", "bfloat")):
                values.append(_CTYPES[param["dtype"]](struct.unpack("<d", struct.pack("<q", raw))[0]))
            else:
                values.append(_CTYPES[param["dtype"]](raw))
        pointers = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
        stream = driver.CUstream(self._streams.get(loaded.index, 0))
        function = loaded.functions[kernel_index]
        params = ctypes.addressof(pointers)
        _check(driver, driver.cuLaunchKernel(function, *grid, *block, dyn_shared, stream, params, 0),
               f"launch {meta['name']} (grid {tuple(grid)}, block {tuple(block)})")


register_device_api("cuda", CUDADeviceAPI())

__all__ = ["CUDADeviceAPI"]
