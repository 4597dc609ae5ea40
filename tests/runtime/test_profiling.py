"""time_evaluator and BenchmarkResult: call counts, statistics, min_repeat_ms, errors."""

import statistics
import time

import pytest

from graphc.runtime import cpu, cuda
from graphc.runtime.profiling import BenchmarkResult, time_evaluator


def busy(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def test_call_counts_and_arguments():
    calls = []
    evaluator = time_evaluator(lambda *a, **k: calls.append((a, k)), cpu(), number=4, repeat=3)
    result = evaluator(1, 2, key="v")
    assert len(calls) == 1 + 4 * 3  # one warm-up call
    assert all(c == ((1, 2), {"key": "v"}) for c in calls)
    assert len(result.results) == 3


def test_statistics_on_busy_function():
    result = time_evaluator(busy, "llvm", number=5, repeat=7)(2000)
    r = result.results
    assert len(r) == 7 and all(x > 0 for x in r)
    assert result.mean == pytest.approx(statistics.fmean(r))
    assert result.median == pytest.approx(statistics.median(r))
    assert result.std == pytest.approx(statistics.pstdev(r))
    assert result.min == min(r) and result.max == max(r)
    assert result.min <= result.median <= result.max
    assert result.mean < 1.0  # seconds per call, not the total


def test_measures_seconds_per_call():
    result = time_evaluator(lambda: time.sleep(0.002), cpu(), number=3, repeat=2)()
    assert all(0.0015 < x < 0.5 for x in result.results)


def test_min_repeat_ms_grows_number():
    counter = [0]

    def fn():
        counter[0] += 1

    result = time_evaluator(fn, cpu(), number=1, repeat=2, min_repeat_ms=20)()
    assert counter[0] > 10  # a single call is far shorter than 20 ms
    assert len(result.results) == 2
    assert result.max < 0.02


def test_f_preproc_runs_before_each_repeat_untimed():
    events = []
    evaluator = time_evaluator(
        lambda x: events.append("run"), cpu(), number=2, repeat=3, f_preproc=lambda x: events.append("pre")
    )
    evaluator(0)
    assert events == ["run"] + ["pre", "run", "run"] * 3


def test_benchmark_result_text():
    r = BenchmarkResult([0.001, 0.002, 0.003])
    assert r.results == (0.001, 0.002, 0.003)
    text = str(r)
    assert text.startswith("Execution time summary:")
    assert "mean (ms)" in text and "std (ms)" in text and "2.0000" in text
    assert repr(r).startswith("BenchmarkResult(mean=2.0000 ms, median=2.0000 ms, min=1.0000 ms")
    single = BenchmarkResult([0.5])
    assert single.std == 0.0 and single.mean == 0.5
    many = BenchmarkResult([0.001] * 20)
    assert repr(many).endswith(", ...])")


def test_errors():
    with pytest.raises(ValueError, match="number must be an int >= 1, got 0"):
        time_evaluator(busy, cpu(), number=0)
    with pytest.raises(ValueError, match="repeat must be an int >= 1"):
        time_evaluator(busy, cpu(), repeat=-1)
    with pytest.raises(ValueError, match="min_repeat_ms"):
        time_evaluator(busy, cpu(), min_repeat_ms=-5)
    with pytest.raises(TypeError, match="expected a callable"):
        time_evaluator(42, cpu())
    with pytest.raises(ValueError, match="at least one measurement"):
        BenchmarkResult([])


def test_unavailable_device_fails_when_timing():
    from graphc.errors import DeviceError

    evaluator = time_evaluator(busy, cuda(10_000))
    with pytest.raises(DeviceError, match="CUDA is not available|no CUDA device 10000"):
        evaluator(10)
