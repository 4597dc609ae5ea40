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


def elem_type_name(elem_type: int) -> str:
    """ONNX's name of an element type (`FLOAT8E4M3FN`), for messages."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"element type {elem_type}"


def graphc_dtype(elem_type: int, what: str = "") -> str:
    """graphc's dtype for an ONNX element type; FrontendError naming `what` for the others."""
    dtype = _TO_GRAPHC.get(elem_type)
    if dtype is None:
        where = f" ({what})" if what else ""
        raise FrontendError(f"ONNX type {elem_type_name(elem_type)}{where} is not supported by graphc")
    return dtype


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


__all__ = ["elem_type_name", "graphc_dtype", "is_float", "is_int", "numpy_dtype", "onnx_elem_type"]
