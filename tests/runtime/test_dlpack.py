"""DLPack exchange with numpy and PyTorch: zero-copy both ways, copies where required."""

import gc

import ml_dtypes
import numpy as np
import pytest
import torch

from graphc.errors import DataTypeError, DeviceError
from graphc.runtime import cpu, empty, from_dlpack, tensor

TORCH_DTYPES = {
    "bool": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
}  # fmt: skip


def test_device_tuple():
    assert tensor([1.0]).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", sorted(TORCH_DTYPES))
def test_export_to_torch_shares_memory(dtype):
    g = tensor(np.zeros((2, 3)), dtype=dtype)
    t = torch.from_dlpack(g)
    assert t.dtype == TORCH_DTYPES[dtype] and tuple(t.shape) == (2, 3)
    assert t.data_ptr() == g.data_ptr
    t[1, 2] = 1
    assert g.numpy()[1, 2] == 1


def test_export_to_numpy_shares_memory():
    g = tensor(np.arange(6, dtype="float32").reshape(2, 3))
    a = np.from_dlpack(g)
    assert a.ctypes.data == g.data_ptr and a.shape == (2, 3)
    a[0, 0] = -1.0
    assert g.numpy()[0, 0] == -1.0


def test_export_outlives_tensor():
    g = tensor(np.arange(1000, dtype="float64"))
    t = torch.from_dlpack(g)
    b = torch.from_dlpack(tensor(np.arange(10), dtype="bfloat16"))
    del g
    gc.collect()
    assert t[999].item() == 999.0 and t.sum().item() == 999 * 1000 / 2
    assert b[9].item() == 9.0


def test_unconsumed_bfloat16_capsule_is_released():
    from graphc.runtime import dlpack

    before = len(dlpack._LIVE)
    capsule = tensor([1, 2], dtype="bfloat16").__dlpack__()
    assert len(dlpack._LIVE) == before + 1
    del capsule
    gc.collect()
    assert len(dlpack._LIVE) == before


def test_export_with_copy_flag():
    g = tensor(np.arange(3, dtype="int32"))
    a = np.from_dlpack(g, copy=True)
    a[0] = 50
    assert g.numpy()[0] == 0
    b = np.from_dlpack(g, device="cpu")
    assert b.ctypes.data == g.data_ptr


@pytest.mark.parametrize("dtype", sorted(TORCH_DTYPES))
def test_import_from_torch_shares_memory(dtype):
    t = torch.zeros((4, 5), dtype=TORCH_DTYPES[dtype])
    g = from_dlpack(t)
    assert g.dtype == dtype and g.shape == (4, 5) and g.strides == (5, 1)
    assert g.data_ptr == t.data_ptr()
    t[3, 4] = 1
    assert g.numpy()[3, 4] == 1
    np.asarray(g)[0, 1] = 1
    assert t[0, 1].item() == 1


def test_import_from_numpy_shares_memory():
    a = np.zeros(8, dtype="uint16")
    g = from_dlpack(a)
    assert g.data_ptr == a.ctypes.data
    a[3] = 9
    assert g.numpy()[3] == 9
    bf = np.ones(4, dtype=ml_dtypes.bfloat16)
    gb = from_dlpack(bf)
    assert gb.dtype == "bfloat16" and gb.data_ptr == bf.ctypes.data


def test_import_outlives_source():
    t = torch.arange(100, dtype=torch.int64)
    g = from_dlpack(t)
    b = from_dlpack(torch.full((3,), 2.0, dtype=torch.bfloat16))
    del t
    gc.collect()
    assert g.numpy().sum() == 4950
    assert b.numpy().astype("float32").tolist() == [2.0, 2.0, 2.0]


def test_non_contiguous_torch_is_copied():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4).T
    g = from_dlpack(t)
    assert g.shape == (4, 3) and g.strides == (3, 1)
    assert g.data_ptr != t.data_ptr() and g.is_aligned
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    t[0, 0] = 100.0
    assert g.numpy()[0, 0] == 0.0


def test_non_contiguous_bfloat16_torch_is_copied():
    t = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)[:, 1:]
    g = from_dlpack(t)
    assert g.shape == (2, 2) and g.strides == (2, 1)
    assert g.numpy().astype("float32").tolist() == [[1.0, 2.0], [4.0, 5.0]]


def test_unaligned_zero_copy_is_reported():
    base = torch.zeros(64, dtype=torch.float32)
    base_aligned = base.data_ptr() % 64 == 0
    view = base[1:]  # 4 bytes past the base: cannot be 64-byte aligned if the base is
    g = from_dlpack(view)
    assert g.data_ptr == view.data_ptr()
    assert g.is_aligned == (g.data_ptr % 64 == 0)
    if base_aligned:
        assert not g.is_aligned


def test_read_only_numpy_is_copied():
    a = np.arange(4, dtype="int8")
    a.flags.writeable = False
    g = from_dlpack(a)
    assert g.data_ptr != a.ctypes.data and g.numpy().tolist() == [0, 1, 2, 3]


def test_capsules_and_round_trip():
    t = torch.arange(5, dtype=torch.int32)
    g = from_dlpack(torch.utils.dlpack.to_dlpack(t))
    assert g.data_ptr == t.data_ptr() and g.numpy().tolist() == [0, 1, 2, 3, 4]
    h = from_dlpack(tensor([1.5, 2.5], dtype="float32").to_dlpack())
    assert h.numpy().tolist() == [1.5, 2.5]
    g2 = from_dlpack(g)
    assert g2.data_ptr == g.data_ptr and g2.device == cpu()
    back = torch.from_dlpack(from_dlpack(t))
    assert back.data_ptr() == t.data_ptr()


def test_import_errors():
    with pytest.raises(TypeError, match="from_dlpack expects an object with __dlpack__"):
        from_dlpack([1, 2, 3])
    with pytest.raises(DataTypeError, match="complex64"):
        from_dlpack(torch.zeros(2, dtype=torch.complex64))

    class OnOpenCL:
        def __dlpack_device__(self):
            return (4, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be called")

    with pytest.raises(DeviceError, match="DLPack device type 4"):
        from_dlpack(OnOpenCL())


def test_cuda_memory_is_imported_without_a_copy():
    """A CUDA producer (torch.cuda on a GPU machine): the graphc tensor shares its address."""
    from graphc.runtime import cuda
    from graphc.runtime.dlpack import make_capsule

    keep = np.zeros(6, "float32")
    address = keep.ctypes.data  # stands in for device memory: never dereferenced here

    class OnCUDA:
        def __dlpack_device__(self):
            return (2, 1)

        def __dlpack__(self, stream=None, **kwargs):
            assert stream == 1  # graphc works on the legacy default stream
            return make_capsule(keep, address, (2, 3), (3, 1), "float32", 2, 1)

    t = from_dlpack(OnCUDA())
    assert (t.device, t.shape, t.dtype, t.data_ptr) == (cuda(1), (2, 3), "float32", address)


def test_export_to_other_device_is_refused():
    g = empty((2,), "float32")
    with pytest.raises(BufferError, match="cannot export"):
        g.__dlpack__(dl_device=(2, 0))
