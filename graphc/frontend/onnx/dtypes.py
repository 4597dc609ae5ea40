"""ONNX element types and graphc dtypes, both ways, with the numpy dtype of each.

>>> from onnx import TensorProto
>>> graphc_dtype(TensorProto.FLOAT), graphc_dtype(TensorProto.BOOL)
('float32', 'bool')
>>> onnx_elem_type("int64") == TensorProto.INT64
True
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ...errors import FrontendError

_TO_GRAPHC = {
    TensorProto.FLOAT: "float32",
    TensorProto.DOUBLE: "float64",
    TensorProto.FLOAT16: "float16",
    TensorProto.BFLOAT16: "bfloat16",
    TensorProto.INT8: "int8",
    TensorProto.INT16: "int16",
    TensorProto.INT32: "int32",
    TensorProto.INT64: "int64",
    TensorProto.UINT8: "uint8",
    TensorProto.UINT16: "uint16",
    TensorProto.UINT32: "uint32",
    TensorProto.UINT64: "uint64",
    TensorProto.BOOL: "bool",
}
_TO_ONNX = {v: k for k, v in _TO_GRAPHC.items()}

# Narrow types graphc holds in a wider storage dtype: the float formats as their uint8 bit
# patterns (decoded and encoded by relax.decode_float / encode_float), the small integers as
# their values in int8 / uint8. element type: (format name, storage dtype)
NARROW = {
    TensorProto.FLOAT8E4M3FN: ("float8_e4m3fn", "uint8"),
    TensorProto.FLOAT8E4M3FNUZ: ("float8_e4m3fnuz", "uint8"),
    TensorProto.FLOAT8E5M2: ("float8_e5m2", "uint8"),
    TensorProto.FLOAT8E5M2FNUZ: ("float8_e5m2fnuz", "uint8"),
    TensorProto.FLOAT4E2M1: ("float4_e2m1", "uint8"),
    TensorProto.FLOAT8E8M0: ("float8_e8m0", "uint8"),
    TensorProto.INT4: ("int4", "int8"),
    TensorProto.UINT4: ("uint4", "uint8"),
    TensorProto.INT2: ("int2", "int8"),
    TensorProto.UINT2: ("uint2", "uint8"),
}
NARROW_BITS = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2}


def elem_type_name(elem_type: int) -> str:
    """ONNX's name of an element type (`FLOAT8E4M3FN`), for messages."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"element type {elem_type}"


def graphc_dtype(elem_type: int, what: str = "") -> str:
    """graphc's dtype for an ONNX element type (the storage dtype of a narrow one);
    FrontendError naming `what` for the others."""
    if elem_type in NARROW:
        return NARROW[elem_type][1]
    dtype = _TO_GRAPHC.get(elem_type)
    if dtype is None:
        where = f" ({what})" if what else ""
        raise FrontendError(f"ONNX type {elem_type_name(elem_type)}{where} is not supported by graphc")
    return dtype


def narrow_format(elem_type: int) -> str | None:
    """The narrow format name of an element type (`float8_e4m3fn`, `int4`), or None."""
    entry = NARROW.get(elem_type)
    return entry[0] if entry else None


def as_storage(array: np.ndarray) -> np.ndarray:
    """An array of an ml_dtypes narrow type viewed as its storage (bits or small ints)."""
    name = array.dtype.name
    if name.startswith("float8") or name.startswith("float4"):
        return array.view(np.uint8)
    if name in ("int4", "int2"):
        return array.astype(np.int8)
    if name in ("uint4", "uint2"):
        return array.astype(np.uint8)
    return array


def from_storage(array: np.ndarray, elem_type: int) -> np.ndarray:
    """Storage values back as the ml_dtypes array of a narrow element type."""
    import onnx

    np_type = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    if NARROW[elem_type][1] == "uint8" and not NARROW[elem_type][0].startswith(("uint",)):
        return array.view(np_type)
    return array.astype(np_type)


def onnx_elem_type(dtype: str) -> int:
    """The ONNX element type of a graphc dtype."""
    return _TO_ONNX[dtype]


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype holding values of graphc `dtype` (bfloat16 through ml_dtypes)."""
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


__all__ = [
    "NARROW",
    "as_storage",
    "elem_type_name",
    "from_storage",
    "graphc_dtype",
    "is_float",
    "is_int",
    "narrow_format",
    "numpy_dtype",
    "onnx_elem_type",
]
