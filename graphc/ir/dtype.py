"""Data types: parsing and querying type strings such as ``"float32"`` or ``"int8x16"``.

IR nodes store their dtype as a canonical string (as TVM's Python API shows it);
`DataType` is the parsed view used by analyses and code generators.

>>> DataType("float32x4").lanes
4
>>> DataType("bool").bits
1
>>> str(DataType("float16").with_lanes(8))
'float16x8'
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ..errors import DataTypeError

INT, UINT, FLOAT, BFLOAT, BOOL, HANDLE = "int", "uint", "float", "bfloat", "bool", "handle"

_SCALAR_BITS = {
    INT: (8, 16, 32, 64),
    UINT: (8, 16, 32, 64),
    FLOAT: (16, 32, 64),
    BFLOAT: (16,),
    BOOL: (1,),
    HANDLE: (64,),
}
_PATTERN = re.compile(r"^(bool|handle|int|uint|float|bfloat)(\d*)(?:x(\d+))?$")


class DataType:
    """A parsed scalar or vector data type: a type code, a bit width and a lane count."""

    __slots__ = ("code", "bits", "lanes")

    def __new__(cls, spec: str | DataType | np.dtype | type) -> DataType:
        if isinstance(spec, DataType):
            return spec
        return _parse(canonical(spec))

    @classmethod
    def _make(cls, code: str, bits: int, lanes: int) -> DataType:
        self = object.__new__(cls)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "lanes", lanes)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("DataType is immutable")

    def __str__(self) -> str:
        name = self.code if self.code in (BOOL, HANDLE) else f"{self.code}{self.bits}"
        return name if self.lanes == 1 else f"{name}x{self.lanes}"

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = DataType(other)
            except DataTypeError:
                return False
        if not isinstance(other, DataType):
            return NotImplemented
        return (self.code, self.bits, self.lanes) == (other.code, other.bits, other.lanes)

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def is_int(self) -> bool:
        return self.code == INT

    @property
    def is_uint(self) -> bool:
        return self.code == UINT

    @property
    def is_integer(self) -> bool:
        """Signed or unsigned integer (not bool)."""
        return self.code in (INT, UINT)

    @property
    def is_float(self) -> bool:
        """IEEE float or bfloat16."""
        return self.code in (FLOAT, BFLOAT)

    @property
    def is_bool(self) -> bool:
        return self.code == BOOL

    @property
    def is_handle(self) -> bool:
        return self.code == HANDLE

    @property
    def is_vector(self) -> bool:
        return self.lanes > 1

    @property
    def itemsize(self) -> int:
        """Bytes one element occupies in memory (bool is stored as one byte)."""
        return max(self.bits, 8) // 8 * self.lanes

    def element_of(self) -> DataType:
        """The scalar type of one lane."""
        return DataType._make(self.code, self.bits, 1)

    def with_lanes(self, lanes: int) -> DataType:
        return DataType._make(self.code, self.bits, lanes)

    def with_bits(self, bits: int) -> DataType:
        return DataType(str(DataType._make(self.code, bits, self.lanes)))

    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype of one lane (bfloat16 needs `ml_dtypes`)."""
        return to_numpy_dtype(str(self.element_of()))

    def min_value(self) -> int | float:
        if self.is_int:
            return -(1 << (self.bits - 1))
        if self.is_uint or self.is_bool:
            return 0
        return -float("inf")

    def max_value(self) -> int | float:
        if self.is_int:
            return (1 << (self.bits - 1)) - 1
        if self.is_uint:
            return (1 << self.bits) - 1
        if self.is_bool:
            return 1
        return float("inf")


@functools.cache
def _parse(text: str) -> DataType:
    match = _PATTERN.match(text)
    if match is None:
        raise DataTypeError(f"cannot parse data type {text!r}; expected e.g. 'float32', 'int8x4', 'bool'")
    code, bits, lanes = match.group(1), match.group(2), match.group(3)
    bits = int(bits) if bits else _SCALAR_BITS[code][0]
    if bits not in _SCALAR_BITS[code]:
        raise DataTypeError(
            f"unsupported data type {text!r}: {code} comes in {', '.join(map(str, _SCALAR_BITS[code]))} bits"
        )
    lanes = int(lanes) if lanes else 1
    if lanes < 1:
        raise DataTypeError(f"data type {text!r} has no lanes")
    return DataType._make(code, bits, lanes)


_NUMPY_NAMES = {
    "bool": "bool",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
}  # fmt: skip


@functools.cache
def _canonical_str(text: str) -> str:
    aliases = {"float": "float32", "double": "float64", "int": "int32", "half": "float16"}
    text = aliases.get(text, text)
    return str(_parse(text))


def canonical(spec) -> str:
    """The canonical dtype string for a string, DataType, numpy dtype or Python type.

    >>> canonical(float), canonical("int"), canonical(np.dtype("uint8"))
    ('float32', 'int32', 'uint8')
    """
    if isinstance(spec, str):
        return _canonical_str(spec)
    if isinstance(spec, DataType):
        return str(spec)
    if spec is bool:
        return "bool"
    if spec is int:
        return "int32"
    if spec is float:
        return "float32"
    try:
        npd = np.dtype(spec)
    except TypeError:
        npd = None
    if npd is not None:
        if npd.name == "bfloat16":
            return "bfloat16"
        if npd.name in _NUMPY_NAMES:
            return npd.name
    torch_name = str(spec)
    if torch_name.startswith("torch."):
        return canonical(torch_name[len("torch."):])
    raise DataTypeError(f"cannot interpret {spec!r} as a data type")


def to_numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype for a scalar dtype string."""
    dtype = canonical(dtype)
    if dtype == "bfloat16":
        try:
            import ml_dtypes
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise DataTypeError("bfloat16 tensors need the 'ml_dtypes' package") from err
        return np.dtype(ml_dtypes.bfloat16)
    if dtype not in _NUMPY_NAMES:
        raise DataTypeError(f"data type {dtype!r} has no numpy equivalent")
    return np.dtype(_NUMPY_NAMES[dtype])
