"""The examples run to completion and print well-formed results (the README's main command
is examples/quickstart.py).

Each example runs as the README runs it, in a fresh interpreter, and must exit with status 0.
The numbers it prints are parsed and checked for consistency (finite, positive times, ratios
that agree with the times they are made of); how fast graphc is belongs to `benchmarks/`.
"""

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"
NUMBER = r"([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"


def run_example(name: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                          timeout=600, cwd=EXAMPLES.parent)
    assert proc.returncode == 0, f"{name} exited with status {proc.returncode}:\n{proc.stderr[-4000:]}"
    return proc.stdout


def numbers(pattern: str, text: str) -> list[float]:
    """The numbers captured by `pattern` (NUMBER marks them) in the one line it matches."""
    found = re.findall(pattern.replace("NUMBER", NUMBER), text)
    assert len(found) == 1, f"expected one line matching {pattern!r}, found {len(found)}:\n{text}"
    values = [float(x) for x in (found[0] if isinstance(found[0], tuple) else (found[0],))]
    assert all(math.isfinite(v) for v in values), values
    return values


def printed_array(label: str, text: str) -> list[float]:
    """The numpy array printed after `label` (it may wrap over several lines)."""
    match = re.search(re.escape(label) + r"\s*\[([^\]]*)\]", text)
    assert match is not None, f"no array after {label!r}:\n{text}"
    return [float(x) for x in match.group(1).split()]


def test_quickstart_runs_and_prints_consistent_results():
    pytest.importorskip("torch")
    out = run_example("quickstart.py", "--quiet")
    for heading in ("1. imported from PyTorch", "2. after LegalizeOps", '3. after the "zero" pipeline',
                    "4. the VM bytecode", "5. results"):
        assert heading in out
    assert "fused_matmul_add_relu" in out

    ours, theirs = printed_array("graphc :", out), printed_array("PyTorch:", out)
    assert len(ours) == len(theirs) == 10
    assert all(abs(a - b) <= 1e-3 for a, b in zip(ours, theirs))  # printed to 4 decimals
    (difference,) = numbers(r"max \|difference\| = NUMBER", out)
    assert 0 <= difference <= 1e-4

    torch_us, graphc_us, ratio = numbers(r"latency at batch 1 \(best of 200\): "
                                         r"PyTorch eager NUMBER us, graphc NUMBER us \(ratio NUMBERx\)", out)
    assert torch_us > 0 and graphc_us > 0
    # the times are printed to 0.05 us and the ratio to 0.005
    low = (graphc_us - 0.05) / (torch_us + 0.05) - 0.005
    high = (graphc_us + 0.05) / (torch_us - 0.05) + 0.005
    assert low <= ratio <= high

    table = out[out.index("per-kernel profile of one call:"):].splitlines()[1:]
    assert table[0].split() == ["Name", "Kind", "Calls", "Total", "(us)", "Mean", "(us)", "Share", "(%)"]
    rows = [line.split() for line in table[1:] if line.strip()]
    assert rows[-1][0] == "Total"
    totals = [float(row[-3]) for row in rows[:-1]]
    shares = [float(row[-1]) for row in rows[:-1]]
    assert all(t >= 0 for t in totals)
    assert sum(totals) == pytest.approx(float(rows[-1][1]), rel=1e-3, abs=0.01)
    assert sum(shares) == pytest.approx(100.0, abs=0.1)
    assert any(row[0] == "fused_matmul_add_relu" and row[1] == "kernel" for row in rows)


def test_tensor_programs_example_runs_and_prints_consistent_results():
    out = run_example("tensor_programs.py")
    for heading in ("1. script-defined module", "2. tensor expressions with symbolic shapes",
                    "3. a reduction: 256x256x256 matmul", "4. schedules"):
        assert heading in out
    assert "C = A * B for shape (3, 5): ok" in out and "C = A * B for shape (17, 2): ok" in out
    (unscheduled_ms,) = numbers(r"matmul matches numpy; unscheduled time NUMBER ms", out)
    scheduled_ms, speedup = numbers(r"scheduled matmul: NUMBER ms, NUMBERx faster than unscheduled", out)
    (row_sum_speedup,) = numbers(r"row sum of \(512, 1024\): dlight's default schedule is NUMBERx faster",
                                 out)
    assert unscheduled_ms > 0 and scheduled_ms > 0 and speedup > 0 and row_sum_speedup > 0
