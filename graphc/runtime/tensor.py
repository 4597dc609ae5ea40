"""`Tensor`, graphc's n-dimensional array on a device, and the functions that create one.

Host memory for every tensor graphc allocates starts at a 64-byte boundary and is
C-contiguous. A CPU tensor keeps its data in a numpy array, so ``np.asarray(t)`` and
DLPack export are zero-copy; ``t.numpy()`` returns a copy, as TVM's does.

>>> a = tensor([[1, 2], [3, 4]], dtype="int32")
>>> a.shape, a.dtype, a.device, a.strides
((2, 2), 'int32', cpu(0), (2, 1))
>>> a.data_ptr % 64
0
>>> print(a)
[[1 2]
 [3 4]]
"""

from __future__ import annotations

import numpy as np

from ..errors import DataTypeError, DeviceError
from ..ir.dtype import canonical, to_numpy_dtype
from .device import ALIGNMENT, Device, cpu

_CPU0 = cpu(0)
_SUPPORTED = "bool, int8/16/32/64, uint8/16/32/64, float16, bfloat16, float32, float64"


_DTYPE_CACHE: dict = {}


def _canonical_dtype(spec, where: str) -> tuple[str, np.dtype]:
    """The canonical dtype string and numpy dtype of `spec`, or a DataTypeError naming it."""
    try:
        return _DTYPE_CACHE[spec]
    except (KeyError, TypeError):
        pass
    resolved = _resolve_dtype(spec, where)
    try:
        _DTYPE_CACHE[spec] = resolved
    except TypeError:  # an unhashable spec: fine, just not cached
        pass
    return resolved


def _resolve_dtype(spec, where: str) -> tuple[str, np.dtype]:
    try:
        name = canonical(spec)
        if "x" in name or name == "handle":
            raise DataTypeError(f"{name} is not a tensor element type")
        return name, to_numpy_dtype(name)
    except DataTypeError as err:
        shown = spec if isinstance(spec, str) else str(np.dtype(spec) if _is_np_dtype(spec) else spec)
        raise DataTypeError(
            f"{where}: unsupported dtype {shown!r}; graphc tensors hold {_SUPPORTED}"
        ) from err


def _is_np_dtype(spec) -> bool:
    try:
        np.dtype(spec)
    except TypeError:
        return False
    return True


class Tensor:
    """An n-dimensional array on a `Device`; its metadata is read-only and stored, not computed.

    Attributes: ``shape`` (tuple of ints), ``dtype`` (canonical string), ``device``, ``ndim``,
    ``size``, ``strides`` (in elements), ``nbytes``, ``data_ptr`` (address of the first
    element) and ``is_aligned`` (whether ``data_ptr`` is a multiple of 64: always true for
    tensors graphc allocates, possibly false for a zero-copy `from_dlpack`).
    """

    __slots__ = (
        "shape", "dtype", "device", "ndim", "size", "strides", "nbytes", "data_ptr", "is_aligned",
        "numpy_dtype", "_array", "_storage", "__weakref__",
    )  # fmt: skip

    def __init__(self, *args, **kwargs):
        raise TypeError("create tensors with graphc.runtime.tensor(), empty() or from_dlpack()")

    @classmethod
    def _make(cls, device: Device, shape, np_dtype, dtype: str, ptr: int, array, storage) -> Tensor:
        self = object.__new__(cls)
        put = object.__setattr__
        shape = tuple(int(d) for d in shape)
        size = 1
        for d in shape:
            size *= d
        strides, step = [], 1
        for d in reversed(shape):
            strides.append(step)
            step *= max(d, 1)
        if array is not None and array.ndim and size:
            strides = [s // array.itemsize for s in reversed(array.strides)]
        put(self, "shape", shape)
        put(self, "dtype", dtype)
        put(self, "numpy_dtype", np_dtype)
        put(self, "device", device)
        put(self, "ndim", len(shape))
        put(self, "size", size)
        put(self, "strides", tuple(reversed(strides)))
        put(self, "nbytes", size * np_dtype.itemsize)
        put(self, "data_ptr", ptr)
        put(self, "is_aligned", ptr % ALIGNMENT == 0)
        put(self, "_array", array)
        put(self, "_storage", storage)
        return self

    @classmethod
    def _from_host_array(cls, array: np.ndarray, device: Device | None = None) -> Tensor:
        """Wrap a C-contiguous host array without copying (it becomes the tensor's storage)."""
        dtype, np_dtype = _canonical_dtype(array.dtype, "tensor")
        ptr = array.__array_interface__["data"][0]
        return cls._make(device or _CPU0, array.shape, np_dtype, dtype, ptr, array, None)

    def __setattr__(self, name, value):
        raise AttributeError(f"Tensor.{name} is read-only; use copyfrom() to change the data")

    def __reduce__(self):
        # Pickling (and copy.copy) stores the data and the device; loading allocates afresh.
        return (tensor, (self.numpy(), self.device, self.dtype))

    # -- data movement ---------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """A copy of the data as a numpy array.

        >>> tensor([1.5, 2.0]).numpy()
        array([1.5, 2. ])
        """
        if self._array is not None:
            return self._array.copy()
        host = np.empty(self.shape, dtype=self.numpy_dtype)
        if self.size:
            self.device.api.copy_to_host(self.data_ptr, host, self.device.index)
        return host

    asnumpy = numpy

    def copyfrom(self, source) -> Tensor:
        """Overwrite the data with `source` (a Tensor, numpy array or nested list); returns self.

        Lists and scalars are converted to this tensor's dtype; arrays and tensors must match
        its shape and dtype exactly (ValueError otherwise).

        >>> a = empty((2,), "int32")
        >>> a.copyfrom([7, 8]).numpy()
        array([7, 8], dtype=int32)
        """
        if isinstance(source, Tensor):
            self._check_same(source.shape, source.dtype, "copyfrom")
            if source.device == self.device and source._array is not None and self._array is not None:
                np.copyto(self._array, source._array)
                return self
            source = source.numpy()
        elif isinstance(source, np.ndarray):
            self._check_same(source.shape, _canonical_dtype(source.dtype, "copyfrom")[0], "copyfrom")
        else:
            source = np.asarray(source, dtype=self.numpy_dtype)
            self._check_same(source.shape, self.dtype, "copyfrom")
        if self._array is not None:
            np.copyto(self._array, source)
        elif self.size:
            self.device.api.copy_from_host(np.ascontiguousarray(source), self.data_ptr, self.device.index)
        return self

    def __setitem__(self, index, value) -> None:
        """`t[:] = value`: overwrite the whole tensor (TVM's only form of item assignment)."""
        if not (isinstance(index, slice) and index == slice(None)):
            raise ValueError("Tensor supports only whole assignment `t[:] = value`; use .numpy() to edit a "
                             "copy")
        self.copyfrom(value)

    def copyto(self, target: Device | Tensor) -> Tensor:
        """Copy into a new tensor on device `target`, or into the tensor `target`; returns the copy.

        >>> a = tensor([1, 2], dtype="int8")
        >>> b = empty((2,), "int8")
        >>> a.copyto(b) is b, a.copyto(cpu()).numpy()
        (True, array([1, 2], dtype=int8))
        """
        if isinstance(target, Tensor):
            return target.copyfrom(self)
        if isinstance(target, Device):
            return empty(self.shape, self.dtype, target).copyfrom(self)
        raise TypeError(f"copyto expects a Device or a Tensor, got {type(target).__name__}")

    def _check_same(self, shape, dtype: str, op: str) -> None:
        if tuple(shape) != self.shape:
            raise ValueError(
                f"{op}: shape mismatch, expected {self.shape} (this tensor), got {tuple(shape)}"
            )
        if dtype != self.dtype:
            raise ValueError(
                f"{op}: dtype mismatch, expected {self.dtype} (this tensor), got {dtype}; "
                f"convert the source first, e.g. with .astype('{self.dtype}')"
            )

    # -- interoperability -------------------------------------------------------------------

    def __array__(self, dtype=None, copy=None):
        if self._array is None:
            array = self.numpy()
        elif copy:
            array = self._array.copy()
        else:
            array = self._array
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError(f"cannot convert a {self.dtype} tensor to {dtype} without copying")
            array = array.astype(dtype)
        return array

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from .dlpack import export_capsule

        return export_capsule(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device.dlpack_code, self.device.index)

    def to_dlpack(self):
        """A DLPack capsule sharing this tensor's memory (legacy, unversioned)."""
        return self.__dlpack__()

    # -- printing ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<graphc.Tensor shape={self.shape}, {self.device}>\n{self.numpy()!r}"

    def __str__(self) -> str:
        return str(self._array if self._array is not None else self.numpy())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]


def _device_of(device) -> Device:
    if device is None:
        return _CPU0
    if isinstance(device, Device):
        return device
    from .device import device as make_device

    return make_device(device)


def empty(shape, dtype="float32", device: Device | str | None = None) -> Tensor:
    """An uninitialized, C-contiguous tensor whose memory starts at a 64-byte boundary.

    >>> t = empty((3, 5), "float16")
    >>> t.shape, t.dtype, t.nbytes, t.data_ptr % 64
    ((3, 5), 'float16', 30, 0)
    """
    device = _device_of(device)
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for d in shape:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
            raise ValueError(f"empty: shape {shape} has an invalid dimension {d!r}; expected ints >= 0")
    name, np_dtype = _canonical_dtype(dtype, "empty")
    nbytes = np_dtype.itemsize
    for d in shape:
        nbytes *= int(d)
    api = device.api
    if not api.exist(device.index):
        if device.device_type != "cpu":
            api.alloc(device.index, nbytes)  # an unregistered back end raises its own explanation
        raise DeviceError(
            f"empty: device {device!r} does not exist: its back end ({type(api).__name__}) reports "
            f"no device with index {device.index}"
        )
    allocation = api.alloc(device.index, nbytes, ALIGNMENT)
    if device.device_type == "cpu":
        array = allocation.array.view(np_dtype).reshape(shape)
        return Tensor._make(device, shape, np_dtype, name, allocation.ptr, array, None)
    return Tensor._make(device, shape, np_dtype, name, allocation.ptr, None, allocation)


def tensor(data, device: Device | str | None = None, dtype=None) -> Tensor:
    """A new tensor holding a copy of `data` (numpy array, Tensor, torch tensor, list or scalar).

    `dtype` defaults to the data's own (numpy's inference for lists: int64, float64, bool).

    >>> tensor(np.arange(3, dtype="float32"))
    <graphc.Tensor shape=(3,), cpu:0>
    array([0., 1., 2.], dtype=float32)
    >>> tensor([1, 2], dtype="bfloat16").dtype
    'bfloat16'
    """
    device = _device_of(device)
    if isinstance(data, Tensor):
        if dtype is None or _canonical_dtype(dtype, "tensor")[0] == data.dtype:
            return data.copyto(device)
        data = data.numpy()
    if dtype is not None:
        name, np_dtype = _canonical_dtype(dtype, "tensor")
        array = np.asarray(data, dtype=np_dtype) if not _is_torch(data) else _torch_to_numpy(data, np_dtype)
    else:
        array = _torch_to_numpy(data, None) if _is_torch(data) else np.asarray(data)
        name, np_dtype = _canonical_dtype(array.dtype, "tensor")
    result = empty(array.shape, name, device)
    return result.copyfrom(array)


def _is_torch(data) -> bool:
    return type(data).__module__.startswith("torch")


def _torch_to_numpy(data, np_dtype) -> np.ndarray:
    from .dlpack import from_dlpack

    array = from_dlpack(data.detach().contiguous().cpu())._array
    return array if np_dtype is None else array.astype(np_dtype)
