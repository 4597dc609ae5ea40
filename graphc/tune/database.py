"""The tuning records: one JSON object a line, one line per measured candidate, best per task.

A record says which workload (the structural hash of the unscheduled PrimFunc, and its
script text for people), for which target (`Target.resolved()`: kind, CPU and features),
by which graphc version and rule, with which trace (its decisions too), what the candidate
measured (seconds per run) and how it ended: "ok", "failed" (a build error or a crash),
"timeout" or "wrong" (its output differed from the default schedule's). `Database.best`
only ever answers with an "ok" record of this graphc version and the asked target; records
of another version or target stay in the file, are counted, and are reported once
(`TuningRecordWarning`), never applied.

>>> db = Database()
>>> db.add(TuningRecord(workload="ab12", target="llvm", rule="Matmul", trace=[], decisions=[[3, 4]],
...                     times=[0.002, 0.001], status="ok"))
>>> db.best("ab12", "llvm").time, db.trials("ab12", "llvm")
(0.001, 1)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
import warnings

from ..errors import GraphcError

STATUSES = ("ok", "failed", "timeout", "wrong")


class TuningRecordWarning(UserWarning):
    """Records were ignored: written by another graphc version or for another target."""


class TuningRecordError(GraphcError, ValueError):
    """A records file that cannot be read (missing, unreadable, a malformed line)."""


def graphc_version() -> str:
    from .. import __version__

    return __version__


def target_key(target) -> str:
    """The target a record is for: the full description, host CPU and features filled in; for a
    GPU the architecture (CUDA), the device (OpenCL: the name of the visible device, unless the
    target names one) and the limits the schedules were sized by, so that records measured on
    one device are never applied to another kind or another device.

    >>> target_key("cuda -arch=sm_90")
    'cuda -arch=sm_90 -max_num_threads=1024 -max_shared_memory_per_block=49152 -thread_warp_size=32'
    """
    from ..target import Target

    target = Target.resolve(target)
    if target.is_cpu:
        return target.resolved()
    options = {"max_num_threads": target.max_num_threads, "thread_warp_size": target.thread_warp_size,
               "max_shared_memory_per_block": target.max_shared_memory_per_block}
    if target.kind in ("cuda", "nvptx"):
        options["arch"] = target.arch
    if target.kind == "opencl":
        device = target.options.get("device") or opencl_device_name()
        if device:
            options["device"] = device
    return " ".join([target.kind] + [f"-{k}={options[k]}" for k in sorted(options)])


def opencl_device_name() -> str | None:
    """The name of the first OpenCL device, spaces as underscores (a target option's value); None
    without an OpenCL platform."""
    global _OPENCL_NAME
    if _OPENCL_NAME is None:
        from ..runtime import device

        try:
            dev = device("opencl", 0)
            name = dev.api.device_name(0) if dev.exist else ""
        except Exception:  # noqa: BLE001 - no platform, no driver: no device to name
            name = ""
        _OPENCL_NAME = "_".join(str(name).split()).replace("=", "_")
    return _OPENCL_NAME or None


_OPENCL_NAME: str | None = None


@dataclasses.dataclass
class TuningRecord:
    """One measured candidate of one workload on one target."""

    workload: str
    target: str
    rule: str
    trace: object  # Trace.to_json()
    decisions: list
    times: list = dataclasses.field(default_factory=list)  # seconds per run, one per repeat
    status: str = "ok"
    error: str = ""
    workload_text: str = ""
    version: str = dataclasses.field(default_factory=graphc_version)
    timestamp: float = dataclasses.field(default_factory=time.time)
    default: bool = False  # the default schedule's own decisions (the baseline)
    baseline: float = 0.0  # the default's best time measured interleaved with this one (0: none)
    confirmed: bool = False  # a re-measurement of a measured candidate (the final check), not a trial

    @property
    def ratio(self) -> float | None:
        """time / the default's time in the same measurement (None: measured without it)."""
        return self.time / self.baseline if self.baseline > 0 else None

    @property
    def time(self) -> float:
        """The best time (seconds per run); infinite when the candidate did not run correctly."""
        return min(self.times) if self.status == "ok" and self.times else float("inf")

    @property
    def decision_key(self) -> str:
        return decision_key(self.decisions)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @staticmethod
    def from_json(obj: dict) -> TuningRecord:
        fields = {f.name for f in dataclasses.fields(TuningRecord)}
        missing = {"workload", "target", "rule", "trace", "decisions"} - set(obj)
        if missing:
            raise ValueError(f"a tuning record needs the fields {', '.join(sorted(missing))}")
        record = TuningRecord(**{k: v for k, v in obj.items() if k in fields})
        if record.status not in STATUSES:
            raise ValueError(f"unknown record status {record.status!r}; expected one of "
                             f"{', '.join(STATUSES)}")
        return record


def decision_key(decisions) -> str:
    """A canonical text for a decision vector (the identity of a candidate within a task)."""
    return json.dumps(decisions, sort_keys=True, separators=(",", ":"), default=str)


class Database:
    """Tuning records in memory, appended to a JSON-lines file when `path` is given.

    Opening an existing file reads it (a tuning run then continues from it); every `add`
    appends one line and flushes, so an interrupted run keeps what it measured.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = None if path is None else os.fspath(path)
        self.records: list[TuningRecord] = []
        self._by_task: dict[tuple, list[TuningRecord]] = {}
        self.last_run = None  # graphc.tune's report (api.TuneReport) of the run that filled it
        self.ignored_notes: list[str] = []  # why records were not applied (also warned, once each)
        self._noted: set = set()
        if self.path is not None and os.path.exists(self.path):
            self._read(self.path)

    @staticmethod
    def open(records) -> Database:
        """`records` as a Database: one already, or a path to read (which must exist)."""
        if isinstance(records, Database):
            return records
        if not isinstance(records, str | os.PathLike):
            raise TypeError(f"tuning records are a path or a graphc.tune.Database, got "
                            f"{type(records).__name__}")
        if not os.path.exists(records):
            raise TuningRecordError(f"tuning records file {os.fspath(records)!r} does not exist")
        return Database(records)

    def _read(self, path: str) -> None:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
        except (OSError, UnicodeDecodeError) as err:
            raise TuningRecordError(f"cannot read tuning records file {path!r}: {err}") from err
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = TuningRecord.from_json(json.loads(line))
            except (json.JSONDecodeError, TypeError, ValueError) as err:
                raise TuningRecordError(
                    f"{path}, line {number}: not a tuning record ({err}); the file is written by "
                    f"`graphc tune` / graphc.tune, one JSON object a line") from err
            self._insert(record)

    def _insert(self, record: TuningRecord) -> None:
        self.records.append(record)
        self._by_task.setdefault((record.workload, record.target, record.version), []).append(record)

    def add(self, record: TuningRecord) -> None:
        """Keep `record` (and append it to the file)."""
        self._insert(record)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record.to_json(), separators=(",", ":"), default=str) + "\n")

    # -- queries -----------------------------------------------------------------------------
    def task_records(self, workload: str, target) -> list[TuningRecord]:
        """The records of `workload` on `target` (a Target, or a `target_key` text) by this graphc
        version (every status)."""
        target = _target_text(target)
        records = self._by_task.get((workload, target, graphc_version()), [])
        if not records:
            self._note_ignored(workload, target)
        return records

    def best(self, workload: str, target) -> TuningRecord | None:
        """The fastest correct record of `workload` on `target`, or None.

        Candidates are compared by their time relative to the default schedule measured with
        them (`ratio`; a record without one against the default's own record), so that a load
        that changed between measurements does not pick the winner. When the candidates were
        confirmed (`graphc.tune` re-measures the best few with the default at the end), the
        latest confirmation decides: the best of thousands of noisy first measurements is
        biased to a lucky one."""
        records = self.task_records(workload, target)
        ok = [r for r in records if r.status == "ok" and r.times]
        if not ok:
            return None
        confirmed = [r for r in ok if r.confirmed]
        if confirmed:
            last = max((r.timestamp for r in confirmed if r.default), default=None)
            latest = [r for r in confirmed if last is None or r.timestamp >= last]
            return min(latest, key=lambda r: (r.ratio if r.ratio is not None else math.inf, not r.default))
        default = next((r for r in ok if r.default), None)
        return min(ok, key=lambda r: self.relative(r, default))

    @staticmethod
    def relative(record: TuningRecord, default: TuningRecord | None) -> float:
        """`record`'s time relative to the default schedule's (its own time without either)."""
        if record.ratio is not None:
            return record.ratio
        if default is not None and default.time > 0 and math.isfinite(default.time):
            return record.time / default.time
        return record.time

    def speedup(self, workload: str, target) -> float:
        """The default's time / the best record's, as measured together (1.0: nothing better)."""
        best = self.best(workload, target)
        if best is None:
            return 1.0
        default = self.default_record(workload, target)
        rel = self.relative(best, default)
        return 1.0 / rel if best.ratio is not None or default is not None else 1.0

    def default_record(self, workload: str, target) -> TuningRecord | None:
        """The (first) measurement of the default schedule of `workload`, if made."""
        for r in self.task_records(workload, target):
            if r.default and r.status == "ok" and not r.confirmed:
                return r
        return None

    def trials(self, workload: str, target) -> int:
        """How many candidates of `workload` were measured on `target` (every status; the final
        re-measurements are not trials)."""
        return sum(1 for r in self.task_records(workload, target) if not r.confirmed)

    def measured(self, workload: str, target) -> set[str]:
        """The decision keys of the candidates measured already (not to be measured again)."""
        return {r.decision_key for r in self.task_records(workload, target)}

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self):
        return iter(self.records)

    # -- the notes on records that do not apply ------------------------------------------------
    def _note_ignored(self, workload: str, target: str) -> None:
        version = graphc_version()
        for (w, t, v), records in self._by_task.items():
            if w != workload:
                continue
            if v != version:
                reason = f"{len(records)} tuning record(s) of this workload were written by graphc {v} " \
                         f"(this is {version}); they are ignored: tune again"
            elif t != target:
                reason = f"{len(records)} tuning record(s) of this workload are for target {t!r}, not " \
                         f"{target!r}; they are ignored"
            else:
                continue
            if (w, t, v) not in self._noted:
                self._noted.add((w, t, v))
                self.ignored_notes.append(reason)
                warnings.warn(reason, TuningRecordWarning, stacklevel=3)


def _target_text(target) -> str:
    """A record's target text as given (a str), or a Target's `target_key`."""
    return target if isinstance(target, str) else target_key(target)


__all__ = ["STATUSES", "Database", "TuningRecord", "TuningRecordError", "TuningRecordWarning", "decision_key",
           "graphc_version", "target_key"]
