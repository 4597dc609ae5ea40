"""The OpenCL back end of the runtime, on pyopencl: devices, memory, programs and launches.

`graphc.opencl(i)` is the i-th OpenCL device of all platforms (GPUs first, then the others;
on a machine without a GPU, PoCL's CPU device). Each device gets one context and one
in-order queue; programs are built once per source and device and cached.

OpenCL memory is a `cl.Buffer`, which has no address. A graphc tensor on OpenCL still has an
integer `data_ptr`: a *virtual address* whose high bits name the allocation and whose low 40
bits are a byte offset into it, so views (a tensor inside the VM's storage) work as on the
other devices. Kernels take each pointer as a buffer and a byte offset.

Importing this module never fails: without pyopencl or without an OpenCL platform the device
reports that it does not exist, and using it raises a `DeviceError` naming what is missing.
"""

from __future__ import annotations

import hashlib
import struct
import threading

import numpy as np

from ..errors import DeviceError
from .device import ALIGNMENT, DeviceAPI, register_device_api

_OFFSET_BITS = 40
_OFFSET_MASK = (1 << _OFFSET_BITS) - 1
_SCALAR_TYPES = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
                 "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.int32}


def _import_pyopencl():
    try:
        import pyopencl
    except ImportError as err:
        raise DeviceError("OpenCL is not available: the Python package pyopencl is not installed "
                          "(pip install 'graphc[opencl]')") from err
    return pyopencl


class _Allocation:
    """A cl.Buffer with a virtual address; the slot is released when this is collected."""

    __slots__ = ("api", "slot", "buffer", "ptr", "nbytes", "index", "__weakref__")

    def __init__(self, api, slot: int, buffer, nbytes: int, index: int):
        self.api, self.slot, self.buffer, self.nbytes, self.index = api, slot, buffer, nbytes, index
        self.ptr = (slot + 1) << _OFFSET_BITS

    def __del__(self):
        api = self.api
        if api is not None:
            api._release(self.slot)


class _DeviceState:
    def __init__(self, cl, device):
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(self.context)
        self.max_work_group_size = device.max_work_group_size
        self.lock = threading.Lock()


class _LoadedProgram:
    """A module's OpenCL program built for one device: its kernels and how to set their arguments."""

    def __init__(self, state: _DeviceState, program, kernels: list):
        cl = _import_pyopencl()
        self.state, self.program, self.meta = state, program, kernels
        self.kernels = [cl.Kernel(program, k["name"]) for k in kernels]


class OpenCLDeviceAPI(DeviceAPI):
    """OpenCL devices through pyopencl."""

    device_type = "opencl"

    def __init__(self):
        self._lock = threading.Lock()
        self._devices: list | None = None
        self._problem: str | None = None
        self._states: dict = {}
        self._buffers: dict = {}  # slot -> cl.Buffer
        self._free_slots: list = []
        self._next_slot = 0
        self._programs: dict = {}

    # -- devices -----------------------------------------------------------------------------------
    def _enumerate(self) -> list:
        if self._devices is not None:
            return self._devices
        with self._lock:
            if self._devices is not None:
                return self._devices
            devices: list = []
            try:
                cl = _import_pyopencl()
                try:
                    platforms = cl.get_platforms()
                except cl.Error as err:  # no ICD or no platform installed
                    platforms = []
                    self._problem = f"no OpenCL platform is installed ({err}); on a machine without a GPU " \
                                    "install PoCL (apt-get install pocl-opencl-icd)"
                for platform in platforms:
                    devices.extend(platform.get_devices())
                gpu = cl.device_type.GPU
                devices.sort(key=lambda d: 0 if d.type & gpu else 1)
                if not devices and self._problem is None:
                    self._problem = "the OpenCL platforms report no device; on a machine without a GPU " \
                                    "install PoCL (apt-get install pocl-opencl-icd)"
            except DeviceError as err:
                self._problem = str(err)
            self._devices = devices
            return devices

    def exist(self, index: int) -> bool:
        return 0 <= index < len(self._enumerate())

    def _state(self, index: int) -> _DeviceState:
        state = self._states.get(index)
        if state is not None:
            return state
        devices = self._enumerate()
        if not 0 <= index < len(devices):
            if self._problem:
                raise DeviceError(f"OpenCL is not available: {self._problem}")
            raise DeviceError(f"there is no OpenCL device {index}: this machine has {len(devices)} "
                              f"({', '.join(d.name.strip() for d in devices)})")
        with self._lock:
            state = self._states.get(index)
            if state is None:
                state = self._states[index] = _DeviceState(_import_pyopencl(), devices[index])
        return state

    def device_name(self, index: int) -> str:
        return self._state(index).device.name.strip()

    # -- memory ----------------------------------------------------------------------------------
    def alloc(self, index: int, nbytes: int, alignment: int = ALIGNMENT) -> _Allocation:
        cl = _import_pyopencl()
        state = self._state(index)
        buffer = cl.Buffer(state.context, cl.mem_flags.READ_WRITE, size=max(int(nbytes), 1))
        with self._lock:
            slot = self._free_slots.pop() if self._free_slots else self._new_slot()
            self._buffers[slot] = (buffer, index)
        return _Allocation(self, slot, buffer, int(nbytes), index)

    def _new_slot(self) -> int:
        slot = self._next_slot
        self._next_slot += 1
        return slot

    def _release(self, slot: int) -> None:
        with self._lock:
            if self._buffers.pop(slot, None) is not None:
                self._free_slots.append(slot)

    def free(self, allocation) -> None:
        self._release(allocation.slot)
        allocation.api = None
        allocation.buffer = None

    def resolve(self, ptr: int):
        """(cl.Buffer, byte offset, device index) of the virtual address `ptr`."""
        slot = (ptr >> _OFFSET_BITS) - 1
        entry = self._buffers.get(slot)
        if entry is None:
            raise DeviceError(f"address {ptr:#x} is not OpenCL memory graphc allocated (freed already?)")
        return entry[0], ptr & _OFFSET_MASK, entry[1]

    def copy_from_host(self, host: np.ndarray, dst_ptr: int, index: int) -> None:
        cl = _import_pyopencl()
        buffer, offset, _ = self.resolve(dst_ptr)
        cl.enqueue_copy(self._state(index).queue, buffer, np.ascontiguousarray(host), dst_offset=offset,
                        is_blocking=True)

    def copy_to_host(self, src_ptr: int, host: np.ndarray, index: int) -> None:
        cl = _import_pyopencl()
        buffer, offset, _ = self.resolve(src_ptr)
        cl.enqueue_copy(self._state(index).queue, host, buffer, src_offset=offset, is_blocking=True)

    def synchronize(self, index: int) -> None:
        self._state(index).queue.finish()

    # -- kernels ---------------------------------------------------------------------------------
    def load_code(self, index: int, code) -> _LoadedProgram:
        """Build `code` (a DeviceCode of OpenCL C) for device `index`, once per source and device."""
        if code.kind != "opencl":
            raise DeviceError(f"an OpenCL device cannot run {code.kind} code")
        cl = _import_pyopencl()
        state = self._state(index)
        key = (hashlib.sha256(code.source.encode()).hexdigest(), index)
        loaded = self._programs.get(key)
        if loaded is None:
            try:
                program = cl.Program(state.context, code.source).build()
            except cl.Error as err:
                raise DeviceError(f"the OpenCL driver could not build the generated program: {err}") from err
            loaded = self._programs[key] = _LoadedProgram(state, program, code.kernels)
        return loaded

    def launch(self, loaded: _LoadedProgram, kernel_index: int, grid, block, dyn_shared: int, args) -> None:
        cl = _import_pyopencl()
        state = loaded.state
        kernel, meta = loaded.kernels[kernel_index], loaded.meta[kernel_index]
        threads = block[0] * block[1] * block[2]
        if threads > state.max_work_group_size:
            raise DeviceError(f"{meta['name']} needs {threads} threads per work-group, more than OpenCL "
                              f"device {state.device.name.strip()!r} allows ({state.max_work_group_size}); "
                              "build for "
                              f"'opencl -max_num_threads={state.max_work_group_size}'")
        values = []
        for param, raw in zip(meta["params"], args):
            if param["kind"] == "pointer":
                buffer, offset, _ = self.resolve(raw)
                values += [buffer, np.uint64(offset)]
            elif param["dtype"].startswith(("float", "bfloat")):
                value = struct.unpack("<d", struct.pack("<q", raw))[0]
                values.append(np.float64(value) if param["dtype"] == "float64" else np.float32(value))
            else:
                values.append(_SCALAR_TYPES[param["dtype"]](raw))
        global_size = tuple(g * b for g, b in zip(grid, block))
        with state.lock:  # argument slots of a kernel object are shared by every caller
            kernel.set_args(*values)
            cl.enqueue_nd_range_kernel(state.queue, kernel, global_size, tuple(block))


register_device_api("opencl", OpenCLDeviceAPI())

__all__ = ["OpenCLDeviceAPI"]
