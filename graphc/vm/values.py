"""The run-time values a VM register holds besides tensors: shapes, storage and data types.

Tensors are `graphc.runtime.Tensor`; Relax tuples are Python tuples; PrimValues are Python
ints, floats or bools; strings are `str`. A shape is a `ShapeTuple` (a tuple of ints that
knows it is a shape), a data type a `DataType` (a str that knows it is a data type), and
memory from the memory plan a `Storage`.

>>> ShapeTuple((2, 3))
ShapeTuple(2, 3)
>>> s = Storage.allocate(128, cpu())
>>> t = s.view(64, (4, 4), "float32")
>>> t.shape, t.data_ptr - s.ptr, t.data_ptr % 64
((4, 4), 64, 0)
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..errors import GraphcError
from ..runtime.device import ALIGNMENT, Device, cpu
from ..runtime.tensor import Tensor, _canonical_dtype

_uint8, _frombuffer, _ndarray, _np_empty = np.dtype("uint8"), np.frombuffer, np.ndarray, np.empty
_char, _addressof = ctypes.c_char, ctypes.addressof
_SMALL = 1 << 16  # host buffers up to this size come from ctypes (fast, zeroed); larger from numpy


class VMError(GraphcError, RuntimeError):
    """The VM could not run an instruction (a bad executable, or a builtin's failure)."""


class ShapeTuple(tuple):
    """A shape value: a tuple of ints (TVM's ShapeTuple)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ShapeTuple({', '.join(str(d) for d in self)})"


class DataType(str):
    """A data type used as a value (`R.dtype("float32")`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"DataType({str.__repr__(self)})"


class TensorSpec:
    """The metadata of a C-contiguous tensor of one shape and dtype, computed once and cached."""

    __slots__ = ("shape", "dtype", "np_dtype", "ndim", "size", "strides", "nbytes")

    def __init__(self, shape: tuple, dtype):
        self.dtype, self.np_dtype = _canonical_dtype(dtype, "alloc_tensor")
        self.shape = tuple(int(d) for d in shape)
        self.ndim = len(self.shape)
        if any(d < 0 for d in self.shape):
            raise ValueError(f"alloc_tensor: a {self.dtype} tensor cannot have the negative shape "
                             f"{self.shape} (a size computed when the model ran)")
        size, step, strides = 1, 1, []
        for d in reversed(self.shape):
            strides.append(step)
            step *= max(d, 1)  # as Tensor does: an empty tensor keeps the strides of a size-1 axis
            size *= d
        self.size = size
        self.strides = tuple(reversed(strides))
        self.nbytes = check_nbytes(size * self.np_dtype.itemsize,
                                   f"a {self.dtype} tensor of shape {self.shape}")


_INT64_MAX = (1 << 63) - 1
_MEMORY: list = []


def machine_memory() -> int:
    """Bytes of physical memory of this machine (the most one allocation can ever get)."""
    if not _MEMORY:
        import os

        try:
            _MEMORY.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError, AttributeError):  # no sysconf (Windows): only the int64 limit
            _MEMORY.append(_INT64_MAX)
    return _MEMORY[0]


def check_nbytes(nbytes: int, what: str) -> int:
    """`nbytes` if `what` can be allocated: ValueError when negative or past int64, MemoryError
    when larger than the machine's memory, before anything is allocated.

    >>> check_nbytes(1 << 70, "a float32 tensor of shape (2**68,)")
    Traceback (most recent call last):
      ...
    ValueError: a float32 tensor of shape (2**68,) needs 1180591620717411303424 bytes, past int64: ...
    """
    if nbytes < 0:
        raise ValueError(f"{what} needs {nbytes} bytes: a size computed when the model ran is negative")
    if nbytes > _INT64_MAX:
        raise ValueError(f"{what} needs {nbytes} bytes, past int64: a size computed when the model ran "
                         "overflows")
    if nbytes > machine_memory():
        raise MemoryError(f"{what} needs {nbytes} bytes, more than this machine's {machine_memory()} bytes "
                          "of memory")
    return nbytes


_SPECS: dict = {}


def tensor_spec(shape, dtype) -> TensorSpec:
    key = (tuple(shape), dtype)
    spec = _SPECS.get(key)
    if spec is None:
        spec = TensorSpec(shape, dtype)
        if len(_SPECS) < 4096:
            _SPECS[key] = spec
    return spec


def _make_tensor_factory():
    """`new_tensor(spec, device, ptr, array, storage)`: a Tensor without recomputing its metadata."""
    sets = {name: Tensor.__dict__[name].__set__ for name in Tensor.__slots__ if name != "__weakref__"}
    new = object.__new__
    set_shape, set_dtype, set_npd, set_dev = sets["shape"], sets["dtype"], sets["numpy_dtype"], sets["device"]
    set_ndim, set_size, set_strides, set_nbytes = sets["ndim"], sets["size"], sets["strides"], sets["nbytes"]
    set_ptr, set_aligned, set_array, set_storage = (sets["data_ptr"], sets["is_aligned"], sets["_array"],
                                                    sets["_storage"])

    def new_tensor(spec: TensorSpec, device: Device, ptr: int, array, storage=None) -> Tensor:
        t = new(Tensor)
        set_shape(t, spec.shape)
        set_dtype(t, spec.dtype)
        set_npd(t, spec.np_dtype)
        set_dev(t, device)
        set_ndim(t, spec.ndim)
        set_size(t, spec.size)
        set_strides(t, spec.strides)
        set_nbytes(t, spec.nbytes)
        set_ptr(t, ptr)
        set_aligned(t, ptr % ALIGNMENT == 0)
        set_array(t, array)
        set_storage(t, storage)
        return t

    return new_tensor


new_tensor = _make_tensor_factory()


def _pointer_reader():
    """`host_ptr(array)`: the data address of a numpy array, read from the array object itself.

    numpy's `PyArrayObject` starts with the object header and then the `data` pointer (the
    layout `PyArray_DATA` compiles against, so it is part of numpy's ABI). Reading it costs
    a tenth of `__array_interface__`, which builds a dict on every call. Checked here against
    `__array_interface__` on a few arrays; an interpreter where the layout differs gets the
    slow, sure way.
    """
    offset, read = object.__basicsize__, ctypes.c_void_p.from_address

    def fast(array) -> int:
        return read(id(array) + offset).value or 0

    def slow(array) -> int:
        return array.__array_interface__["data"][0]

    base = np.arange(64, dtype="float32")
    probes = [base, base[3:], base.reshape(8, 8)[2:], np.zeros((0,), "int8"), np.ones(())]
    return fast if all(fast(a) == slow(a) for a in probes) else slow


host_ptr = _pointer_reader()


def _host_buffer(nbytes: int):
    """(owner, address) of `nbytes` + `ALIGNMENT` bytes of fresh host memory."""
    if nbytes <= _SMALL:
        raw = (_char * (nbytes + ALIGNMENT))()
        return raw, _addressof(raw)
    raw = _np_empty(nbytes + ALIGNMENT, _uint8)  # not zeroed: large outputs are written anyway
    return raw, host_ptr(raw)


def host_tensor_allocator(shape, dtype, device: Device):
    """`alloc()`: a fresh, aligned, C-contiguous tensor of `shape` and `dtype`, metadata made once.

    The VM allocates the tensors a function returns with it: they are handed to the caller,
    so every call needs new memory, but nothing about them needs recomputing.

    >>> alloc = host_tensor_allocator((2, 3), "float32", cpu())
    >>> a, b = alloc(), alloc()
    >>> a.shape, a.dtype, a.data_ptr % 64, a.data_ptr != b.data_ptr
    ((2, 3), 'float32', 0, True)
    """
    spec = tensor_spec(shape, dtype)
    shape, nbytes, np_dtype = spec.shape, spec.nbytes, spec.np_dtype
    if device.device_type != "cpu":
        return lambda: Storage.allocate(nbytes, device).view(0, spec.shape, spec.dtype)
    if nbytes <= _SMALL:
        raw_type = _char * (nbytes + ALIGNMENT)

        def alloc() -> Tensor:
            raw = raw_type()
            address = _addressof(raw)
            start = -address % ALIGNMENT
            return new_tensor(spec, device, address + start, _ndarray(shape, np_dtype, raw, start))
    else:
        def alloc() -> Tensor:
            raw, address = _host_buffer(nbytes)
            start = -address % ALIGNMENT
            return new_tensor(spec, device, address + start, _ndarray(shape, np_dtype, raw, start))

    return alloc


_CPU0 = cpu(0)


def wrap_host_array(array: np.ndarray) -> Tensor | None:
    """`array` as a tensor sharing its memory when it is C-contiguous, native and aligned, else None.

    >>> x = np.asarray(host_tensor_allocator((4,), "int32", cpu())())
    >>> wrap_host_array(x).data_ptr == x.__array_interface__["data"][0]
    True
    >>> wrap_host_array(np.zeros((4, 4))[:, 1]) is None
    True
    """
    if not array.flags.c_contiguous or not array.dtype.isnative:
        return None
    ptr = host_ptr(array)
    if ptr % ALIGNMENT:
        return None
    key = (array.shape, array.dtype)
    spec = _SPECS.get(key)
    if spec is None:
        spec = tensor_spec(array.shape, array.dtype)
    return new_tensor(spec, _CPU0, ptr, array)


def copy_host_array(array: np.ndarray) -> Tensor:
    """A new aligned, C-contiguous, native-order host tensor holding a copy of `array`.

    >>> x = np.arange(6, dtype=">i4").reshape(2, 3)[:, ::2]
    >>> t = copy_host_array(x)
    >>> t.shape, t.dtype, t.data_ptr % 64, np.asarray(t).tolist()
    ((2, 2), 'int32', 0, [[0, 2], [3, 5]])
    """
    spec = tensor_spec(array.shape, array.dtype)
    raw, address = _host_buffer(spec.nbytes)
    start = -address % ALIGNMENT
    copy = _ndarray(spec.shape, spec.np_dtype, raw, start)
    np.copyto(copy, array)
    return new_tensor(spec, _CPU0, address + start, copy)


class Storage:
    """A block of device memory that tensors are carved from (`vm.builtin.alloc_storage`).

    `views` caches the tensors made from this storage by each allocation site, for storage
    the VM keeps across calls (`reused`): their offsets, shapes and dtypes never change.
    """

    __slots__ = ("device", "nbytes", "ptr", "array", "allocation", "views", "reused")

    def __init__(self, device: Device, nbytes: int, ptr: int, array, allocation, reused: bool = False):
        self.device = device
        self.nbytes = nbytes
        self.ptr = ptr
        self.array = array  # host memory as a uint8 numpy array (None on other devices)
        self.allocation = allocation
        self.views: dict = {}
        self.reused = reused

    @classmethod
    def allocate(cls, nbytes: int, device: Device, reused: bool = False) -> Storage:
        nbytes = check_nbytes(int(nbytes), "alloc_storage")
        if device.device_type == "cpu":  # host memory, 64-byte aligned, without numpy's slow pointer query
            raw, address = _host_buffer(nbytes)
            start = (-address) % ALIGNMENT
            return cls(device, nbytes, address + start, _frombuffer(raw, _uint8)[start:start + nbytes], raw,
                       reused)
        allocation = device.api.alloc(device.index, max(nbytes, 1), ALIGNMENT)
        return cls(device, nbytes, allocation.ptr, None, allocation, reused)

    def view(self, offset: int, shape, dtype) -> Tensor:
        """The tensor of `shape` and `dtype` at byte `offset` (no copy)."""
        spec = tensor_spec(shape, dtype)
        nbytes = spec.nbytes
        if offset < 0 or offset + nbytes > self.nbytes:
            raise VMError(f"alloc_tensor: a {spec.dtype} tensor of shape {spec.shape} at offset {offset} "
                          f"needs {offset + nbytes} bytes, but its storage has {self.nbytes}")
        if self.array is not None:
            array = _ndarray(spec.shape, spec.np_dtype, self.array, offset)
            return new_tensor(spec, self.device, self.ptr + offset, array)
        return new_tensor(spec, self.device, self.ptr + offset, None, self)

    def __repr__(self) -> str:
        return f"<Storage {self.nbytes} bytes on {self.device}>"


def reshape_view(tensor: Tensor, shape) -> Tensor:
    """`tensor` seen with another shape of the same size, sharing memory (C-contiguous only)."""
    shape = tuple(int(d) for d in shape)
    size = 1
    for d in shape:
        size *= d
    if size != tensor.size:
        raise ValueError(f"reshape: cannot view a tensor of shape {tensor.shape} ({tensor.size} elements) "
                         f"as shape {shape} ({size} elements)")
    array = tensor._array
    if array is not None:
        view = array.reshape(shape)
        if view.base is None or not view.flags.c_contiguous:  # reshape had to copy: keep it honest
            view = array.copy().reshape(shape)
            return Tensor._make(tensor.device, shape, tensor.numpy_dtype, tensor.dtype,
                                view.__array_interface__["data"][0], view, None)
        return Tensor._make(tensor.device, shape, tensor.numpy_dtype, tensor.dtype, tensor.data_ptr,
                            view, None)
    return Tensor._make(tensor.device, shape, tensor.numpy_dtype, tensor.dtype, tensor.data_ptr, None,
                        tensor._storage)


__all__ = ["DataType", "ShapeTuple", "Storage", "TensorSpec", "VMError", "check_nbytes", "cpu",
           "machine_memory", "new_tensor", "reshape_view", "tensor_spec"]
