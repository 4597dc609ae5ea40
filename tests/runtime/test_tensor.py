"""Tensor creation, metadata, alignment, copies, printing and errors."""

import ml_dtypes
import numpy as np
import pytest
import torch

import graphc
from graphc.errors import DataTypeError
from graphc.runtime import Tensor, cpu, empty, tensor

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "bfloat16", "float32", "float64"]  # fmt: skip


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_from_list_every_dtype(dtype):
    t = tensor([[1, 0, 1], [0, 1, 1]], dtype=dtype)
    assert t.dtype == dtype
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6
    assert t.strides == (3, 1)
    assert t.nbytes == 6 * np_dtype(dtype).itemsize
    assert t.device == cpu(0)
    expected = np.array([[1, 0, 1], [0, 1, 1]]).astype(np_dtype(dtype))
    np.testing.assert_array_equal(t.numpy(), expected)
    assert t.numpy().dtype == np_dtype(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_from_numpy_every_dtype_copies(dtype):
    source = (np.arange(12) % 2).reshape(3, 4).astype(np_dtype(dtype))
    t = tensor(source)
    assert t.dtype == dtype
    assert t.data_ptr != source.ctypes.data  # tensor() copies, as TVM's does
    np.testing.assert_array_equal(t.numpy(), source)
    source[0, 0] = 1 - source[0, 0]
    assert t.numpy()[0, 0] != source[0, 0]


def test_default_dtype_inference():
    assert tensor([1, 2]).dtype == "int64"
    assert tensor([1.0, 2.0]).dtype == "float64"
    assert tensor([True]).dtype == "bool"
    assert tensor(np.float32(1.5)).dtype == "float32"


def test_dtype_conversion_on_creation():
    t = tensor(np.arange(4, dtype="float64"), dtype="float16")
    assert t.dtype == "float16"
    np.testing.assert_array_equal(t.numpy(), np.arange(4, dtype="float16"))
    assert tensor([1, 2], dtype="float").dtype == "float32"


SHAPES = [(), (0,), (1,), (3,), (7, 5), (2, 3, 5), (1, 1, 1, 1), (17, 0, 3), (129,)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "float64"])
def test_allocations_are_64_byte_aligned(shape, dtype):
    t = empty(shape, dtype)
    assert t.data_ptr % 64 == 0 and t.is_aligned
    assert t.shape == shape
    u = tensor(np.zeros(shape, dtype=dtype))
    assert u.data_ptr % 64 == 0 and u.is_aligned


def test_data_ptr_is_address_of_first_element():
    t = tensor(np.arange(10, dtype="int32"))
    view = np.asarray(t)
    assert view.ctypes.data == t.data_ptr
    assert view.__array_interface__["data"][0] == t.data_ptr


def test_zero_size_and_scalar():
    z = tensor(np.zeros((0, 4), dtype="float32"))
    assert z.shape == (0, 4) and z.size == 0 and z.nbytes == 0
    assert z.numpy().shape == (0, 4)
    z.copyfrom(np.zeros((0, 4), dtype="float32"))
    s = tensor(np.float64(2.5))
    assert s.shape == () and s.ndim == 0 and s.size == 1 and s.strides == ()
    assert float(s.numpy()) == 2.5


def test_numpy_round_trip_returns_copy():
    source = np.random.default_rng(0).standard_normal((4, 5)).astype("float32")
    t = tensor(source)
    out = t.numpy()
    np.testing.assert_array_equal(out, source)
    out[0, 0] = 100.0
    assert t.numpy()[0, 0] == source[0, 0]
    np.testing.assert_array_equal(t.asnumpy(), source)


def test_np_asarray_is_zero_copy_view():
    t = tensor(np.zeros(4, dtype="float32"))
    view = np.asarray(t)
    view[2] = 5.0
    assert t.numpy()[2] == 5.0
    assert np.asarray(t, dtype="float64").dtype == np.float64
    assert np.array(t).ctypes.data != t.data_ptr  # np.array copies by default


def test_empty_variants():
    assert empty(5).shape == (5,) and empty(5).dtype == "float32"
    assert empty([2, 3], "uint16", cpu()).shape == (2, 3)
    assert empty((2,), "int8", "llvm").device == cpu()
    with pytest.raises(ValueError, match="invalid dimension -1"):
        empty((2, -1))


def test_nd_namespace():
    a = graphc.nd.array(np.arange(8).astype("float32"))
    assert isinstance(a, graphc.nd.NDArray) and isinstance(a, graphc.Tensor)
    assert graphc.nd.empty((3,), "int32").dtype == "int32"
    assert graphc.nd.array is graphc.runtime.tensor


def test_tensor_from_tensor_copies_to_device():
    a = tensor([1.0, 2.0], dtype="float32")
    b = tensor(a, cpu(0))
    assert b.data_ptr != a.data_ptr
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    c = tensor(a, dtype="int32")
    assert c.dtype == "int32" and c.numpy().tolist() == [1, 2]


def test_tensor_from_torch():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    g = tensor(t)
    assert g.dtype == "float32" and g.shape == (2, 3)
    assert g.data_ptr != t.data_ptr()
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    bf = tensor(torch.ones(3, dtype=torch.bfloat16))
    assert bf.dtype == "bfloat16" and bf.numpy().astype("float32").tolist() == [1.0, 1.0, 1.0]
    p = tensor(torch.nn.Parameter(torch.ones(2)), dtype="float16")
    assert p.dtype == "float16"


def test_copyfrom():
    t = empty((2, 2), "float32")
    assert t.copyfrom(np.ones((2, 2), dtype="float32")) is t
    np.testing.assert_array_equal(t.numpy(), np.ones((2, 2)))
    t.copyfrom([[1, 2], [3, 4]])  # lists convert to the tensor's dtype
    assert t.numpy().tolist() == [[1, 2], [3, 4]]
    t.copyfrom(tensor(np.full((2, 2), 7, dtype="float32")))
    assert t.numpy()[0, 0] == 7


def test_copyfrom_errors():
    t = empty((2, 2), "float32")
    with pytest.raises(ValueError, match=r"shape mismatch, expected \(2, 2\) \(this tensor\), got \(3,\)"):
        t.copyfrom(np.zeros(3, dtype="float32"))
    with pytest.raises(ValueError, match="dtype mismatch, expected float32 .* got float64"):
        t.copyfrom(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="shape mismatch"):
        t.copyfrom([1, 2, 3])
    with pytest.raises(ValueError, match="dtype mismatch"):
        t.copyfrom(tensor(np.zeros((2, 2), dtype="int32")))
    with pytest.raises(DataTypeError, match="complex"):
        t.copyfrom(np.zeros((2, 2), dtype="complex64"))


def test_copyto():
    a = tensor(np.arange(4, dtype="int16"))
    b = a.copyto(cpu(0))
    assert b.data_ptr != a.data_ptr and b.numpy().tolist() == [0, 1, 2, 3]
    c = empty((4,), "int16")
    assert a.copyto(c) is c and c.numpy().tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="shape mismatch"):
        a.copyto(empty((5,), "int16"))
    with pytest.raises(ValueError, match="dtype mismatch"):
        a.copyto(empty((4,), "int32"))
    with pytest.raises(TypeError, match="copyto expects a Device or a Tensor, got str"):
        a.copyto("cpu")


def test_repr_and_str():
    a = tensor(np.arange(3, dtype="float32"))
    assert repr(a) == "<graphc.Tensor shape=(3,), cpu:0>\narray([0., 1., 2.], dtype=float32)"
    assert str(a) == "[0. 1. 2.]"
    big = tensor(np.arange(128, dtype="float32"))
    assert repr(big).startswith("<graphc.Tensor shape=(128,), cpu:0>\narray([")


@pytest.mark.parametrize("bad", [np.zeros(2, dtype="complex128"), np.array(["x"]), np.array([object()])])
def test_unsupported_dtypes(bad):
    with pytest.raises(DataTypeError, match="unsupported dtype") as info:
        tensor(bad)
    assert str(bad.dtype) in str(info.value) or bad.dtype.str in str(info.value)


@pytest.mark.parametrize("bad", ["complex64", "int4", "float32x4", "string", "handle"])
def test_unsupported_dtype_names(bad):
    with pytest.raises(DataTypeError, match=f"unsupported dtype '{bad}'"):
        empty((2,), bad)


def test_metadata_is_read_only():
    t = empty((2,))
    with pytest.raises(AttributeError, match="read-only"):
        t.shape = (3,)
    with pytest.raises(TypeError, match="create tensors with"):
        Tensor()


def test_len():
    assert len(empty((3, 2))) == 3
    with pytest.raises(TypeError, match="0-d"):
        len(empty(()))


def test_pickle_and_copy():
    import copy
    import pickle

    a = tensor(np.arange(6, dtype="bfloat16").reshape(2, 3))
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a), copy.copy(a)):
        assert b.dtype == "bfloat16" and b.shape == (2, 3) and b.data_ptr != a.data_ptr
        assert b.is_aligned
        np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_runtime_modules_do_not_import_the_compiler():
    import ast
    import pathlib

    import graphc.runtime

    forbidden = ("tir", "te", "script", "relax", "target", "topi", "frontend", "dlight", "driver")
    root = pathlib.Path(graphc.runtime.__file__).parent
    names = ["__init__.py", "device.py", "tensor.py", "nd.py", "dlpack.py", "profiling.py"]
    for name in names:
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                parts = ("." * node.level + (node.module or "")).lstrip(".").split(".")
                graphc_parts = parts[1:] if parts[0] == "graphc" else parts
                if node.level >= 2 or parts[0] == "graphc":
                    assert graphc_parts[0] not in forbidden, f"{name} imports {node.module}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    assert not (parts[0] == "graphc" and parts[1:2] and parts[1] in forbidden), name
