"""The MLC notebook's matmul progression (tensor_program_abstraction.md) timed against numpy.

Run: `.venv/bin/python benchmarks/matmul.py [--size 1024] [--repeat 20]`
(`GRAPHC_NUM_THREADS=k` picks the thread count of `parallel` loops.)

C[M, N] = A[M, K] @ B[K, N] in float32, built four ways and timed in one run with numpy's
`a @ b` on the same arrays:

1. naive: `te.create_prim_func`, unscheduled (three nested loops, k innermost);
2. blocked: the notebook's 32x32 tiling, `reorder(yo, xo, k, yi, xi)`;
3. blocked + parallel: the same with `parallel(yo)`;
4. micro-kernel: a register-blocked schedule written once by hand (see `schedule_microkernel`);
5. the default CPU rules (`dlight.cpu.Matmul`, what that micro-kernel became), B an input;
6. `graphc.compile` with B a constant: the same kernel, B packed once at compile time.

Rows 2 and 3 are the notebook's schedules as written; what makes them fast is done by
`graphc.build`'s lowering pipeline for any CPU kernel of that shape (docs/codegen.md, "Cache-aware
lowering of reductions"). At N = K = 1024 the 32 rows of the C tile, and the 32 rows of A one k
step reads, lie 4 KB apart and share one L1 set, so as written every update of the tile and
every read of A goes to L2 (~200 ms on 2 cores). `PromoteReductionAccumulator` accumulates the
C tile in a dense 4 KB local buffer written back once per (yo, xo) (the effect of
`cache_write(C, 0, "local")` + `reverse_compute_at(.., xo)`: ~50 ms), and
`PadConflictingOperandTile` copies the 32 x K rows of A once per yo into a buffer whose rows
are 4 KB + 64 bytes apart (`cache_read` + `compute_at(.., yo)` + `storage_align`: ~21 ms, 2x
numpy). Build with `PassContext(config={"tir.PromoteReductionAccumulator": {"enabled": False},
"tir.PadConflictingOperandTile": {"enabled": False}})` to time the loops exactly as written.
The micro-kernel stages its own tiles and lowers the same with or without them.

numpy runs twice: in this process (OpenBLAS as the environment configured it) and in a
subprocess started with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from its environment
(OpenBLAS reads them when it loads, so only a fresh process sees them unset), which picks
the kernel OpenBLAS chooses for this CPU. Each row gives the best and median milliseconds,
GFLOP/s and the ratio graphc / numpy (best against best). The floor is 2*M*N*K FLOPs over
the machine's peak, measured roughly as the best rate seen: numpy's best, a graphc row's,
or the thread count times one core's rate (the micro-kernel on one thread on a 256^3
problem that stays in cache). numpy is timed before and after the graphc rows (other
processes change the load) and the better of the two is kept; the load average is printed
with the numbers. On a 2-core machine a busy neighbour process makes every two-thread
region wait for a scheduler time slice: compare runs whose load average is below ~1.5.

The schedule functions are importable (tests/test_matmul_schedules.py checks each against
numpy at 128^3); each takes (M, N, K) and returns the scheduled IRModule.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import time

import numpy as np

import graphc
from graphc import te, tir
from graphc.ir import IRModule
from graphc.target import Target

OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# -- the tensor program and its schedules ----------------------------------------------------


def matmul(M: int, N: int, K: int) -> tir.PrimFunc:
    """C[m, n] = sum_k A[m, k] * B[k, n], float32, as the notebook writes it."""
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def schedule_naive(M: int, N: int, K: int):
    """1. Unscheduled: for m, n, k (k innermost, B read down a column)."""
    return tir.Schedule(matmul(M, N, K)).mod


def _blocked(M: int, N: int, K: int, parallel: bool):
    sch = tir.Schedule(matmul(M, N, K))
    block_c = sch.get_block("C")
    y, x, k = sch.get_loops(block_c)
    yo, yi = sch.split(y, [None, 32])
    xo, xi = sch.split(x, [None, 32])
    sch.reorder(yo, xo, k, yi, xi)
    if parallel:
        sch.parallel(yo)
    return sch.mod


def schedule_blocked(M: int, N: int, K: int):
    """2. The notebook's 32x32 blocking: yo, xo, k, yi, xi (B and C rows contiguous in xi).

    As written, for every k the 32x32 tile of C is read and written back, and at N = 1024 its
    32 rows are 4 KB apart and fall into the same L1 set (at N = 1056 the same loops run ~6x
    faster); the lowering pipeline accumulates the tile locally and pads A's rows (see the
    module docstring)."""
    return _blocked(M, N, K, parallel=False)


def schedule_blocked_parallel(M: int, N: int, K: int):
    """3. The notebook's blocking with the outer row-tile loop `yo` parallel."""
    return _blocked(M, N, K, parallel=True)


# register tile of the micro-kernel: MR rows x NR columns of C held in zmm registers
MR, NR, VEC = 4, 64, 16  # 4 x (64 / 16) = 16 accumulators of 16 float32 lanes


def schedule_microkernel(M: int, N: int, K: int, mr: int = MR, nr: int = NR, vec: int = VEC):
    """4. A register-blocked micro-kernel, written once (no search).

    Loop nest (M = N = K = 1024):

        for n_0 in parallel(N / nr):         # a panel of nr = 64 columns per iteration
            B_global[K, nr] = B[:, panel]    # pack the panel contiguously (256 KB, L2)
            for m_0 in range(M / mr):        # a register tile of mr = 4 rows
                C_local[mr, nr] = 0          # init hoisted out of k (decompose_reduction)
                for k in range(K):           # k outside the register tile
                    for m_1 in unroll(mr):       # 4 broadcasts of A[m, k]
                        for n_1 in unroll(nr / 16):
                            for n_2 in vectorized(16):   # one zmm FMA
                                C_local[m_1, n_1*16+n_2] += A[m, k] * B_global[k, n]
                C[tile] = C_local            # write back once per tile

    C_local is a 4 x 64 alloca indexed only by constants once m_1 / n_1 are unrolled, so LLVM
    keeps it in 16 zmm registers; each k step is 4 vector loads of B, 4 broadcasts of A and
    16 `vfmadd231ps` on zmm. The B panel is packed inside the timed call (once per panel,
    K * N copies in all); nothing is prepacked. The panel keeps B's rows, 4 KB apart at
    N = 1024, from competing for the same L1 sets (packing is worth ~4% on one core).
    """
    sch = tir.Schedule(matmul(M, N, K))
    block_c = sch.get_block("C")
    b_panel = sch.cache_read(block_c, 1, "global")
    c_write_back = sch.cache_write(block_c, 0, "local")
    m, n, k = sch.get_loops(block_c)
    m_0, m_1 = sch.split(m, [None, mr])
    n_0, n_1, n_2 = sch.split(n, [None, nr // vec, vec])
    sch.reorder(n_0, m_0, k, m_1, n_1, n_2)
    sch.compute_at(b_panel, n_0)
    sch.reverse_compute_at(c_write_back, m_0)
    init = sch.decompose_reduction(block_c, k)
    sch.unroll(m_1)
    sch.unroll(n_1)
    sch.vectorize(n_2)
    for block in (b_panel, c_write_back, init):  # the copies and the init: vectorize the row
        sch.vectorize(sch.get_loops(block)[-1])
    sch.parallel(n_0)
    return sch.mod


def schedule_default(M: int, N: int, K: int):
    """5. What `graphc.compile` does with no hand-written schedule: the default CPU rules
    (`dlight.cpu.Matmul`, sized from the target: 4 x 64 tiles here, B packed into panels by each
    parallel task on every call, since B is an input)."""
    from graphc import dlight

    mod = IRModule({"main": matmul(M, N, K)})
    with Target("llvm"):
        return dlight.default_schedule()(mod)


SCHEDULES = {
    "naive": schedule_naive,
    "blocked 32x32": schedule_blocked,
    "blocked 32x32 + parallel": schedule_blocked_parallel,
    "micro-kernel 4x64 (best)": schedule_microkernel,
    "dlight default rules": schedule_default,
}


def compiled_constant_b(b: np.ndarray):
    """6. `graphc.compile` of `A @ B` with B a constant (a weight): the default rules plus the
    layout rewrite, so B is packed once at compile time. Returns a function of A."""
    from graphc import relax

    K, _ = b.shape

    def run_factory(M: int):
        x = relax.Var("A", relax.TensorStructInfo((M, K), "float32"))
        bb = relax.BlockBuilder()
        with bb.function("main", [x], attrs={"num_input": 1}):
            with bb.dataflow():
                out = bb.emit_output(relax.op.matmul(x, relax.const(b)))
            bb.emit_func_output(out)
        vm = relax.VirtualMachine(graphc.compile(bb.get()), graphc.cpu())
        return vm["main"]

    return run_factory


def build(mod, target: str = "llvm"):
    return graphc.build(mod, target=target)


# -- timing ------------------------------------------------------------------------------------


def _stats(seconds) -> dict:
    ms = sorted(s * 1e3 for s in seconds)
    return {"best": ms[0], "median": ms[len(ms) // 2]}


def time_numpy(a: np.ndarray, b: np.ndarray, repeat: int) -> dict:
    """Best and median ms of `a @ b` after warming up for half a second.

    In a fresh process OpenBLAS's first calls are slow (~16 ms each at 256^3 on the 2-core
    machine, for the first ~0.1 s): its thread pool is still starting."""
    start = time.perf_counter()
    while time.perf_counter() - start < 0.5:
        a @ b
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return _stats(times)


def openblas_kernel() -> str:
    """The core type OpenBLAS picked: threadpoolctl's report when installed, else OpenBLAS's own
    `openblas_get_corename` found through ctypes."""
    try:
        import threadpoolctl

        infos = [i for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
        if infos:
            return f"{infos[0].get('architecture')} (threadpoolctl, {infos[0].get('num_threads')} threads)"
    except ImportError:
        pass
    import ctypes
    import glob

    libs_dir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(libs_dir, "*openblas*")):
        lib = ctypes.CDLL(path)  # already loaded by numpy: the same handle
        for sym in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return f"{fn().decode()} (threadpoolctl not installed; {sym} via ctypes)"
    return "unknown (threadpoolctl not installed, OpenBLAS library not found)"


def time_numpy_clean_env(M: int, N: int, K: int, repeat: int) -> dict:
    """`time_numpy` in a fresh interpreter whose environment lacks OPENBLAS_CORETYPE/L2_SIZE.

    The child runs only numpy and the source of the helpers below (not graphc)."""
    env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_VARS}
    helpers = "".join(inspect.getsource(f) for f in (_stats, time_numpy, openblas_kernel))
    code = (
        f"import json, os, time\nimport numpy as np\n{helpers}\n"
        f"rng = np.random.default_rng(0)\n"
        f"a = rng.random(({M}, {K}), dtype=np.float32)\nb = rng.random(({K}, {N}), dtype=np.float32)\n"
        f"print(json.dumps({{'time': time_numpy(a, b, {repeat}), 'kernel': openblas_kernel()}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def time_graphc(lib, args, number: int, repeat: int) -> dict:
    result = lib.time_evaluator("main", graphc.cpu(), number=number, repeat=repeat)(*args)
    return _stats(result.results)


def check(lib, a, b, expected) -> float:
    """Run `lib` once (warming it up) and compare with numpy; returns the seconds it took."""
    c = graphc.nd.empty(expected.shape, "float32")
    args = graphc.nd.array(a), graphc.nd.array(b), c
    start = time.perf_counter()
    lib["main"](*args)
    seconds = time.perf_counter() - start
    np.testing.assert_allclose(c.numpy(), expected, rtol=1e-4, atol=1e-3)
    return seconds


def core_peak(repeat: int, size: int = 256) -> float:
    """GFLOP/s of one core: the micro-kernel on one thread on a size^3 problem that stays in L2.

    One thread is much less disturbed than two by other processes on a small machine; the
    machine's peak is this times the thread count."""
    lib = build(schedule_microkernel(size, size, size))
    a = graphc.nd.array(np.random.rand(size, size).astype("float32"))
    b = graphc.nd.array(np.random.rand(size, size).astype("float32"))
    c = graphc.nd.empty((size, size), "float32")
    threads = graphc.runtime.get_num_threads()
    graphc.runtime.set_num_threads(1)
    try:
        lib["main"](a, b, c)
        best_ms = time_graphc(lib, (a, b, c), number=20, repeat=repeat)["best"]
    finally:
        graphc.runtime.set_num_threads(threads)
    return 2 * size**3 / best_ms / 1e6


# -- the benchmark -------------------------------------------------------------------------------


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1024, help="M = N = K (default 1024)")
    parser.add_argument("--repeat", type=int, default=20, help="timed repetitions per row (default 20)")
    parser.add_argument(
        "--slow-repeat",
        type=int,
        default=2,
        help="repetitions of schedules whose first call takes over 0.2 s (default 2)",
    )
    parser.add_argument(
        "--target",
        default="llvm",
        help='target of the graphc rows (default "llvm", the host CPU); e.g. '
        '"llvm -mattr=+prefer-no-gather,+prefer-no-scatter" keeps LLVM from vectorizing the '
        "blocked schedules' row loop with gathers",
    )
    parser.add_argument("--only", nargs="*", choices=[*SCHEDULES, "graphc.compile, B constant"],
                        help="time only these rows")
    opts = parser.parse_args(argv)
    M = N = K = opts.size
    flops = 2.0 * M * N * K
    gflops = lambda ms: flops / ms / 1e6  # noqa: E731

    rng = np.random.default_rng(0)
    a_np = rng.random((M, K), dtype=np.float32)
    b_np = rng.random((K, N), dtype=np.float32)
    expected = a_np @ b_np
    args = (graphc.nd.array(a_np), graphc.nd.array(b_np), graphc.nd.empty((M, N), "float32"))
    threads = graphc.runtime.get_num_threads()

    env_desc = ", ".join(f"{v}={os.environ.get(v, '(unset)')}" for v in OPENBLAS_VARS)
    print(
        f"matmul {M}x{K} @ {K}x{N} float32; graphc target {opts.target!r}, threads: {threads}; "
        f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(f"numpy (this process: {env_desc}): OpenBLAS kernel {openblas_kernel()}")
    # numpy is timed before and after the graphc rows (the machine's load changes); best of both
    np_env = [time_numpy(a_np, b_np, opts.repeat)]
    np_clean = [time_numpy_clean_env(M, N, K, opts.repeat)]
    print(f"numpy (subprocess, {' and '.join(OPENBLAS_VARS)} unset): OpenBLAS kernel {np_clean[0]['kernel']}")

    rows = []
    for name, schedule in SCHEDULES.items():
        if opts.only and name not in opts.only:
            continue
        start = time.perf_counter()
        lib = build(schedule(M, N, K), opts.target)
        build_s = time.perf_counter() - start
        first_s = check(lib, a_np, b_np, expected)
        repeat = opts.repeat if first_s < 0.2 else opts.slow_repeat
        rows.append((name, time_graphc(lib, args, number=1, repeat=repeat), f"build {build_s:.2f} s"))
        if schedule is schedule_microkernel:
            asm = lib.get_source("asm")
            zmm_fma = sum(1 for line in asm.splitlines() if "vfmadd231ps" in line and "zmm" in line)
            print(f"{name}: {zmm_fma} `vfmadd231ps ...zmm...` instructions in its assembly")
            graphc.runtime.set_num_threads(1)
            try:
                rows.append(
                    (f"{name}, 1 thread", time_graphc(lib, args, number=1, repeat=opts.repeat), "one core")
                )
            finally:
                graphc.runtime.set_num_threads(threads)

    if not opts.only or "graphc.compile, B constant" in opts.only:
        start = time.perf_counter()
        fn = compiled_constant_b(b_np)(M)
        build_s = time.perf_counter() - start
        a_dev = graphc.nd.array(a_np)
        np.testing.assert_allclose(fn(a_dev).numpy(), expected, rtol=1e-4, atol=1e-3)
        times = []
        for _ in range(opts.repeat):
            t0 = time.perf_counter()
            fn(a_dev)
            times.append(time.perf_counter() - t0)
        rows.append(("graphc.compile, B constant (prepacked)", _stats(times), f"compile {build_s:.2f} s"))

    np_env.append(time_numpy(a_np, b_np, opts.repeat))
    np_clean.append(time_numpy_clean_env(M, N, K, opts.repeat))
    np_env = {"best": min(t["best"] for t in np_env), "median": min(t["median"] for t in np_env)}
    np_clean = {
        "best": min(t["time"]["best"] for t in np_clean),
        "median": min(t["time"]["median"] for t in np_clean),
    }
    np_best = min(np_env["best"], np_clean["best"])
    one_core = core_peak(opts.repeat)
    peak = max([gflops(np_best), threads * one_core] + [gflops(t["best"]) for _, t, _ in rows])

    header = (
        f"{'':38s} {'best ms':>8s} {'median ms':>10s} {'GFLOP/s':>8s} {'/numpy env':>11s} "
        f"{'/numpy best':>12s}"
    )
    print()
    print(header)
    print("-" * len(header))

    def row(name, t, extra=""):
        print(
            f"{name:38s} {t['best']:8.2f} {t['median']:10.2f} {gflops(t['best']):8.1f} "
            f"{t['best'] / np_env['best']:10.2f}x {t['best'] / np_best:11.2f}x  {extra}"
        )

    row("numpy (environment as given)", np_env)
    row("numpy (OPENBLAS_* unset, subprocess)", np_clean)
    for name, t, extra in rows:
        row(name, t, extra)
    floor = flops / peak / 1e6
    print(
        f"{'floor: 2*M*N*K / peak':38s} {floor:8.2f} {'':10s} {peak:8.1f} {floor / np_env['best']:10.2f}x "
        f"{floor / np_best:11.2f}x"
    )
    print(
        f"\npeak = best rate seen: numpy or a graphc row at {M}^3 (numpy {gflops(np_best):.0f} GFLOP/s), "
        f"or {threads} threads x one core's rate (the micro-kernel on 256^3 in cache, 1 thread: "
        f"{one_core:.0f} GFLOP/s); ratios are best / best; "
        f"load average after: {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
