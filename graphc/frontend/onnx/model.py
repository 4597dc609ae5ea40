"""Reading an ONNX model from what a user has (a ModelProto, a path or bytes) and checking it.

Every way a model can be malformed ends in a `FrontendError` that says what is wrong:
a truncated or corrupted protobuf, a model that fails `onnx.checker`, an initializer
whose data does not fill its declared shape.

>>> load_model(b"not a model")
Traceback (most recent call last):
  ...
graphc.errors.FrontendError: cannot read the ONNX model from bytes: ...
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
from onnx import ModelProto, numpy_helper

from ...errors import FrontendError
from .dtypes import elem_type_name

_TWO_GB = 2**31


def is_onnx_model(model) -> bool:
    """Whether `model` is something `from_onnx` reads: a ModelProto, bytes, or an `.onnx` path."""
    if isinstance(model, ModelProto | bytes | bytearray | memoryview):
        return True
    return isinstance(model, str | os.PathLike) and str(model).lower().endswith(".onnx")


def load_model(model, check: bool = True) -> ModelProto:
    """The ModelProto of `model` (external data loaded from the model's directory), checked."""
    path = None
    if isinstance(model, ModelProto):
        proto = model
    elif isinstance(model, bytes | bytearray | memoryview):
        proto = _parse(bytes(model), "bytes")
    elif isinstance(model, str | os.PathLike):
        path = Path(model)
        if not path.is_file():
            raise FrontendError(f"ONNX model file {str(path)!r} does not exist")
        proto = _parse(path.read_bytes(), repr(str(path)))
        if _has_external_data(proto):
            try:
                onnx.external_data_helper.load_external_data_for_model(proto, str(path.parent))
            except (OSError, ValueError) as exc:
                raise FrontendError(f"cannot load the external data of {str(path)!r}: {exc}") from exc
    else:
        raise FrontendError(
            f"from_onnx expects an onnx.ModelProto, a path or bytes, got {type(model).__name__}"
        )
    if check:
        check_model(proto, path)
    return proto


def _parse(data: bytes, where: str) -> ModelProto:
    proto = ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf raises DecodeError and others
        raise FrontendError(
            f"cannot read the ONNX model from {where}: {exc} (truncated or not an ONNX file?)"
        ) from exc
    if not proto.HasField("graph"):
        raise FrontendError(
            f"cannot read the ONNX model from {where}: it has no graph (truncated or not an ONNX file?)"
        )
    return proto


def _has_external_data(proto: ModelProto) -> bool:
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in proto.graph.initializer)


def check_model(proto: ModelProto, path: Path | None = None) -> None:
    """`onnx.checker` on the model (by path when it is over 2 GB), as a FrontendError."""
    try:
        if path is not None and proto.ByteSize() >= _TWO_GB:
            onnx.checker.check_model(str(path))
        else:
            onnx.checker.check_model(proto)
    except (onnx.checker.ValidationError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FrontendError(f"the ONNX model is malformed (onnx.checker): {first}") from exc


def tensor_value(tensor: onnx.TensorProto, what: str) -> np.ndarray:
    """A TensorProto's data as a numpy array; FrontendError when its data does not fit its shape."""
    expected = int(np.prod(tensor.dims, dtype=np.int64)) if len(tensor.dims) else 1
    try:
        array = numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as exc:
        raise FrontendError(
            f"{what} {tensor.name!r} ({elem_type_name(tensor.data_type)}, shape "
            f"{list(tensor.dims)}) cannot be read: {exc}"
        ) from exc
    if array.size != expected:
        raise FrontendError(
            f"{what} {tensor.name!r} declares shape {list(tensor.dims)} ({expected} elements) "
            f"but holds {array.size}"
        )
    return array


__all__ = ["check_model", "is_onnx_model", "load_model", "tensor_value"]
