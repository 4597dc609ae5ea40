"""`ApplyTuningRecords`: schedule each kernel that has a tuning record by replaying its best trace.

`graphc.compile(model, target, tuning_records=path_or_db)` runs it before the default
schedules: a kernel whose workload (`tasks.workload_key`) has an "ok" record for this target
and this graphc version gets the best record's trace replayed on it (`Trace.from_json`, then
`apply_to`), marked scheduled, its "dlight.rule" attribute "tuned:<rule>"; the default rules
take every other kernel. A record whose replay fails is skipped with a `TuningRecordWarning`
(the kernel gets the default schedule), and so, with a note, are records of another graphc
version or target (`Database`).
"""

from __future__ import annotations

import warnings

from ..errors import GraphcError
from ..ir.module import IRModule
from ..ir.transform import module_pass
from ..tir.function import PrimFunc
from .database import Database, TuningRecordWarning, target_key
from .tasks import workload_key


def replay(func: PrimFunc, record, target=None) -> PrimFunc:
    """`func` scheduled by `record`'s trace (raises when the trace does not apply). On a GPU
    target the trace starts from the function as the GPU rules see it (`dlight.gpu.utils.prepare`:
    float32 accumulators, 32-bit indices), as the rule that recorded it did."""
    from ..target import Target
    from ..tir.schedule import Schedule
    from ..tir.schedule.trace import Trace

    if Target.resolve(target).is_gpu:
        from ..dlight.gpu.utils import prepare

        func = prepare(func)
    sch = Schedule(IRModule({"main": func}))
    Trace.from_json(record.trace).apply_to(sch)
    return sch.mod["main"]


@module_pass(opt_level=0, name="ApplyTuningRecords")
class ApplyTuningRecords:
    """Schedule the kernels the records know (see the module docstring)."""

    def __init__(self, records, target=None):
        self.db = Database.open(records)
        self.target = target

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        from ..target import Target

        key = target_key(Target.resolve(self.target))
        for gv, func in list(mod.items()):
            if not isinstance(func, PrimFunc) or func.attrs.get("tir.is_scheduled", False):
                continue
            record = self.db.best(workload_key(func), key)
            if record is None:
                continue
            try:
                scheduled = replay(func, record, self.target)
            except (GraphcError, KeyError, TypeError, ValueError, IndexError) as err:
                warnings.warn(f"the tuning record of kernel {gv.name_hint!r} does not replay ({err}); it "
                              f"gets the default schedule", TuningRecordWarning, stacklevel=2)
                continue
            mod[gv] = scheduled.with_attr({"tir.is_scheduled": True, "dlight.rule": f"tuned:{record.rule}"})
        return mod


__all__ = ["ApplyTuningRecords", "replay"]
