"""Measuring candidates without risking the tuner: build and run them in a worker process.

`LocalRunner` keeps one worker process (multiprocessing, "spawn": a fresh interpreter) and
sends it one candidate at a time: the scheduled PrimFunc, the inputs, and the outputs the
default schedule computed on them. The worker builds the kernel as `graphc.compile` does,
runs it once and compares every buffer with the reference (tolerance by dtype), and keeps it.
Then the batch's correct candidates are timed together with the default schedule,
interleaved: `repeat` rounds, each timing every kernel in turn (one warm-up call, then the
fastest of enough calls to last `min_repeat_ms`: see `_time_interleaved`), on runtime
tensors as the VM passes them. So
the default is never measured alone, first or cold, and a load that comes and goes on the
machine hits the default and the candidates alike: each result carries the default's times
of the same measurement (`MeasureResult.baseline`), and the tuner compares their ratio. A
weight the kernel packs in a block of its own is packed beforehand, as in the compiled model
(`_build_and_check`). A candidate that does not answer within `timeout` seconds (build and run together) is
recorded as "timeout" and its worker killed; one whose worker dies (a crash in the kernel)
as "failed"; a build error as "failed"; a wrong answer as "wrong". The next candidate gets a
fresh worker.

The runner is the builder/runner interface of the tuner: anything with `reference(task,
func)`, `measure(task, funcs)` and `close()` can stand in for it (a runner on a cluster).
"""

from __future__ import annotations

import dataclasses
import pickle
import time

import numpy as np

from ..tir.function import PrimFunc
from .tasks import Task


@dataclasses.dataclass
class MeasureResult:
    """How one candidate ended: status ("ok", "failed", "timeout", "wrong"), seconds per run."""

    status: str
    times: list = dataclasses.field(default_factory=list)
    error: str = ""
    baseline: list = dataclasses.field(default_factory=list)  # the default's times, measured alongside

    @property
    def time(self) -> float:
        return min(self.times) if self.status == "ok" and self.times else float("inf")

    @property
    def baseline_time(self) -> float:
        """The default schedule's best time in the same interleaved measurement (0: none)."""
        return min(self.baseline) if self.baseline else 0.0


def random_inputs(func: PrimFunc, seed: int = 0) -> list[np.ndarray]:
    """One array per parameter of `func`: floats in [-1, 1), integers in {0, 1} (safe as indices)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None:
            raise ValueError(f"kernel parameter {param.name} is not a buffer; only buffer arguments can be "
                             f"measured")
        shape = tuple(int(d.value if hasattr(d, "value") else d) for d in buf.shape)
        dtype = np.dtype(str(buf.dtype))
        if dtype.kind == "f":
            arrays.append(rng.uniform(-1, 1, shape).astype(dtype))
        elif dtype.kind == "b":
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
    return arrays


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing a candidate's output with the default schedule's."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return 0.0, 0.0
    if dtype.itemsize <= 2:
        return 2e-2, 2e-2
    if dtype.itemsize == 4:
        return 1e-3, 1e-4
    return 1e-7, 1e-9


class LocalRunner:
    """Build, check and time candidates in a local worker process (see the module docstring)."""

    def __init__(self, target="llvm", *, timeout: float = 10.0, repeat: int = 3, min_repeat_ms: float = 20.0,
                 startup_timeout: float = 120.0):
        from .database import target_key

        if timeout <= 0:
            raise ValueError(f"the measurement timeout must be positive, got {timeout}")
        self.target = target_key(target)
        self.timeout, self.repeat, self.min_repeat_ms = float(timeout), int(repeat), float(min_repeat_ms)
        self.startup_timeout = startup_timeout
        self._references: dict[str, tuple[list, list]] = {}
        self._process = None
        self._conn = None

    # -- the worker ------------------------------------------------------------------------------
    def _start(self) -> None:
        import os
        import subprocess
        import sys

        import graphc

        env = dict(os.environ)
        root = os.path.dirname(os.path.dirname(os.path.abspath(graphc.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        # a fresh interpreter (not a fork: the parent's threads and LLVM state stay behind)
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from graphc.tune.measure import _worker_main; _worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        if _receive(self._process, self.startup_timeout) != ("reply", "ready"):
            self.close()
            raise RuntimeError("the tuning worker process did not start")

    def close(self) -> None:
        """Stop the worker process."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                _send(process, None)
                process.wait(2)
            except (OSError, ValueError, TimeoutError, Exception):  # noqa: BLE001 - it is going anyway
                pass
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def __enter__(self) -> LocalRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _call(self, message, timeout: float) -> tuple[str, object]:
        """Send `message`; ("reply", value), ("timeout", None) or ("died", exit code)."""
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._start()
        try:
            _send(self._process, message)
        except OSError:
            pass  # it died: the receive says how
        how, value = _receive(self._process, timeout)
        if how != "reply":
            if how == "died":
                self._process.wait(5)
                value = self._process.returncode
            self.close()
        return how, value

    # -- the interface -----------------------------------------------------------------------------
    def reference(self, task: Task, func: PrimFunc) -> MeasureResult:
        """Run the default schedule `func` of `task` on random inputs; its outputs are the reference
        later candidates are checked against, and it is timed interleaved with every later batch
        of candidates (`MeasureResult.baseline`). Returns the default's own measurement."""
        inputs = random_inputs(task.func, seed=0)
        # the default schedule is known to work: a slow build on a busy machine is no reason to
        # drop the task, so it gets more time than a candidate
        timeout = max(self.timeout, 60.0)
        result, outputs = self._build(("default", task.workload), func, inputs, None, timeout)
        if result.status != "ok":
            return result
        self._references[task.workload] = (inputs, outputs, func)
        times = self._time([("default", task.workload)], max(self.repeat, 5), timeout, task)
        return MeasureResult("ok", times[0], baseline=list(times[0]))

    def measure(self, task: Task, funcs: list[PrimFunc], repeat: int | None = None) -> list[MeasureResult]:
        """Measure each candidate of `task` (after `reference`); one result each, in order.

        Each candidate is built and checked on its own (a crash or a hang costs only it), then
        the correct ones are timed together with the default schedule, interleaved (default,
        c1, c2, ..., default, c1, ...: a load that comes and goes hits them alike); each
        result's `baseline` holds the default's times of the same measurement."""
        if task.workload not in self._references:
            raise RuntimeError(f"task {task.name}: measure its default schedule with reference() first")
        inputs, expected, _ = self._references[task.workload]
        results, keys = [], []
        for k, func in enumerate(funcs):
            key = ("candidate", k)
            result, _ = self._build(key, func, inputs, expected, self.timeout)
            results.append(result)
            if result.status == "ok":
                keys.append((k, key))
        if keys:
            default = ("default", task.workload)
            times = self._time([default] + [key for _, key in keys], repeat or self.repeat,
                               self.timeout * (1 + len(keys)), task)
            if times is None:  # a kernel that ran once hung when timed: time them one by one
                for k, key in keys:
                    alone = self._time([default, key], repeat or self.repeat, self.timeout, task)
                    if alone is None:
                        results[k] = MeasureResult("timeout", error=f"no answer within {self.timeout:g} s "
                                                                    f"(timing)")
                    else:
                        results[k] = MeasureResult("ok", alone[1], baseline=alone[0])
            else:
                for (k, _), own in zip(keys, times[1:]):
                    results[k] = MeasureResult("ok", own, baseline=times[0])
        return results

    def _build(self, key, func, inputs, expected, timeout) -> tuple[MeasureResult, list | None]:
        """Build `func` in the worker, run it once and check it; the worker keeps it as `key`."""
        how, value = self._call(("build", key, func, self.target, inputs, expected), timeout)
        if how == "timeout":
            return MeasureResult("timeout", error=f"no answer within {timeout:g} s (build and run)"), None
        if how == "died":
            return MeasureResult("failed", error=f"the worker process died (exit code {value})"), None
        status, error, outputs = value
        return MeasureResult(status, [], error), outputs

    def _time(self, keys, repeat, timeout, task) -> list | None:
        """Times (seconds per run, `repeat` each) of the kernels the worker keeps as `keys`,
        measured interleaved; the default is built again in a fresh worker. None on a timeout."""
        for _ in range(2):
            how, value = self._call(("time", keys, repeat, self.min_repeat_ms), timeout)
            if how != "reply":
                return None
            if value[0] == "ok":
                return value[1]
            for key in value[1]:  # a fresh worker lacks the default (a crash restarted it)
                if key[0] != "default":
                    return None
                inputs, expected, func = self._references[task.workload]
                if self._build(key, func, inputs, expected, max(self.timeout, 60.0))[0].status != "ok":
                    return None
        return None


def _send(process, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    process.stdin.write(len(data).to_bytes(8, "little") + data)
    process.stdin.flush()


def _receive(process, timeout: float) -> tuple[str, object]:
    """("reply", message), ("timeout", None) or ("died", None) within `timeout` seconds."""
    import os
    import select

    fd, deadline, data, need = process.stdout.fileno(), time.monotonic() + timeout, b"", 8
    while len(data) < need:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return "timeout", None
        chunk = os.read(fd, max(need - len(data), 1 << 16) if need > 8 else 8 - len(data))
        if not chunk:
            return "died", None
        data += chunk
        if need == 8 and len(data) >= 8:
            need = 8 + int.from_bytes(data[:8], "little")
    return "reply", pickle.loads(data[8:need])


def _worker_main() -> None:
    """The worker process: answer measure requests on stdin/stdout until told to stop (None)."""
    import os
    import sys

    # messages go through the original stdout; anything printed goes to stderr instead
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    stdin = sys.stdin.buffer
    import graphc  # noqa: F401 - import once, before saying ready

    def send(message) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(len(data).to_bytes(8, "little") + data)
        out.flush()

    send("ready")
    kernels: dict = {}  # key -> (kernel, its arguments, seconds of one call)
    while True:
        header = stdin.read(8)
        if len(header) < 8:
            return
        message = pickle.loads(stdin.read(int.from_bytes(header, "little")))
        if message is None:
            return
        if message[0] == "build":
            _, key, func, target, inputs, expected = message
            kernels.pop(key, None)  # a candidate of an earlier batch
            status, error, outputs, built = _build_and_check(func, target, inputs, expected)
            if built is not None:
                kernels[key] = built
            send((status, error, outputs))
        elif message[0] == "time":
            _, keys, repeat, min_repeat_ms = message
            missing = [k for k in keys if k not in kernels]
            send(("missing", missing) if missing else
                 ("ok", _time_interleaved([kernels[k] for k in keys], repeat, min_repeat_ms)))


def _build_and_check(func, target, inputs, expected):
    """(status, error, outputs, (kernel, args, seconds of one call) or None) of one candidate;
    outputs only when `expected` is None.

    The kernel is built as `graphc.compile` builds it (the same lowering pipeline and code
    generator, `graphc.build`). A kernel that packs a weight in a block of its own (the
    layout-rewrite blocks of `dlight.cpu.Matmul`) is timed as the compiled model runs it: the
    packing split out (`split_preproc`, what `SplitLayoutRewritePreproc` does) and run once
    beforehand, the kernel timed on the packed weight."""
    import graphc
    from graphc.ir.module import IRModule
    from graphc.relax.transform.layout_rewrite import split_preproc
    from graphc.target import Target

    def build(f):
        return graphc.build(IRModule({"main": f.with_attr("global_symbol", "main")}), target=target)["main"]

    if not Target.resolve(target).is_cpu:
        return _build_and_check_device(func, target, inputs, expected, build)
    args = [a.copy() for a in inputs]
    try:
        kernel_func, preprocs = split_preproc(func)
        kernel = build(kernel_func)
        packs = [(index, build(pre), pre) for index, pre in preprocs]
    except Exception as err:  # noqa: BLE001 - any build error makes a failed candidate
        return "failed", f"build: {type(err).__name__}: {str(err)[:500]}", None, None
    try:
        for index, pack, pre in packs:
            buf = pre.buffer_map[pre.params[1]]
            packed = np.zeros(tuple(int(d) for d in buf.shape), np.dtype(str(buf.dtype)))
            pack(args[index], packed)
            args[index] = packed
        start = time.perf_counter()
        kernel(*args)
        once = time.perf_counter() - start
    except Exception as err:  # noqa: BLE001
        return "failed", f"run: {type(err).__name__}: {str(err)[:500]}", None, None
    packed_at = {index for index, _, _ in packs}
    outputs = [inputs[k] if k in packed_at else a for k, a in enumerate(args)]  # the weights as given
    if expected is not None:
        for index, (got, want) in enumerate(zip(outputs, expected)):
            rtol, atol = tolerance(want.dtype)
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                worst = float(np.max(np.abs(got.astype("float64") - want.astype("float64"))))
                error = f"argument {index} differs from the default schedule's (max error {worst:.3g})"
                return "wrong", error, None, None
    from graphc.runtime import tensor

    # the arguments as the VM passes them (runtime tensors, not numpy arrays converted per call)
    targs = [tensor(a) for a in args]
    start = time.perf_counter()
    kernel(*targs)  # a second, warm call sizes the measurements
    once = min(once, time.perf_counter() - start)
    return "ok", "", (outputs if expected is None else None), (kernel, targs, once)


def _check(outputs, expected):
    """(status, error) of a candidate's outputs against the default schedule's."""
    for index, (got, want) in enumerate(zip(outputs, expected)):
        rtol, atol = tolerance(want.dtype)
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            worst = float(np.max(np.abs(got.astype("float64") - want.astype("float64"))))
            return "wrong", f"argument {index} differs from the default schedule's (max error {worst:.3g})"
    return "ok", ""


def _build_and_check_device(func, target, inputs, expected, build):
    """`_build_and_check` for a GPU target: the arguments live on the target's device (the first
    one of its kind: PoCL's CPU device for OpenCL here), and a timed call waits for the device
    (`Device.sync`), so the times are the kernel's, launch included."""
    from graphc.runtime import device, tensor
    from graphc.target import Target

    dev = device(Target.resolve(target).kind, 0)
    try:
        kernel = build(func)
    except Exception as err:  # noqa: BLE001 - any build error makes a failed candidate
        return "failed", f"build: {type(err).__name__}: {str(err)[:500]}", None, None

    def run(*args):
        kernel(*args)
        dev.sync()

    try:
        targs = [tensor(a, dev) for a in inputs]
        start = time.perf_counter()
        run(*targs)
        once = time.perf_counter() - start
        outputs = [t.numpy() for t in targs]
    except Exception as err:  # noqa: BLE001
        return "failed", f"run: {type(err).__name__}: {str(err)[:500]}", None, None
    if expected is not None:
        status, error = _check(outputs, expected)
        if status != "ok":
            return status, error, None, None
    targs = [tensor(a, dev) for a in inputs]  # fresh inputs for the timing (outputs are overwritten)
    start = time.perf_counter()
    run(*targs)
    once = min(once, time.perf_counter() - start)
    return "ok", "", (outputs if expected is None else None), (run, targs, once)


def _time_interleaved(kernels, repeat, min_repeat_ms) -> list:
    """Seconds per call of each (kernel, args, once): `repeat` rounds, each timing every kernel
    in turn (the order rotating) for `min_repeat_ms` of calls (5 at least) after one untimed
    warm-up call; a round's time is the fastest single call of it.

    The fastest call, not the mean: on the shared 2-core machine under load, a parallel
    kernel's fork-join waits in the run queue for its second thread, so a 0.34 ms kernel
    averaged 28-52 ms per call over 20 ms windows, and a serial 0.59 ms variant 7.7 ms:
    the means ranked the serial one 4-7x faster, the fastest calls (0.34 vs 0.59 ms, their
    order on an idle machine) ranked them right. The calls that wait measure the load, not
    the kernel."""
    times: list = [[] for _ in kernels]
    clock = time.perf_counter
    window = min_repeat_ms / 1e3
    for r in range(repeat):
        for j in range(len(kernels)):
            k = (j + r) % len(kernels)
            kernel, args, _ = kernels[k]
            kernel(*args)
            fastest, calls, begin = float("inf"), 0, clock()
            # at least 5 calls (a loaded machine makes most of them wait), at most 1000
            while calls < 5 or (calls < 1000 and clock() - begin < window):
                start = clock()
                kernel(*args)
                fastest = min(fastest, clock() - start)
                calls += 1
            times[k].append(fastest)
    return times


__all__ = ["LocalRunner", "MeasureResult", "random_inputs", "tolerance"]
