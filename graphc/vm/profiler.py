"""Per-call timing of a VM function: a `Recorder` the profiled code calls, and the printed report.

>>> r = Recorder()
>>> r.record("add", 0.002, True); r.record("add", 0.004, True); r.record("vm.builtin.copy", 0.001, False)
>>> report = r.report(0.01)
>>> [(row.name, row.calls) for row in report.rows]
[('add', 2), ('vm.builtin.copy', 1)]
>>> print(report)  # doctest: +NORMALIZE_WHITESPACE
Name               Kind      Calls   Total (us)   Mean (us)   Share (%)
add                kernel        2     6000.000    3000.000       60.00
vm.builtin.copy    builtin       1     1000.000    1000.000       10.00
(VM overhead)      -             -     3000.000           -       30.00
Total                                 10000.000                  100.00
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class ProfileRow:
    """One kernel or builtin: calls, total and mean seconds, and share of the whole call."""

    name: str
    kind: str
    calls: int
    total: float
    mean: float
    share: float


class ProfileReport:
    """The rows of a profile (most expensive first) and the call's total time, printable as a table."""

    def __init__(self, rows: list[ProfileRow], total: float):
        self.rows = rows
        self.total = total

    def __getitem__(self, name: str) -> ProfileRow:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(f"no kernel or builtin named {name!r} in this profile")

    def table(self) -> str:
        width = max([len(r.name) for r in self.rows] + [len("(VM overhead)"), 4]) + 2
        lines = [f"{'Name':<{width}} {'Kind':<8} {'Calls':>6} {'Total (us)':>12} {'Mean (us)':>11} "
                 f"{'Share (%)':>11}"]
        for r in self.rows:
            lines.append(f"{r.name:<{width}} {r.kind:<8} {r.calls:>6} {r.total * 1e6:>12.3f} "
                         f"{r.mean * 1e6:>11.3f} {r.share * 100:>11.2f}")
        rest = self.total - sum(r.total for r in self.rows)
        share = rest / self.total * 100 if self.total else 0.0
        lines.append(f"{'(VM overhead)':<{width}} {'-':<8} {'-':>6} {rest * 1e6:>12.3f} {'-':>11} "
                     f"{share:>11.2f}")
        lines.append(f"{'Total':<{width}} {'':<8} {'':>6} {self.total * 1e6:>12.3f} {'':>11} {100.0:>11.2f}")
        return "\n".join(lines)

    __str__ = table

    def __repr__(self) -> str:
        return f"<ProfileReport: {len(self.rows)} rows, {self.total * 1e6:.1f} us>"


class Recorder:
    """Accumulates (calls, seconds) per name; `record` is what the profiled bytecode calls."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.stats: dict[str, list] = {}

    def record(self, name: str, seconds: float, is_kernel: bool) -> None:
        with self._lock:
            entry = self.stats.get(name)
            if entry is None:
                entry = self.stats[name] = [0, 0.0, "kernel" if is_kernel else "builtin"]
            entry[0] += 1
            entry[1] += seconds

    def report(self, total: float) -> ProfileReport:
        total = max(total, sum(e[1] for e in self.stats.values()))
        rows = [ProfileRow(name, kind, calls, secs, secs / calls, secs / total if total else 0.0)
                for name, (calls, secs, kind) in self.stats.items()]
        rows.sort(key=lambda r: -r.total)
        return ProfileReport(rows, total)


__all__ = ["ProfileReport", "ProfileRow", "Recorder"]
