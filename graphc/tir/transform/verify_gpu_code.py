"""`verify_gpu_code`: check a kernel against the limits of the GPU it is built for.

TVM's VerifyGPUCode: threads per block (the product of the `threadIdx` extents), each
`threadIdx` extent, and the shared memory one block allocates must fit the target. Thread
extents and shared allocations must be constants. A kernel over a limit raises a
`VerifyError` naming the kernel, what it uses, the limit and what to change.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((2048,), "float32")):
...     tx = T.launch_thread("threadIdx.x", 2048)
...     A[tx] = T.float32(0)
... ''').with_attr("global_symbol", "zero_kernel")
>>> try:
...     verify_gpu_code(f, max_threads_per_block=1024, max_shared_memory_per_block=49152)
... except VerifyError as err:
...     print(err)
kernel zero_kernel uses 2048 threads per block (threadIdx.x=2048), more than the target allows
(1024); split the loop bound to threadIdx.x and bind the outer part to blockIdx
"""

from __future__ import annotations

from ...errors import VerifyError
from ...ir.dtype import DataType
from ..analysis.thread_scope import kernel_roots, launch_extents
from ..expr import IntImm
from ..function import PrimFunc
from ..schedule.state import walk
from ..stmt import Allocate
from .inject_thread_sync import SHARED_SCOPES

# per-dimension limits of CUDA (and of any OpenCL device we target; the runtime checks the device)
MAX_THREAD_DIM = {"threadIdx.x": 1024, "threadIdx.y": 1024, "threadIdx.z": 64}


def verify_gpu_code(func: PrimFunc, max_threads_per_block: int, max_shared_memory_per_block: int) -> dict:
    """Check every kernel region of `func`; returns {"threads": .., "shared_bytes": ..} of the last."""
    name = func.attrs.get("global_symbol", "main")
    usage: dict = {"threads": 0, "shared_bytes": 0}
    for root in kernel_roots(func.body):
        extents = launch_extents(root)
        threads, parts = 1, []
        for tag in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
            if tag not in extents:
                continue
            ext = extents[tag]
            if not isinstance(ext, IntImm):
                raise VerifyError(f"kernel {name} launches {tag} with a non-constant extent {ext}; split the "
                                  f"loop bound to {tag} by a constant factor")
            threads *= ext.value
            parts.append((tag, ext.value))
        if threads > max_threads_per_block:
            widest = max(parts, key=lambda p: p[1])[0]
            raise VerifyError(
                f"kernel {name} uses {threads} threads per block "
                f"({' * '.join(f'{t}={v}' for t, v in parts)}), more than the target allows "
                f"({max_threads_per_block}); split the loop bound to {widest} and bind the outer part to "
                "blockIdx")
        for tag, value in parts:
            if value > MAX_THREAD_DIM[tag]:
                raise VerifyError(f"kernel {name} launches {value} threads on {tag}, more than the "
                                  f"{MAX_THREAD_DIM[tag]} a block may have on that axis")
        shared = 0
        for stmt in walk(root):
            if isinstance(stmt, Allocate) and stmt.scope in SHARED_SCOPES:
                size = DataType(stmt.dtype).itemsize
                for extent in stmt.extents:
                    if not isinstance(extent, IntImm):
                        raise VerifyError(f"kernel {name} allocates {stmt.scope} buffer "
                                          f"{stmt.buffer_var.name} "
                                          f"with a non-constant size {extent}; shared memory is sized at "
                                          "compile time")
                    size *= extent.value
                shared += size
        if shared > max_shared_memory_per_block:
            raise VerifyError(
                f"kernel {name} allocates {shared} bytes of shared memory per block, more than the target "
                f"allows ({max_shared_memory_per_block}); use smaller tiles")
        usage = {"threads": threads, "shared_bytes": shared}
    return usage


__all__ = ["MAX_THREAD_DIM", "verify_gpu_code"]
