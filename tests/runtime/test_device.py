"""Devices: construction, equality, names, back-end registry and unavailable devices."""

import importlib
import pickle

import pytest

import graphc
from graphc.errors import DeviceError
from graphc.runtime import Device, DeviceAPI, cpu, cuda, device, empty, get_device_api, opencl, tensor

# graphc.runtime.device is the function; the module is reached through importlib.
device_module = importlib.import_module("graphc.runtime.device")


def test_constructors_and_repr():
    assert repr(cpu()) == "cpu(0)"
    assert repr(cuda(1)) == "cuda(1)"
    assert repr(opencl(2)) == "opencl(2)"
    assert str(cuda(1)) == "cuda:1"
    assert (cpu().device_type, cpu().index) == ("cpu", 0)


def test_top_level_names():
    assert graphc.cpu() == cpu(0)
    assert graphc.device("cuda", 0) == graphc.cuda(0)
    assert graphc.Device is Device


def test_equality_and_hash():
    assert cpu(0) == Device("cpu", 0)
    assert cpu(0) != cpu(1)
    assert cpu(0) != cuda(0)
    assert cpu(0) != "cpu"
    assert len({cpu(0), Device("cpu", 0), cuda(0), cuda(1)}) == 3


@pytest.mark.parametrize(
    "name, expected",
    [("cpu", cpu()), ("llvm", cpu()), ("llvm -mcpu=skylake", cpu()), ("c", cpu()),
     ("cuda", cuda()), ("nvptx", cuda()), ("gpu", cuda()), ("opencl", opencl()), ("cl", opencl()),
     ("CUDA", cuda())],
)  # fmt: skip
def test_device_accepts_target_names(name, expected):
    assert device(name) == expected


def test_device_index_and_dlpack_codes():
    assert device("cuda", 3) == cuda(3)
    assert device(2, 1) == cuda(1)
    assert device(cpu(0)) == cpu(0)
    assert (cpu().dlpack_code, cuda().dlpack_code, opencl().dlpack_code) == (1, 2, 4)


def test_device_from_target_like_object():
    class Kind:
        name = "llvm"

    class FakeTarget:
        kind = Kind()

    assert device(FakeTarget()) == cpu()


def test_bad_devices():
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        device("tpu")
    with pytest.raises(DeviceError, match="non-negative"):
        Device("cpu", -1)
    with pytest.raises(DeviceError, match="non-negative int, got 'x'"):
        Device("cpu", "x")
    with pytest.raises(DeviceError, match="non-negative int, got True"):
        Device("cpu", True)
    import numpy as np

    assert Device("cuda", np.int64(2)) == cuda(2)
    with pytest.raises(DeviceError, match="DLPack device type code 99"):
        Device(99)


def test_immutable_and_picklable():
    dev = cuda(2)
    with pytest.raises(AttributeError):
        dev.index = 3
    assert pickle.loads(pickle.dumps(dev)) == dev


def test_exist_and_sync():
    assert cpu().exist
    assert not cuda(10_000).exist and not opencl(10_000).exist
    cpu().sync()


@pytest.mark.parametrize("dev, name", [(cuda(0), "CUDA"), (opencl(0), "OpenCL")])
def test_unavailable_device_errors(dev, name, monkeypatch):
    """A device type whose back end is not registered fails with one clear error everywhere."""
    stub = device_module._UnavailableDeviceAPI(dev.device_type)
    monkeypatch.setitem(device_module._REGISTRY, dev.device_type, stub)
    message = f"{name} is not available: no {name} back end is registered"
    with pytest.raises(DeviceError, match=message):
        empty((4,), "float32", dev)
    with pytest.raises(DeviceError, match=message):
        tensor([1.0, 2.0], dev)
    with pytest.raises(DeviceError, match=message):
        tensor([1.0]).copyto(dev)
    with pytest.raises(DeviceError, match=message):
        dev.sync()


def test_registered_back_end_serves_its_device(monkeypatch):
    """A fake 'CUDA' back end backed by host memory: allocation and copies go through it."""
    import numpy as np

    calls = []

    class FakeAPI(DeviceAPI):
        device_type = "cuda"

        def __init__(self):
            self.host = get_device_api("cpu")

        def exist(self, index):
            return True

        def alloc(self, index, nbytes, alignment=64):
            calls.append("alloc")
            return self.host.alloc(index, nbytes, alignment)

        def free(self, allocation):
            self.host.free(allocation)

        def copy_from_host(self, host, dst_ptr, index):
            calls.append("h2d")
            self.host.copy_from_host(host, dst_ptr, index)

        def copy_to_host(self, src_ptr, host, index):
            calls.append("d2h")
            self.host.copy_to_host(src_ptr, host, index)

        def synchronize(self, index):
            calls.append("sync")

    monkeypatch.setitem(device_module._REGISTRY, "cuda", FakeAPI())
    assert cuda().exist
    t = tensor(np.arange(6, dtype="float32").reshape(2, 3), cuda(0))
    assert t.device == cuda(0) and t.data_ptr % 64 == 0
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype="float32").reshape(2, 3))
    back = t.copyto(cpu())
    assert back.device == cpu() and back.numpy()[1, 2] == 5
    cuda().sync()
    assert calls[:2] == ["alloc", "h2d"] and "d2h" in calls and calls[-1] == "sync"
    assert "<graphc.Tensor shape=(2, 3), cuda:0>" in repr(t)


def test_register_rejects_non_api():
    with pytest.raises(DeviceError, match="expected a DeviceAPI"):
        device_module.register_device_api("cuda", object())


def test_cuda_without_a_driver_names_what_is_missing():
    if cuda(0).exist:
        pytest.skip("this machine has a CUDA device")
    with pytest.raises(DeviceError, match="CUDA is not available: (the NVIDIA driver|the Python package "
                                          "cuda-bindings)"):
        empty((4,), "float32", cuda(0))


def test_missing_opencl_device_names_the_devices():
    if not opencl(0).exist:
        pytest.skip("no OpenCL platform: install PoCL (apt-get install pocl-opencl-icd)")
    with pytest.raises(DeviceError, match="there is no OpenCL device 50"):
        empty((4,), "float32", opencl(50))


def test_back_end_without_devices(monkeypatch):
    class NoDevices(device_module.CPUDeviceAPI):
        device_type = "opencl"

        def exist(self, index):
            return False

    monkeypatch.setitem(device_module._REGISTRY, "opencl", NoDevices())
    assert not opencl(0).exist
    with pytest.raises(DeviceError, match=r"device opencl\(0\) does not exist: .*no device with index 0"):
        empty((2,), "float32", opencl(0))
