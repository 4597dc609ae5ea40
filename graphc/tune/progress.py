"""What a person watching a tuning run sees: a live table on a terminal, and a summary at the end.

One line per task: its name, trials measured, the best GFLOP/s so far, the speed-up of its
best candidate over its default schedule; then the estimated model latency (weight x best
time summed over the tasks) and the elapsed time. The table is redrawn in place on a
terminal (the terminal detection of `graphc.progress`: stderr a terminal, or
`GRAPHC_PROGRESS=1`; `GRAPHC_PROGRESS=0` silences it) and not drawn at all elsewhere.

>>> class S:
...     trials, gflops, speedup, best_time, default_time = 12, 85.3, 1.42, 1e-3, 1.42e-3
...     task = type("T", (), {"name": "fused_matmul_add", "weight": 2})()
>>> print(summary_table([S()], elapsed=31.0))  # doctest: +NORMALIZE_WHITESPACE
task                          calls  trials  best GFLOP/s  speed-up
fused_matmul_add                  2      12          85.3     1.42x
model latency (estimated): 2.840 ms by default -> 2.000 ms tuned (1.42x), 31 s of tuning
"""

from __future__ import annotations

import math
import sys
import time


def summary_table(searches, elapsed: float) -> str:
    """The per-task table and the model-latency line."""
    lines = [f"{'task':<28}  {'calls':>5}  {'trials':>6}  {'best GFLOP/s':>12}  {'speed-up':>8}"]
    default = tuned = 0.0
    for s in searches:
        name = s.task.name if len(s.task.name) <= 28 else s.task.name[:25] + "..."
        lines.append(f"{name:<28}  {s.task.weight:>5}  {s.trials:>6}  {s.gflops:>12.1f}  {s.speedup:>7.2f}x")
        if math.isfinite(s.best_time) and math.isfinite(s.default_time):
            default += s.task.weight * s.default_time
            tuned += s.task.weight * s.best_time
    ratio = default / tuned if tuned else 1.0
    lines.append(f"model latency (estimated): {default * 1e3:.3f} ms by default -> {tuned * 1e3:.3f} ms "
                 f"tuned ({ratio:.2f}x), {elapsed:.0f} s of tuning")
    return "\n".join(lines)


class TuneProgress:
    """The live table (see the module docstring); `enabled` False draws nothing."""

    def __init__(self, stream=None, enabled: bool | None = None, interval: float = 0.5):
        from ..progress import CompileProgress

        self.stream = stream if stream is not None else sys.stderr
        self.enabled = CompileProgress(stream=self.stream).enabled if enabled is None else enabled
        self.interval = interval
        self.drawn_lines = 0
        self.last = 0.0

    def update(self, searches, elapsed: float, message: str = "", force: bool = False) -> None:
        if not self.enabled or (not force and time.monotonic() - self.last < self.interval):
            return
        self.last = time.monotonic()
        text = summary_table(searches, elapsed) + (f"\n{message}" if message else "")
        up = f"\x1b[{self.drawn_lines}F" if self.drawn_lines else ""
        self.stream.write(up + "".join(f"{line}\x1b[K\n" for line in text.splitlines()))
        self.stream.flush()
        self.drawn_lines = len(text.splitlines())

    def message(self, text: str) -> None:
        """A one-off line above the table (a task started, a note on records)."""
        if self.enabled:
            self.stream.write(f"graphc tune: {text}\x1b[K\n")
            self.stream.flush()
            self.drawn_lines = 0


__all__ = ["TuneProgress", "summary_table"]
