"""The OpenCL runtime (PoCL on a machine without a GPU): tensors, views, copies, GPU modules,
device memory the host code allocates, and the errors a user can make."""

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.errors import DeviceError
from graphc.runtime import Tensor, empty, tensor
from graphc.runtime.kernel import KernelArgumentError
from graphc.vm.values import Storage


@pytest.fixture(scope="module")
def dev():
    device = graphc.opencl(0)
    if not device.exist:
        pytest.skip("no OpenCL platform (install PoCL: apt-get install pocl-opencl-icd)")
    return device


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "bool", "float16", "bfloat16"])
def test_tensors_round_trip(dev, dtype):
    data = (np.arange(24) % 7 - 3).reshape(2, 3, 4)
    t = tensor(data, dev, dtype)
    assert (t.device, t.shape, t.dtype, t.strides) == (dev, (2, 3, 4), dtype, (12, 4, 1))
    assert isinstance(t, Tensor) and t._array is None
    np.testing.assert_array_equal(t.numpy().astype("float64"), data.astype(t.numpy_dtype).astype("float64"))
    back = t.copyto(graphc.cpu())
    assert back.device == graphc.cpu()
    t.copyfrom(np.zeros((2, 3, 4), t.numpy_dtype))
    assert not t.numpy().astype("float64").any()
    assert empty((0, 3), dtype, dev).numpy().shape == (0, 3)


def test_views_into_device_storage(dev):
    storage = Storage.allocate(256, dev)
    a, b = storage.view(0, (4,), "float32"), storage.view(64, (8,), "int32")
    a.copyfrom(np.arange(4, dtype="float32"))
    b.copyfrom(np.full(8, 7, "int32"))
    assert b.data_ptr - a.data_ptr == 64
    np.testing.assert_array_equal(a.numpy(), np.arange(4, dtype="float32"))
    np.testing.assert_array_equal(b.numpy(), np.full(8, 7, "int32"))


def _two_stage(n=100):
    """B = A * 2 then C = B + 1, each its own kernel: B lives in device memory the host allocates."""
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((n,), lambda i: B[i] + 1.0, name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    for name in ("B", "C"):
        (i,) = sch.get_loops(sch.get_block(name))
        bx, tx = sch.split(i, [None, 32])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
    return sch.mod


def test_host_code_allocates_device_memory_between_kernels(dev):
    lib = graphc.build(_two_stage(), target="opencl")
    assert [k["name"] for k in lib.imported_modules[0].code.kernels] == ["main_kernel", "main_kernel_1"]
    assert "tir.device_alloc" not in lib.get_source()  # lowered into calls of the launcher
    a = np.arange(100, dtype="float32")
    c = empty((100,), "float32", dev)
    lib["main"](tensor(a, dev), c)
    np.testing.assert_array_equal(c.numpy(), a * 2 + 1)


def test_module_saves_and_loads_without_recompiling(dev, tmp_path):
    lib = graphc.build(_two_stage(), target="opencl")
    path = tmp_path / "two_stage.graphc"
    lib.export_library(path)
    loaded = graphc.runtime.load_module(path)
    assert loaded.imported_modules[0].get_source() == lib.imported_modules[0].get_source()
    a = np.linspace(-1, 1, 100, dtype="float32")
    c = empty((100,), "float32", dev)
    loaded(tensor(a, dev), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1)


def test_kernel_argument_errors(dev):
    lib = graphc.build(_two_stage(), target="opencl")
    with pytest.raises(KernelArgumentError, match=r"device: expected opencl, got cpu.*graphc.opencl\(\)"):
        lib["main"](np.zeros(100, "float32"), empty((100,), "float32", dev))
    with pytest.raises(KernelArgumentError, match="dimension 0"):
        lib["main"](empty((99,), "float32", dev), empty((100,), "float32", dev))


def test_more_threads_than_the_device_allows(dev):
    A = te.placeholder((8, 1024), name="A")
    B = te.compute((8, 1024), lambda i, j: A[i, j] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "threadIdx.y")
    sch.bind(j, "threadIdx.x")
    lib = graphc.build(sch.mod, target="opencl -max_num_threads=8192")
    limit = graphc.runtime.get_device_api("opencl")._state(dev.index).max_work_group_size
    if limit >= 8192:
        pytest.skip(f"this OpenCL device allows {limit} threads per work-group")
    with pytest.raises(DeviceError, match="8192 threads per work-group, more than OpenCL device"):
        lib(empty((8, 1024), "float32", dev), empty((8, 1024), "float32", dev))


def test_opencl_tensors_have_no_dlpack_form(dev):
    with pytest.raises(BufferError, match="OpenCL tensors cannot be exported"):
        tensor([1.0], dev).__dlpack__()


def test_missing_pyopencl_is_named(monkeypatch):
    from graphc.runtime import opencl_api

    def missing():
        raise DeviceError("OpenCL is not available: the Python package pyopencl is not installed "
                          "(pip install 'graphc[opencl]')")

    monkeypatch.setattr(opencl_api, "_import_pyopencl", missing)
    api = opencl_api.OpenCLDeviceAPI()
    assert not api.exist(0)
    with pytest.raises(DeviceError, match="OpenCL is not available: the Python package pyopencl is not"):
        api.alloc(0, 16)


def test_devices_without_streams_refuse(dev):
    with pytest.raises(DeviceError, match="OpenCL devices have no streams"):
        dev.create_raw_stream()
    with pytest.raises(DeviceError, match="CPU devices have no streams"):
        graphc.cpu().create_raw_stream()
    graphc.cpu().set_raw_stream(0)  # the default stream is always fine
