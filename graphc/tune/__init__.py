"""Auto-tuning (TVM's MetaSchedule): search the decisions of the default schedule rules.

`space.py` turns the target's dlight rules into search spaces: `sample_schedule(func, target,
sampler)` runs the rule `ApplyDefaultSchedule` would pick with the sampler taking its
decisions (see `graphc.tir.schedule.sampling`).
"""

from .space import rule_of, sample_schedule, scheduled_func, space_size

__all__ = ["rule_of", "sample_schedule", "scheduled_func", "space_size"]

# -- the search: tasks, records, measurement, cost model, graphc.tune(...) (api.py) ----------------
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402

from .api import TuneReport, tune  # noqa: E402
from .database import Database, TuningRecord, TuningRecordError, TuningRecordWarning  # noqa: E402
from .tasks import Task, extract_tasks  # noqa: E402


class _CallableModule(_types.ModuleType):
    """`graphc.tune` is this package and, called, `graphc.tune.tune` (tvmc's `tune(model, target)`)."""

    def __call__(self, *args, **kwargs):
        return tune(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule

__all__ += ["Database", "Task", "TuneReport", "TuningRecord", "TuningRecordError", "TuningRecordWarning",
            "extract_tasks", "tune"]
