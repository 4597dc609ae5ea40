"""How far each tuned kernel is from what the machine allows: the per-task floor table.

A kernel cannot run faster than its floating-point work at the machine's peak rate, nor than
moving its arguments' bytes at the machine's bandwidth: its floor is the larger of the two,
`max(flops / peak, bytes / bandwidth)`. Both rates are measured beside the kernel, in the
same interleaved rounds (`time_tasks`: default, tuned, peak probe, bandwidth probe, default,
...), so a load that comes and goes on the machine lowers them with the kernel's own speed:
the peak is the best of three matmul probes (`Probes.rates`: numpy's 512^3 float32 matmul on
one thread times the cores, numpy's 1024^3 on BLAS's own threads, and graphc's register-tiled
matmul kernel, `benchmarks/matmul.py`'s micro-kernel, on an L2-sized 256^3 problem on one
thread times the threads; `machine_peak` is the same probe for `benchmarks/models.py`), the
bandwidth a copy moving as many bytes as the kernel's arguments hold (one thread and two, the
better), so a kernel whose arguments fit in a cache is held to the cache's bandwidth, not to
the memory's. (numpy's 512^3 alone, OpenBLAS's kernel for this CPU, underrated znver5's
AVX-512 peak about 2x: kernels ran faster than their floor.)
`floor_rows` / `format_floor_table` put them together: per task its calls per model run,
FLOPs, bytes, the two times, the floor, the default's distance to it and its share of the
model's time.

>>> row = FloorRow("softmax", calls=12, flops=10**6, bytes=2 << 20, default=4e-4, tuned=3e-4)
>>> row = row.with_floor(gflops=100.0, gbs=50.0)
>>> row.bound, round(row.floor * 1e6, 1), round(row.at_floor, 2)
('memory', 41.9, 0.1)
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np


def _seconds(fn, min_seconds: float, min_calls: int = 5) -> float:
    """Seconds of the fastest call of `fn` among enough calls to last `min_seconds` (`min_calls` at least),
    after one warm-up call: on a loaded machine most calls of a parallel kernel wait for its
    threads (`measure._time_interleaved`), and the kernel and its floor are held alike."""
    fn()
    fastest, calls, begin = math.inf, 0, time.perf_counter()
    while calls < min_calls or (calls < 10000 and time.perf_counter() - begin < min_seconds):
        start = time.perf_counter()
        fn()
        fastest = min(fastest, time.perf_counter() - start)
        calls += 1
    return fastest


class Probes:
    """The machine's rates, measured on demand: `gflops()` the matmul peak, the best of `rates()`
    (module docstring; the one-thread probes times the cores: one thread's fastest call is
    clean on a loaded machine far more often than a two-thread call, whose second thread waits
    in the run queue: under load 20 numpy's two-thread 1024^3 matmul gave 7-25 GFLOP/s at best,
    so that probe only counts on a quiet machine); `copy(nbytes)` seconds of a copy moving
    `nbytes` (read and written), on one thread or two (whichever is faster now)."""

    KERNEL_SIZE = 256  # the micro-kernel's problem: A, B and C (768 KiB) stay in L2

    def __init__(self, kernel: bool = True):
        import os
        from concurrent.futures import ThreadPoolExecutor

        rng = np.random.default_rng(0)
        self.a = rng.standard_normal((512, 512), "float32")
        self.big = rng.standard_normal((1024, 1024), "float32")
        self.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        self.pool = ThreadPoolExecutor(2)
        self._arrays: dict = {}
        self._kernel = None if kernel else False  # built on first use (a second of compiling)

    def close(self) -> None:
        self.pool.shutdown()

    def gflops(self, min_seconds: float = 0.02) -> float:
        """The matmul peak now, GFLOP/s: the best of `rates`."""
        return max(self.rates(min_seconds).values())

    def rates(self, min_seconds: float = 0.02) -> dict:
        """{probe: GFLOP/s} of each matmul probe (module docstring), measured now."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            one = _seconds(lambda: self.a @ self.a, min_seconds)
        out = {"numpy 512^3 x cores": 2 * 512**3 / one / 1e9 * self.cores,
               # 5-200 ms a call (quiet or loaded machine): two calls after the warm-up
               "numpy 1024^3": 2 * 1024**3 / _seconds(lambda: self.big @ self.big, min_seconds, 2) / 1e9}
        kernel = self._micro_kernel()
        if kernel:
            from ..runtime import get_num_threads, set_num_threads

            run, args, n = kernel
            threads = get_num_threads()
            set_num_threads(1)
            try:
                seconds = _seconds(lambda: run(*args), min_seconds)
            finally:
                set_num_threads(threads)
            out["micro-kernel x threads"] = 2 * n**3 / seconds / 1e9 * threads
        return out

    def _micro_kernel(self):
        """(kernel, runtime tensors, n) of graphc's default matmul schedule for this CPU (the
        register-tiled micro-kernel of `dlight.cpu.Matmul`) on n^3 = KERNEL_SIZE^3; False when
        it does not build here."""
        if self._kernel is None:
            import graphc
            from graphc import te
            from graphc.ir.module import IRModule
            from graphc.runtime import tensor

            from .space import sample_schedule, scheduled_func

            n = self.KERNEL_SIZE
            A = te.placeholder((n, n), "float32", name="A")
            B = te.placeholder((n, n), "float32", name="B")
            k = te.reduce_axis((0, n), "k")
            C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
            try:
                func = scheduled_func(sample_schedule(te.create_prim_func([A, B, C]), "llvm"))
                lib = graphc.build(IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")
            except Exception:  # noqa: BLE001 - a probe, not the kernel under test: do without it
                self._kernel = False
            else:
                rng = np.random.default_rng(1)
                args = [tensor(rng.standard_normal((n, n), "float32")) for _ in range(2)]
                self._kernel = (lib["main"], [*args, tensor(np.zeros((n, n), "float32"))], n)
        return self._kernel

    def copy(self, nbytes: int, min_seconds: float = 0.02) -> float:
        if nbytes not in self._arrays:
            src = np.ones(max(nbytes // 8, 2), "float32")
            self._arrays[nbytes] = (src, np.empty_like(src), src.size // 2)
        src, dst, half = self._arrays[nbytes]
        halves = (slice(0, half), slice(half, None))

        def two():
            list(self.pool.map(lambda s: np.copyto(dst[s], src[s]), halves))

        return min(_seconds(lambda: np.copyto(dst, src), min_seconds), _seconds(two, min_seconds))


@dataclasses.dataclass(frozen=True)
class FloorRow:
    """One task: calls per model run, FLOPs, argument bytes, default and tuned seconds per call,
    and (after `with_floor`) the floor in seconds and what sets it ("compute" or "memory")."""

    name: str
    calls: int
    flops: int
    bytes: int
    default: float
    tuned: float
    floor: float = 0.0
    bound: str = ""
    gflops: float = 0.0  # the peak and the bandwidth the floor was computed with
    gbs: float = 0.0

    def with_floor(self, gflops: float, gbs: float) -> FloorRow:
        """The row with its floor at a peak of `gflops` GFLOP/s and a bandwidth of `gbs` GB/s."""
        if not (gflops > 0 and gbs > 0):
            raise ValueError(f"task {self.name}: the floor needs a positive peak and bandwidth, got "
                             f"{gflops} GFLOP/s and {gbs} GB/s")
        compute = self.flops / (gflops * 1e9)
        memory = self.bytes / (gbs * 1e9)
        return dataclasses.replace(self, floor=max(compute, memory), gflops=gflops, gbs=gbs,
                                   bound="compute" if compute >= memory else "memory")

    @property
    def at_floor(self) -> float:
        """The floor over the default's time: 1.0 at the floor, 0.1 ten times slower than it."""
        return self.floor / self.default if self.default > 0 else 0.0


def floor_rows(tasks, times: dict) -> list[FloorRow]:
    """A row per task that has times (`times[task.workload]` = (default s, tuned s, GFLOP/s,
    GB/s): its kernels' times and the machine's rates measured beside them), most of the
    default model time (calls x default) first."""
    from ..tir.analysis.flops import argument_bytes

    rows = []
    for task in tasks:
        if task.workload not in times:
            continue
        default, tuned, gflops, gbs = times[task.workload]
        nbytes = argument_bytes(task.func) or 0
        row = FloorRow(task.name, task.weight, task.flops or 0, nbytes, default, tuned)
        rows.append(row.with_floor(gflops, gbs))
    return sorted(rows, key=lambda r: -r.calls * r.default)


def shares(rows: list[FloorRow]) -> list[float]:
    """Each row's share of the tasks' default time (calls x default time); they sum to 1."""
    total = sum(r.calls * r.default for r in rows)
    return [r.calls * r.default / total if total > 0 else 0.0 for r in rows]


def format_floor_table(rows: list[FloorRow]) -> str:
    """The table `benchmarks/tuning.py` prints: per task, and the totals over the tasks (calls x
    time): the default, the tuned, the floor, and so the most any schedule could gain."""
    lines = [f"{'task':<34} {'calls':>5} {'MFLOP':>8} {'KiB':>6} {'default us':>10} {'tuned us':>9} "
             f"{'floor us':>9} {'bound':>7} {'GFLOP/s':>7} {'GB/s':>5} {'%floor':>6} {'share':>6}"]
    for r, share in zip(rows, shares(rows)):
        lines.append(f"{r.name[:34]:<34} {r.calls:>5} {r.flops / 1e6:>8.1f} {r.bytes / 1024:>6.0f} "
                     f"{r.default * 1e6:>10.1f} {r.tuned * 1e6:>9.1f} {r.floor * 1e6:>9.1f} {r.bound:>7} "
                     f"{r.gflops:>7.0f} {r.gbs:>5.0f} {100 * r.at_floor:>5.0f}% "
                     f"{100 * share:>5.1f}%{' *' if min(r.default, r.tuned) < r.floor else ''}")
    default = sum(r.calls * r.default for r in rows)
    tuned = sum(r.calls * r.tuned for r in rows)
    floor = sum(r.calls * r.floor for r in rows)
    if rows and floor > 0:
        lines.append(f"{'all tasks (calls x time)':<34} {'':>5} {'':>8} {'':>6} {default * 1e6:>10.1f} "
                     f"{tuned * 1e6:>9.1f} {floor * 1e6:>9.1f} {'':>7} {'':>7} {'':>5} "
                     f"{100 * floor / default:>5.0f}% {100.0:>5.1f}%")
        lines.append("(floor: max(FLOPs / the matmul peak, bytes / the copy bandwidth at that size), both "
                     "measured beside the kernel; %floor: the floor over the default's time; share: of "
                     "calls x default time)")
        if any(min(r.default, r.tuned) < r.floor for r in rows):
            lines.append("*: a kernel ran faster than its floor: the probe underrates the machine there "
                         "(numpy's BLAS may use narrower vectors than the kernel, or the kernel's data "
                         "stayed in a cache the copy of its size does not)")
        lines.append(f"the most any schedule of these kernels could gain: {default / floor:.2f}x over the "
                     f"default, {tuned / floor:.2f}x over the tuned")
    return "\n".join(lines)


def machine_peak(repeat: int = 10, min_seconds: float = 0.02) -> tuple[float, str]:
    """(GFLOP/s, how it was found): the machine's matmul peak, the best of `repeat` rounds of
    `Probes.rates` (what `benchmarks/models.py` prints as the measured peak)."""
    probes = Probes()
    best: dict = {}
    try:
        for _ in range(repeat):
            for name, rate in probes.rates(min_seconds).items():
                best[name] = max(best.get(name, 0.0), rate)
    finally:
        probes.close()
    return max(best.values()), ", ".join(f"{name} {rate:.0f} GFLOP/s" for name, rate in best.items())


def time_tasks(tasks, db, target, repeat: int = 5, min_seconds: float = 0.02) -> dict:
    """{workload: (default s, tuned s, GFLOP/s, GB/s)} of each task: its default schedule and its
    best record (the default's when it has none), built as `graphc.compile` builds them and
    timed here on the inputs and the packed weights the tuner's runner uses, interleaved with
    the machine's peak (`Probes.gflops`) and bandwidth (a copy of the kernel's argument bytes):
    `repeat` rounds of the four, the best of each."""
    from ..target import Target
    from ..tir.analysis.flops import argument_bytes
    from .apply import replay
    from .measure import _build_and_check, random_inputs
    from .space import sample_schedule

    target = Target.resolve(target)
    probes = Probes()
    out = {}
    try:
        for task in tasks:
            sch = sample_schedule(task.func, target)
            if sch is None:
                continue
            default_func = sch.mod[sch.func_name]
            best = db.best(task.workload, target) if db is not None else None
            tuned_func = replay(task.func, best) if best is not None and not best.default else default_func
            inputs = random_inputs(task.func)
            fns = []
            for func in (default_func, tuned_func):
                status, error, _, built = _build_and_check(func, target, inputs, None)
                if built is None:
                    raise RuntimeError(f"task {task.name}: its kernel did not build or run: {status}: "
                                       f"{error}")
                kernel, args, _ = built
                fns.append(lambda kernel=kernel, args=args: _seconds(lambda: kernel(*args), min_seconds))
            nbytes = argument_bytes(task.func) or 0
            fns.append(lambda: 1.0 / probes.gflops(min_seconds))  # the fastest: the highest rate
            fns.append(lambda nbytes=nbytes: probes.copy(nbytes, min_seconds))
            best_times = [math.inf] * len(fns)
            for r in range(repeat):
                for j in range(len(fns)):
                    k = (j + r) % len(fns)
                    best_times[k] = min(best_times[k], fns[k]())
            default, tuned, inverse_gflops, copy = best_times
            out[task.workload] = (default, tuned, 1.0 / inverse_gflops, nbytes / copy / 1e9)
    finally:
        probes.close()
    return out


__all__ = ["FloorRow", "Probes", "floor_rows", "format_floor_table", "machine_peak", "shares", "time_tasks"]
