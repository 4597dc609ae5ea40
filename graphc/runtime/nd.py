"""TVM-style ``nd`` namespace: ``graphc.nd.array``, ``graphc.nd.empty``, ``graphc.nd.NDArray``.

>>> from graphc.runtime import nd
>>> a = nd.array([0.0, 1.0, 2.0], dtype="float32")
>>> print(a)
[0. 1. 2.]
>>> isinstance(a, nd.NDArray), nd.empty((2, 2), "int8").shape
(True, (2, 2))
"""

from .device import Device, cpu, cuda, device, opencl
from .dlpack import from_dlpack
from .tensor import Tensor, empty, tensor

array = tensor
NDArray = Tensor

__all__ = ["Device", "NDArray", "Tensor", "array", "cpu", "cuda", "device", "empty", "from_dlpack", "opencl"]
