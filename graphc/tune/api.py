"""`graphc.tune`: search faster schedules for a model's kernels, into a records database.

    db = graphc.tune(model, "llvm", trials=200, time_budget=600, records="model.records",
                     example_inputs=(x,))
    exe = graphc.compile(model, "llvm", example_inputs=(x,), tuning_records="model.records")

The model's kernels become tasks (`tasks.extract_tasks`), each searched by a `TaskSearch`
(evolutionary search guided by a cost model), measured by a `LocalRunner` (worker
processes), with the rounds shared out by the `TaskScheduler`. Every measurement is a
record appended to `records` at once; running again with the same file continues: what was
measured is not measured again, and `trials` counts the trials already in the file.
"""

from __future__ import annotations

import dataclasses
import math
import time

from ..errors import GraphcError
from .database import Database


@dataclasses.dataclass
class TuneReport:
    """What one `tune` call did: the task searches, the estimated model latency over time
    (seconds since the start, seconds), and how long it ran."""

    searches: list
    history: list
    elapsed: float
    skipped: list  # (task name, why) of the kernels not tuned

    def summary(self) -> str:
        from .progress import summary_table

        lines = [summary_table(self.searches, self.elapsed)]
        lines += [f"not tuned: {name} ({why})" for name, why in self.skipped]
        return "\n".join(lines)


def tune(model, target="llvm", *, trials: int = 64, time_budget: float | None = None, records=None,
         timeout: float = 10.0, example_inputs=None, dynamic_shapes=None, shape_dict=None, dtype_dict=None,
         params=None, progress=None, seed: int = 0, batch: int = 8, runner=None, plot=None,
         confirm: int = 4) -> Database:
    """Tune `model`'s kernels for `target`; the records (a `Database`, written to `records` if given).

    `model` is anything `graphc.compile` takes, or a PrimFunc / an IRModule of PrimFuncs.
    `trials`: the measurements of all tasks together (those already in `records` count);
    `time_budget`: seconds after which no new round starts; `timeout`: seconds one candidate
    may take to build and run; `progress`: None draws the live table on a terminal, True
    always, False never; `plot`: a path for the latency-over-time plot (matplotlib);
    `confirm`: how many of each task's fastest candidates are measured again with the default
    at the end (0: none), which then decide the best. The budget starts after the tasks are
    extracted; its last tenth (at most 2 s per task and confirmed candidate) is kept for the
    confirmation.
    `db.last_run` is the `TuneReport` of this call.
    """
    from ..target import Target
    from .cost_model import require_sklearn
    from .measure import LocalRunner
    from .progress import TuneProgress
    from .scheduler import TaskScheduler
    from .search import TaskSearch

    if isinstance(trials, bool) or not isinstance(trials, int) or trials <= 0:
        raise ValueError(f"graphc.tune: trials must be a positive integer, got {trials!r}")
    if time_budget is not None and not time_budget > 0:
        raise ValueError(f"graphc.tune: time_budget must be a positive number of seconds, got "
                         f"{time_budget!r}")
    if not timeout > 0:
        raise ValueError(f"graphc.tune: timeout must be a positive number of seconds, got {timeout!r}")
    if isinstance(confirm, bool) or not isinstance(confirm, int) or confirm < 0:
        raise ValueError(f"graphc.tune: confirm must be a non-negative integer, got {confirm!r}")
    target = Target.resolve(target)
    if not target.is_cpu and runner is None:
        require_device(target)
    require_sklearn()
    if plot is not None:
        from .plot import require_matplotlib

        require_matplotlib()
    db = records if isinstance(records, Database) else Database(records)
    display = TuneProgress(enabled=progress) if not isinstance(progress, TuneProgress) else progress
    tasks, skipped = _tasks(model, target, example_inputs=example_inputs, dynamic_shapes=dynamic_shapes,
                            shape_dict=shape_dict, dtype_dict=dtype_dict, params=params)
    # the budget starts now: extracting the tasks (compiling the model up to its kernels) is not
    # tuning, and takes as long with any budget
    start = time.monotonic()
    # the last tenth of the budget (at most 2 s per task and round of confirmation) is kept for
    # re-measuring the best candidates of each task with the default (TaskSearch.confirm)
    reserve = 0.0 if time_budget is None else min(0.1 * time_budget, 2.0 * confirm * max(len(tasks), 1))
    own_runner = runner is None
    runner = runner or LocalRunner(target, timeout=timeout)
    searches, history = [], []
    try:
        for task in tasks:
            display.message(f"measuring the default schedule of {task.name}")
            search = TaskSearch(task, target, db, runner, seed=seed)
            if search.start():
                searches.append(search)
            else:
                skipped.append((task.name, search.why_not))
        scheduler = TaskScheduler(searches, seed=seed)
        history.append((time.monotonic() - start, scheduler.latency()))
        while True:
            done = sum(s.trials for s in searches)
            if done >= trials or (time_budget is not None and
                                  time.monotonic() - start >= time_budget - reserve):
                break
            i = scheduler.next_task()
            if i is None:
                break
            searches[i].round(min(batch, trials - done))
            scheduler.done(i)
            history.append((time.monotonic() - start, scheduler.latency()))
            display.update(searches, time.monotonic() - start)
        if confirm:
            for search in searches:
                display.message(f"confirming the best candidates of {search.task.name}")
                if search.confirm(confirm):
                    history.append((time.monotonic() - start, scheduler.latency()))
    finally:
        if own_runner:
            runner.close()
    elapsed = time.monotonic() - start
    display.update(searches, elapsed, force=True)
    db.last_run = TuneReport(searches, history, elapsed, skipped)
    if plot is not None:
        from .plot import plot_history

        plot_history(db.last_run, plot)
    return db


def require_device(target) -> None:
    """Raise GraphcError unless a device of GPU target `target`'s kind is visible here: the
    candidates are measured on it (tuning for a GPU needs the GPU)."""
    from ..runtime import device

    kind = "cuda" if target.kind in ("cuda", "nvptx") else target.kind
    try:
        visible = device(kind, 0).exist
    except Exception:  # noqa: BLE001 - a driver that does not load: no device
        visible = False
    if visible:
        return
    if kind == "cuda":
        raise GraphcError(f"graphc.tune: no CUDA device is visible, so candidates for {target.kind} cannot "
                          f"be measured and no tuning records can be written; tune on a machine with an "
                          f"NVIDIA GPU (graphc.compile for {target.kind} works without one, with the default "
                          f"schedules)")
    raise GraphcError(f"graphc.tune: no {kind} device is visible (no OpenCL platform: install one, e.g. "
                      f"PoCL, apt-get install pocl-opencl-icd), so candidates for {target.kind} cannot be "
                      f"measured")


def _tasks(model, target, **kwargs):
    """The tasks of `model` worth tuning, and (name, why) of the others."""
    from ..ir.module import IRModule
    from ..tir.function import PrimFunc
    from .tasks import extract_tasks, tasks_of_module

    if isinstance(model, PrimFunc):
        model = IRModule({"main": model})
    if isinstance(model, IRModule) and all(isinstance(f, PrimFunc) for _, f in model.items()):
        tasks = tasks_of_module(model)
    else:
        tasks = extract_tasks(model, target, **kwargs)
    kept, skipped = [], []
    for task in tasks:
        if not task.static:
            skipped.append((task.name, "its shapes are symbolic"))
        elif not task.flops:
            skipped.append((task.name, "it does no floating-point arithmetic"))
        else:
            kept.append(task)
    return kept, skipped


def model_latency(report: TuneReport) -> float:
    """The estimated model latency at the end of the run (seconds), inf when nothing ran."""
    return report.history[-1][1] if report.history else math.inf


__all__ = ["TuneReport", "model_latency", "require_device", "tune"]
