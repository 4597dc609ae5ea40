"""Wall-clock timing of callables on a device: `time_evaluator` and its `BenchmarkResult`.

Modelled on TVM's ``Module.time_evaluator``: one warm-up call, then `repeat` measurements,
each the mean time per call over `number` calls, with the device synchronized around each.

>>> evaluator = time_evaluator(lambda n: sum(range(n)), "cpu", number=5, repeat=3)
>>> result = evaluator(1000)
>>> len(result.results), result.min <= result.median <= result.max
(3, True)
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence

from .device import Device, device


class BenchmarkResult:
    """Seconds per call of each measurement, with summary statistics.

    >>> r = BenchmarkResult([0.001, 0.003, 0.002])
    >>> r.mean, r.median, r.min, r.max
    (0.002, 0.002, 0.001, 0.003)
    >>> print(r)  # doctest: +NORMALIZE_WHITESPACE
    Execution time summary:
     mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)
        2.0000       2.0000       3.0000       1.0000       0.8165
    """

    __slots__ = ("results", "mean", "median", "std", "min", "max")

    def __init__(self, results: Sequence[float]):
        results = tuple(float(r) for r in results)
        if not results:
            raise ValueError("BenchmarkResult needs at least one measurement, got none")
        self.results = results
        self.mean = statistics.fmean(results)
        self.median = statistics.median(results)
        self.std = statistics.pstdev(results) if len(results) > 1 else 0.0
        self.min = min(results)
        self.max = max(results)

    def __str__(self) -> str:
        ms = [x * 1e3 for x in (self.mean, self.median, self.max, self.min, self.std)]
        header = f"{'mean (ms)':^12} {'median (ms)':^12} {'max (ms)':^12} {'min (ms)':^12} {'std (ms)':^12}"
        values = " ".join(f"{v:12.4f}" for v in ms)
        return f"Execution time summary:\n{header}\n{values}"

    def __repr__(self) -> str:
        shown = ", ".join(f"{r * 1e3:.4f}" for r in self.results[:8])
        more = ", ..." if len(self.results) > 8 else ""
        return (
            f"BenchmarkResult(mean={self.mean * 1e3:.4f} ms, median={self.median * 1e3:.4f} ms, "
            f"min={self.min * 1e3:.4f} ms, max={self.max * 1e3:.4f} ms, std={self.std * 1e3:.4f} ms, "
            f"results_ms=[{shown}{more}])"
        )


def time_evaluator(
    fn: Callable,
    dev: Device | str | None = None,
    number: int = 10,
    repeat: int = 1,
    min_repeat_ms: float = 0,
    f_preproc: Callable | None = None,
    cooldown_interval_ms: float = 0,
) -> Callable[..., BenchmarkResult]:
    """A function that times ``fn(*args)`` and returns a `BenchmarkResult` in seconds per call.

    Each of the `repeat` measurements calls `fn` `number` times; when `min_repeat_ms` is
    given, `number` grows until one measurement lasts at least that long. `f_preproc`, if
    given, is called with the same arguments before each measurement (e.g. to flush caches)
    and is not timed. `cooldown_interval_ms` sleeps between measurements.

    >>> result = time_evaluator(lambda: None, "cpu", number=3, repeat=2)()
    >>> len(result.results)
    2
    """
    for name, value in (("number", number), ("repeat", repeat)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"time_evaluator: {name} must be an int >= 1, got {value!r}")
    if min_repeat_ms < 0 or cooldown_interval_ms < 0:
        raise ValueError(
            f"time_evaluator: min_repeat_ms and cooldown_interval_ms must be >= 0, "
            f"got {min_repeat_ms!r} and {cooldown_interval_ms!r}"
        )
    if not callable(fn):
        raise TypeError(f"time_evaluator: expected a callable, got {type(fn).__name__}")
    dev = device(dev) if dev is not None else device("cpu")
    clock = time.perf_counter

    def measure(n: int, args, kwargs) -> float:
        dev.sync()
        start = clock()
        for _ in range(n):
            fn(*args, **kwargs)
        dev.sync()
        return clock() - start

    def evaluator(*args, **kwargs) -> BenchmarkResult:
        fn(*args, **kwargs)  # warm-up: first-call costs (caches, lazy loading) stay out of the numbers
        n = number
        results = []
        for i in range(repeat):
            if f_preproc is not None:
                f_preproc(*args, **kwargs)
            elapsed = measure(n, args, kwargs)
            while min_repeat_ms and elapsed * 1e3 < min_repeat_ms:
                per_call = max(elapsed / n, 1e-9)
                n = max(int(math.ceil(min_repeat_ms / 1e3 / per_call)) + 1, int(n * 1.618) + 1)
                if f_preproc is not None:
                    f_preproc(*args, **kwargs)
                elapsed = measure(n, args, kwargs)
            results.append(elapsed / n)
            if cooldown_interval_ms and i + 1 < repeat:
                time.sleep(cooldown_interval_ms / 1e3)
        return BenchmarkResult(results)

    return evaluator
