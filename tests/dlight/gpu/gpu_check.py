"""Helpers of the dlight.gpu tests: run a PrimFunc scheduled by rules on PoCL (OpenCL) against
its unscheduled CPU build, and compile scheduled modules to cubins with NVRTC."""

import numpy as np
import pytest

import graphc
from graphc import IRModule
from graphc.dlight.base.transform import apply_rules
from graphc.ir.dtype import to_numpy_dtype
from graphc.target import Target


def opencl_device():
    dev = graphc.opencl(0)
    if not dev.exist:
        pytest.skip("no OpenCL platform (install PoCL: apt-get install pocl-opencl-icd)")
    return dev


def require_nvrtc():
    from graphc.target.nvrtc import nvrtc_version

    if nvrtc_version() is None:
        pytest.skip("NVRTC is not installed (pip install 'graphc[cuda]')")


def schedule(func, rules, target="opencl"):
    """The function as the first applying rule of `rules` schedules it (None: none applies)."""
    return apply_rules(func, Target(target), rules)


def random_inputs(func, shapes=None, seed=0):
    """Random arrays for every parameter buffer (`shapes`: {param index: shape} for symbolic ones)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for n, p in enumerate(func.params):
        buf = func.buffer_map[p]
        shape = (shapes or {}).get(n) or [int(s) for s in buf.shape]
        dtype = np.dtype(to_numpy_dtype(buf.dtype))
        if dtype.kind == "f":
            arrays.append(np.asarray(rng.random(shape) * 2 - 1).astype(dtype))
        else:
            arrays.append(np.asarray(rng.integers(0, 4, shape)).astype(dtype))
    return arrays


def run_both(func, rules, outputs, shapes=None, target="opencl"):
    """(CPU results, OpenCL results) of the buffers at `outputs`, the GPU build scheduled by `rules`."""
    scheduled = schedule(func, rules, target)
    assert scheduled is not None, f"no rule of {[r.name for r in rules]} applies"
    dev = opencl_device()
    arrays = random_inputs(func, shapes)
    cpu = graphc.build(IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")
    host = [a.copy() for a in arrays]
    cpu["main"](*host)
    gpu = graphc.build(IRModule({"main": scheduled.with_attr("global_symbol", "main")}), target=target)
    tensors = [graphc.runtime.tensor(a, dev) for a in arrays]
    gpu["main"](*tensors)
    return [host[k] for k in outputs], [tensors[k].numpy() for k in outputs]


def check_cubins(mod, archs=("sm_80", "sm_90")):
    """Compile `mod` for each CUDA architecture; fail naming any kernel that spills registers.
    Returns {arch: {kernel: usage}}."""
    require_nvrtc()
    usage = {}
    for arch in archs:
        lib = graphc.build(mod, target=f"cuda -arch={arch}")
        info = lib.imported_modules[0].kernel_info
        spills = [f"{name} ({arch}): {u[arch]['spill_stores']} B spill stores" for name, u in info.items()
                  if u[arch]["spill_stores"] or u[arch]["spill_loads"]]
        assert not spills, "register spills: " + "; ".join(spills)
        usage[arch] = {name: u[arch] for name, u in info.items()}
    return usage
