"""The CUDA and OpenCL back ends: lowered PrimFuncs to a runtime `DeviceModule`.

After the common lowering (`graphc.lower`), each PrimFunc goes through the GPU passes:

    InjectDoubleBuffer     ping-pong shared tiles of loops annotated "double_buffer"
    InjectThreadSync       barriers where a block's threads share memory
    LowerThreadAllreduce   cross-thread reductions: warp shuffles (CUDA), shared-memory trees
    SplitHostDevice        host code that launches kernels + the kernels
    PartitionThreadGuard   full blocks skip the bound check of the last one
    verify_gpu_code        threads and shared memory per block against the target

The kernels are printed in the target's dialect by the C-family generator (CUDA C goes through
NVRTC to a cubin for `-arch`, default sm_80, and PTX; OpenCL C is compiled by the driver when
the module first runs on a device) and the host code is compiled by the LLVM back end for the
host CPU. Functions marked "tir.is_host_func" (the VM's shape functions) are rejected here:
the VM builds those for the CPU.

>>> import graphc
>>> from graphc import te
>>> A = te.placeholder((64,), name="A")
>>> B = te.compute((64,), lambda i: A[i] + 1.0, name="B")
>>> s = te.create_schedule(B.op)
>>> bx, tx = s[B].split(B.op.axis[0], factor=32)
>>> s[B].bind(bx, te.thread_axis("blockIdx.x")); s[B].bind(tx, te.thread_axis("threadIdx.x"))
>>> lib = graphc.build(s, [A, B], "opencl", name="inc")
>>> "__kernel void inc_kernel" in lib.imported_modules[0].get_source()
True
"""

from __future__ import annotations

from ..errors import CodegenError
from ..runtime.device_module import DeviceCode, DeviceModule
from ..runtime.module import Module
from ..tir.function import PrimFunc
from ..tir.transform.inject_double_buffer import inject_double_buffer
from ..tir.transform.inject_thread_sync import inject_thread_sync
from ..tir.transform.lower_thread_allreduce import lower_thread_allreduce
from ..tir.transform.split_host_device import split_host_device
from ..tir.transform.thread_guard_partition import partition_thread_guard
from ..tir.transform.verify_gpu_code import verify_gpu_code
from .source import DIALECTS, CodeGenC
from .target import Target


def device_passes(func: PrimFunc, target: Target) -> PrimFunc:
    """The GPU passes that run on a whole function, before it is split into host and kernels."""
    func = inject_thread_sync(inject_double_buffer(func))
    warp = target.thread_warp_size if target.kind == "cuda" else 1
    return lower_thread_allreduce(func, warp)


def split_module(mod, target: Target) -> tuple[dict, list]:
    """({name: host function}, kernels) of the lowered PrimFuncs of `mod`, checked for `target`."""
    hosts, kernels = {}, []
    for gv, func in mod.items():
        if not isinstance(func, PrimFunc):
            continue
        name = func.attrs.get("global_symbol") or gv.name_hint
        if func.attrs.get("tir.is_host_func"):
            raise CodegenError(f"{name} is marked tir.is_host_func (it runs on the CPU); build it for 'llvm'")
        host, found = split_host_device(device_passes(func, target), name, len(kernels))
        for kernel in found:
            kernel = partition_thread_guard(kernel)
            verify_gpu_code(kernel, target.max_num_threads, target.max_shared_memory_per_block)
            kernels.append(kernel)
        hosts[name] = host
    if not hosts:
        raise CodegenError("the module has no PrimFunc to compile")
    return hosts, kernels


def build_host(hosts: dict, kind: str) -> Module:
    """The host functions compiled for this CPU; their arguments must live on a `kind` device."""
    from .llvm.build import compile_ir
    from .llvm.codegen import CodeGenLLVM

    target = Target("llvm")
    cg, metas = CodeGenLLVM(target), []
    for name, func in hosts.items():
        meta = cg.add_function(name, func)
        meta["device"] = kind
        for param in meta["params"]:
            if param["kind"] == "buffer":
                param["align"] = 0  # device memory: kernels assume only element alignment
        metas.append(meta)
    obj, ll = compile_ir(str(cg.module), target)
    info = {"triple": target.triple, "cpu": target.mcpu, "features": ",".join(target.mattr),
            "opt": target.opt_level, "str": "llvm"}
    return Module(obj, metas, info, ll)


def compile_device(kind: str, source: str, target: Target, kernels=()) -> tuple[dict, str | None, dict]:
    """(binaries, PTX, info per kernel of `kernels`) of the device source; OpenCL compiles at load time."""
    if kind != "cuda":
        return {}, None, {}
    from .nvrtc import compile_cuda, parse_ptxas_log

    cubin, ptx, log = compile_cuda(source, target.arch)
    usage = parse_ptxas_log(log)
    return {target.arch: cubin}, ptx, {name: {target.arch: usage[name]} for name in kernels if name in usage}


def build_gpu(mod, target: Target) -> DeviceModule:
    """Compile the lowered PrimFuncs of `mod` for the GPU `target` ("cuda" or "opencl")."""
    kind = target.kind
    hosts, kernels = split_module(mod, target)
    cg = CodeGenC(DIALECTS[kind], kind)
    metas = [cg.add_kernel(k) for k in kernels]
    source = cg.source()
    binaries, ptx, info = compile_device(kind, source, target, [m["name"] for m in metas])
    code = DeviceCode(kind, source, metas, binaries, ptx, info)
    info = {"str": str(target), "kind": kind, "arch": target.arch}
    return DeviceModule(build_host(hosts, kind), code, info)


__all__ = ["build_gpu", "build_host", "device_passes", "split_module"]
