"""DLPack exchange: share tensor memory with numpy, PyTorch and any other DLPack library.

Export (``Tensor.__dlpack__``) delegates to numpy for the dtypes numpy's DLPack knows and
builds the capsule itself (with ctypes) for the rest (bfloat16) and for CUDA tensors.
Import (`from_dlpack`) shares memory when the source lives on the CPU and is C-contiguous
and writable, and copies into a fresh 64-byte aligned tensor otherwise. CUDA memory (a
`torch.cuda` tensor) is shared without a copy: the tensor lands on `graphc.cuda(i)`.
OpenCL tensors have no DLPack form (their addresses are graphc's own).

>>> import numpy as np
>>> source = np.arange(4, dtype="float32")
>>> t = from_dlpack(source)
>>> source[0] = 9.0
>>> t.numpy()
array([9., 1., 2., 3.], dtype=float32)
>>> np.from_dlpack(t).ctypes.data == t.data_ptr  # and back, zero-copy
True
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..errors import DeviceError
from .device import Device, kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL
from .tensor import Tensor, _canonical_dtype, empty

kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6
_CODE_OF_KIND = {"i": kDLInt, "u": kDLUInt, "f": kDLFloat, "b": kDLBool}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


# A private handle on the C API, so our argtypes never clash with other users of ctypes.pythonapi.
_api = ctypes.PyDLL(None)
_NAME, _USED_NAME = b"dltensor", b"used_dltensor"
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _api)
)
_capsule_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api)
)
_capsule_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api)
)
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api)
)
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api)
)
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _api)
)

# Managed tensors we exported and whose consumer has not called the deleter yet:
# address -> (the DLManagedTensor, its shape/strides arrays, the owner keeping memory alive).
_LIVE: dict[int, tuple] = {}


@_Deleter
def _delete_managed(address):
    _LIVE.pop(address, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # An unconsumed capsule still owns its tensor; a consumed one was renamed "used_dltensor".
    if _capsule_is_valid_raw(capsule, _NAME):
        _delete_managed(_capsule_pointer_raw(capsule, _NAME))


def make_capsule(owner, ptr: int, shape, strides, dtype: str, device_code: int, device_id: int):
    """A legacy ("dltensor") DLPack capsule describing memory at `ptr` that `owner` keeps alive.

    `strides` are in elements. The capsule's deleter releases `owner`.
    """
    from ..ir.dtype import DataType

    dt = DataType(dtype)
    code = kDLBfloat if dt.code == "bfloat" else {"int": kDLInt, "uint": kDLUInt, "float": kDLFloat,
                                                  "bool": kDLBool}[dt.code]  # fmt: skip
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*strides)
    managed = DLManagedTensor()
    managed.dl_tensor.data = ptr
    managed.dl_tensor.device = DLDevice(device_code, device_id)
    managed.dl_tensor.ndim = ndim
    managed.dl_tensor.dtype = DLDataType(code, max(dt.bits, 8), 1)
    managed.dl_tensor.shape = shape_arr
    managed.dl_tensor.strides = strides_arr
    managed.dl_tensor.byte_offset = 0
    managed.deleter = _delete_managed
    address = ctypes.addressof(managed)
    _LIVE[address] = (managed, shape_arr, strides_arr, owner)
    return _capsule_new(address, _NAME, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


def export_capsule(tensor: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The capsule behind ``Tensor.__dlpack__``; `copy=True` or a CPU `dl_device` exports a copy."""
    here = (tensor.device.dlpack_code, tensor.device.index)
    if dl_device is not None and tuple(dl_device) != here:
        if tuple(dl_device)[0] != kDLCPU or copy is False:
            raise BufferError(f"__dlpack__: cannot export a tensor on {tensor.device} to device {dl_device}")
        copy = True
    if tensor._array is None and not copy:
        if tensor.device.dlpack_code == kDLOpenCL:
            raise BufferError("__dlpack__: OpenCL tensors cannot be exported through DLPack; copy to the CPU "
                              "with .numpy() or .copyto(graphc.cpu())")
        tensor.device.sync()  # the consumer may use another stream: finish our work first
        return make_capsule(tensor, tensor.data_ptr, tensor.shape, tensor.strides, tensor.dtype,
                            *here)  # fmt: skip
    array = tensor.numpy() if copy else tensor._array
    if array.dtype.kind in _CODE_OF_KIND:
        kwargs = {"stream": stream}
        if max_version is not None:
            kwargs["max_version"] = max_version
        return array.__dlpack__(**kwargs)
    host = Tensor._from_host_array(array)
    return make_capsule(array, host.data_ptr, host.shape, host.strides, host.dtype, kDLCPU, 0)


class _ArrayView:
    """Presents external memory to numpy through the array interface; keeps `owner` alive."""

    def __init__(self, interface: dict, owner):
        self.__array_interface__ = interface
        self.owner = owner


class _ImportedTensor:
    """Owns a consumed DLManagedTensor and calls its deleter when collected."""

    def __init__(self, address: int):
        self.address = address

    def __del__(self):
        managed = DLManagedTensor.from_address(self.address)
        if managed.deleter:
            managed.deleter(self.address)


def _array_from_capsule(capsule) -> np.ndarray:
    """A numpy array sharing the memory of a legacy CPU DLPack capsule (any dtype, bfloat16 too)."""
    if not _capsule_is_valid(capsule, _NAME):
        raise TypeError("from_dlpack: expected an unconsumed 'dltensor' capsule")
    address = _capsule_pointer(capsule, _NAME)
    dl = DLManagedTensor.from_address(address).dl_tensor
    if dl.device.device_type not in (kDLCPU, kDLCUDAHost):
        raise DeviceError(f"from_dlpack: the capsule's memory is on DLPack device {dl.device.device_type}, "
                          "not the CPU")  # fmt: skip
    code, bits, lanes = dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
    names = {kDLInt: "int", kDLUInt: "uint", kDLFloat: "float", kDLBfloat: "bfloat"}
    if lanes != 1 or (code not in names and code != kDLBool):
        raise TypeError(f"from_dlpack: unsupported DLPack dtype code={code} bits={bits} lanes={lanes}")
    _, np_dtype = _canonical_dtype("bool" if code == kDLBool else f"{names[code]}{bits}", "from_dlpack")
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    itemsize = np_dtype.itemsize
    if dl.strides:
        strides = tuple(dl.strides[i] * itemsize for i in range(dl.ndim))
    else:
        strides = None
    _capsule_set_name(capsule, _USED_NAME)
    owner = _ImportedTensor(address)
    interface = {
        "shape": shape,
        "typestr": f"|u{itemsize}" if itemsize == 1 else f"<u{itemsize}",
        "data": ((dl.data or 0) + dl.byte_offset, False),
        "strides": strides,
        "version": 3,
    }
    return np.asarray(_ArrayView(interface, owner)).view(np_dtype)


def _cuda_tensor_from_capsule(capsule) -> Tensor:
    """A graphc CUDA tensor sharing the memory of a consumed CUDA DLPack capsule."""
    if not _capsule_is_valid(capsule, _NAME):
        raise TypeError("from_dlpack: expected an unconsumed 'dltensor' capsule")
    address = _capsule_pointer(capsule, _NAME)
    dl = DLManagedTensor.from_address(address).dl_tensor
    code, bits, lanes = dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
    names = {kDLInt: "int", kDLUInt: "uint", kDLFloat: "float", kDLBfloat: "bfloat"}
    if lanes != 1 or (code not in names and code != kDLBool):
        raise TypeError(f"from_dlpack: unsupported DLPack dtype code={code} bits={bits} lanes={lanes}")
    dtype, np_dtype = _canonical_dtype("bool" if code == kDLBool else f"{names[code]}{bits}", "from_dlpack")
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    if dl.strides:
        step = 1
        for dim, stride in zip(reversed(shape), reversed([dl.strides[i] for i in range(dl.ndim)])):
            if dim != 1 and stride != step:
                raise DeviceError("from_dlpack: the CUDA tensor is not contiguous; pass .contiguous()")
            step *= dim
    _capsule_set_name(capsule, _USED_NAME)
    owner = _ImportedTensor(address)
    return Tensor._make(Device("cuda", dl.device.device_id), shape, np_dtype, dtype,
                        (dl.data or 0) + dl.byte_offset, None, owner)


def _is_capsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule"


def from_dlpack(obj) -> Tensor:
    """A Tensor sharing `obj`'s memory (a torch tensor, numpy array, DLPack capsule or producer).

    Memory is shared when the source is on the CPU, C-contiguous and writable; otherwise the
    data are copied into a new aligned tensor. A shared tensor may start at an address that
    is not 64-byte aligned: check ``is_aligned``.

    >>> import numpy as np
    >>> from_dlpack(np.arange(6).reshape(2, 3).T).strides  # a transposed source is copied
    (2, 1)
    """
    if isinstance(obj, Tensor):
        return obj if obj._array is None else Tensor._from_host_array(obj._array, obj.device)
    if isinstance(obj, np.ndarray):
        array = obj
    elif _is_capsule(obj):
        array = _array_from_capsule(obj)
    elif hasattr(obj, "__dlpack__"):
        code, index = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (kDLCPU, 0)
        if code == kDLCUDA:
            return _cuda_tensor_from_capsule(obj.__dlpack__(stream=1))  # 1: the legacy default stream
        if code not in (kDLCPU, kDLCUDAHost):
            raise DeviceError(
                f"from_dlpack: the source is on DLPack device type {code} (index {index}); graphc imports "
                "CPU and CUDA memory; move it to the CPU first"
            )
        try:
            array = np.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError):
            array = _array_from_capsule(obj.__dlpack__())  # dtypes numpy cannot import (bfloat16)
    else:
        raise TypeError(
            f"from_dlpack expects an object with __dlpack__, a DLPack capsule or a numpy array, "
            f"got {type(obj).__name__}"
        )
    dtype, _ = _canonical_dtype(array.dtype, "from_dlpack")
    if array.flags.c_contiguous and array.flags.writeable:
        return Tensor._from_host_array(array)
    return empty(array.shape, dtype).copyfrom(np.ascontiguousarray(array))
