"""Time the unscheduled 1024x1024x1024 float32 matmul built by graphc against numpy's.

Run: `.venv/bin/python benchmarks/matmul_unscheduled.py`

No threshold: this is the baseline the schedule issue improves on. numpy's matmul is slowed
on this machine by OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE; run with both unset
(`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ...`) to compare against its best kernel.
The floor: 2*1024^3 FLOPs = 2.1 GFLOP; at the machine's ~400 GFLOP/s peak that is ~5 ms.
"""

import os
import time

import numpy as np

import graphc
from graphc import te

M = K = N = 1024


def numpy_ms(a, b, repeat=5) -> float:
    a @ b
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main() -> None:
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    start = time.perf_counter()
    lib = graphc.build(te.create_prim_func([A, B, C]), target="llvm")
    build_s = time.perf_counter() - start

    a = graphc.nd.array(np.random.rand(M, K).astype("float32"))
    b = graphc.nd.array(np.random.rand(K, N).astype("float32"))
    c = graphc.nd.empty((M, N), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-3)
    graphc_ms = lib.time_evaluator("main", graphc.cpu(), number=1, repeat=3)(a, b, c).min * 1e3
    np_ms = numpy_ms(a.numpy(), b.numpy())

    env = {k: os.environ.get(k, "unset") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    print(f"1024^3 float32 matmul  (OpenBLAS env: {env})")
    print(f"  graphc build time         {build_s:8.2f} s")
    print(
        f"  graphc unscheduled        {graphc_ms:8.1f} ms  ({2 * M * N * K / graphc_ms / 1e6:6.1f} GFLOP/s)"
    )
    print(f"  numpy                     {np_ms:8.1f} ms  ({2 * M * N * K / np_ms / 1e6:6.1f} GFLOP/s)")
    print(f"  ratio graphc / numpy      {graphc_ms / np_ms:8.1f}x")


if __name__ == "__main__":
    main()
