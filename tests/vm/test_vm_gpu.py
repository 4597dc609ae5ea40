"""The VirtualMachine on a GPU device (OpenCL on PoCL here): a small model with hand-applied
schedules matches the CPU, keeps its outputs on the device, and its executable saves and loads."""

import math

import numpy as np
import pytest
import torch

import graphc
from graphc import relax, tir
from graphc.errors import CodegenError
from graphc.frontend.torch import from_exported_program


def _device():
    dev = graphc.opencl(0)
    if not dev.exist:
        pytest.skip("no OpenCL platform (install PoCL: apt-get install pocl-opencl-icd)")
    return dev


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


_MODULES: dict = {}


def _relax_module(batch=None):
    """(the torch model, its Relax module after the "zero" pipeline), exported once per kind."""
    if batch not in _MODULES:
        model = MLP().eval()
        x = torch.randn(4, 16)
        dynamic = {"x": {0: torch.export.Dim("batch", min=1, max=64)}} if batch else None
        mod = from_exported_program(torch.export.export(model, (x,), dynamic_shapes=dynamic))
        _MODULES[batch] = (model, relax.get_pipeline("zero")(mod))
    model, mod = _MODULES[batch]
    return model, mod.copy()


def schedule_for_gpu(mod, threads=64):
    """Bind every block's spatial loops to blockIdx.x/threadIdx.x (reductions run per thread)."""
    for gv, func in list(mod.items()):
        if not isinstance(func, tir.PrimFunc) or func.attrs.get("tir.is_host_func"):
            continue
        sch = tir.Schedule(func)
        for block in sch.get_child_blocks(sch.get_block("root")):
            spatial = sum(1 for iv in sch.get(block).iter_vars if iv.iter_type == tir.IterType.DATA_PAR)
            loops = sch.get_loops(block)[:spatial]
            extents = [sch.get(loop).extent for loop in loops]
            factor = threads
            if not all(isinstance(e, tir.IntImm) for e in extents):
                # a symbolic extent: split by a factor that divides it (the affine-binding check
                # cannot yet use a symbolic bound predicate, so bind refuses the guarded split)
                factor = math.gcd(threads, math.prod(e.value for e in extents if isinstance(e, tir.IntImm)))
            fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
            bx, tx = sch.split(fused, [None, factor])
            sch.bind(bx, "blockIdx.x")
            sch.bind(tx, "threadIdx.x")
        mod[gv] = sch.mod["main"]
    return mod


def test_mlp_runs_on_the_device_and_matches_the_cpu(tmp_path):
    dev = _device()
    model, mod = _relax_module()
    x = torch.randn(4, 16)
    expected = model(x).detach().numpy()
    cpu = relax.VirtualMachine(relax.build(mod, "llvm"), graphc.cpu())["main"](x.numpy())
    exe = relax.build(schedule_for_gpu(mod), "opencl")
    assert {f.device for f in exe.functions if f.kind == "kernel"} == {"opencl"}
    vm = relax.VirtualMachine(exe, dev)
    out = vm["main"](x.numpy())
    out = out[0] if isinstance(out, tuple) else out
    assert out.device == dev  # outputs stay on the device, as in TVM
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), (cpu[0] if isinstance(cpu, tuple) else cpu).numpy(), rtol=1e-5)
    # device tensors go in without a copy; the constants were uploaded once, at load time
    xin = graphc.nd.array(x.numpy(), dev)
    assert vm._convert(xin) is xin
    weights = [c for c in vm._constants if isinstance(c, graphc.Tensor) and c.ndim == 2]
    assert weights and all(c.device == dev for c in weights)
    again = vm["main"](xin)
    np.testing.assert_allclose((again[0] if isinstance(again, tuple) else again).numpy(), expected, rtol=1e-5)

    path = tmp_path / "mlp.graphc"
    exe.export_library(path)
    loaded = graphc.vm.Executable.load(path)
    assert sorted(loaded.modules) == sorted(exe.modules)
    out2 = relax.VirtualMachine(loaded, dev)["main"](x.numpy())
    np.testing.assert_allclose((out2[0] if isinstance(out2, tuple) else out2).numpy(), expected, rtol=1e-5)


def test_dynamic_batch_shape_functions_run_on_the_cpu():
    dev = _device()
    model, mod = _relax_module(batch=True)
    exe = relax.build(schedule_for_gpu(mod), "opencl")
    devices = {f.name: f.device for f in exe.functions if f.kind == "kernel"}
    assert "opencl" in devices.values()
    vm = relax.VirtualMachine(exe, dev)
    for batch in (1, 7):
        x = torch.randn(batch, 16)
        out = vm["main"](x.numpy())
        out = out[0] if isinstance(out, tuple) else out
        np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_unscheduled_kernels_are_rejected_naming_the_kernel():
    _, mod = _relax_module()
    with pytest.raises(CodegenError, match=r"fused_\w+: buffer \w+ is accessed outside any loop bound to "
                                           r"blockIdx/threadIdx.*Did you forget to bind\?"):
        relax.build(mod, "opencl")


def test_compile_for_opencl_applies_the_default_gpu_schedules():
    dev = _device()
    model = MLP().eval()
    x = torch.randn(2, 16)
    exe = graphc.compile(torch.export.export(model, (x,)), target="opencl")
    out = relax.VirtualMachine(exe, dev)["main"](x.numpy())
    out = out[0] if isinstance(out, tuple) else out
    np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_gpu_executable_needs_a_device_of_its_kind():
    _device()
    _, mod = _relax_module()
    exe = relax.build(schedule_for_gpu(mod), "opencl")
    with pytest.raises(graphc.vm.VMError, match="opencl kernels, but this VirtualMachine runs on cpu"):
        relax.VirtualMachine(exe, graphc.cpu())["main"](np.zeros((4, 16), "float32"))


def test_cuda_executable_holds_cubins_and_saves(tmp_path):
    from graphc.target.nvrtc import nvrtc_version

    if nvrtc_version() is None:
        pytest.skip("NVRTC is not installed (pip install 'graphc[cuda]')")
    _, mod = _relax_module()
    exe = relax.build(schedule_for_gpu(mod), "cuda -arch=sm_90")
    code = exe.modules["cuda"].imported_modules[0].code
    assert code.binaries["sm_90"][:4] == b"\x7fELF" and ".target sm_90" in code.ptx
    path = tmp_path / "mlp_cuda.graphc"
    exe.export_library(path)
    loaded = graphc.vm.Executable.load(path)
    assert loaded.modules["cuda"].imported_modules[0].code.binaries == code.binaries
    if graphc.cuda(0).exist:  # where there is a GPU, run it
        x = np.random.rand(4, 16).astype("float32")
        out = relax.VirtualMachine(loaded, graphc.cuda(0))["main"](x)
        out = out[0] if isinstance(out, tuple) else out
        assert out.device == graphc.cuda(0)
