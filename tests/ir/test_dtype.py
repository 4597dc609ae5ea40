"""DataType parsing, canonical names and numpy mapping."""

import numpy as np
import pytest

from graphc.errors import DataTypeError
from graphc.ir.dtype import DataType, canonical, to_numpy_dtype

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float16", "bfloat16", "float32", "float64"]  # fmt: skip


@pytest.mark.parametrize("name", ALL)
def test_every_dtype_round_trips(name):
    dt = DataType(name)
    assert str(dt) == name
    assert DataType(str(dt)) == dt
    assert dt.lanes == 1
    assert to_numpy_dtype(name).itemsize == dt.itemsize


@pytest.mark.parametrize("name", ALL[1:])
def test_vector_lanes(name):
    dt = DataType(f"{name}x8")
    assert dt.lanes == 8 and dt.element_of() == DataType(name)
    assert dt.itemsize == 8 * DataType(name).itemsize


def test_kinds_and_limits():
    assert DataType("int8").min_value() == -128 and DataType("uint8").max_value() == 255
    assert DataType("bfloat16").is_float and not DataType("int32").is_float
    assert DataType("uint16").is_integer and DataType("bool").bits == 1


def test_canonical_from_python_numpy_and_torch():
    torch = pytest.importorskip("torch")
    assert canonical(float) == "float32" and canonical(int) == "int32" and canonical(bool) == "bool"
    assert canonical(np.float64) == "float64" and canonical(np.dtype("uint16")) == "uint16"
    assert canonical(torch.float16) == "float16" and canonical("double") == "float64"


@pytest.mark.parametrize("bad", ["float8", "int7", "complex64", "", "floatx", "int32x0"])
def test_bad_dtype_names_say_what_is_expected(bad):
    with pytest.raises(DataTypeError, match="data type|bits|lanes"):
        DataType(bad)


def test_equality_with_strings_and_hash():
    assert DataType("float32") == "float32" and DataType("float32") != "float16"
    assert len({DataType("int8"), DataType("int8")}) == 1
