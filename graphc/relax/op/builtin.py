"""`relax.builtin.alloc_tensor`: allocate a tensor on a device (registered in `memory.py`).

`CallTIRRewrite` allocates the outputs of `call_tir` with it; the script spelling is
`R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))`.

>>> from graphc import relax
>>> call = alloc_tensor((2, 3), "float32", 0)
>>> call
R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
>>> relax.BlockBuilder().normalize(call).struct_info
R.Tensor((2, 3), dtype="float32")
"""

from __future__ import annotations

from ..expr import Call
from .memory import as_dtype, as_prim, as_shape, as_str
from .registry import Op


def alloc_tensor(shape, dtype, runtime_device_index=0, storage_scope="global") -> Call:
    """`R.builtin.alloc_tensor(shape, dtype, runtime_device_index, storage_scope)`."""
    return Call(Op.get("relax.builtin.alloc_tensor"),
                [as_shape(shape), as_dtype(dtype), as_prim(runtime_device_index), as_str(storage_scope)])


def stop_lift_params(x) -> Call:
    """`R.builtin.stop_lift_params(x)`: `x`, marking where parameter lifting stops."""
    return Call(Op.get("relax.builtin.stop_lift_params"), [x])


__all__ = ["alloc_tensor", "stop_lift_params"]
