"""Default schedules (TVM's DLight): rules that make unscheduled tensor programs fast on a target.

    mod = dlight.default_schedule("llvm")(mod)
    mod = dlight.ApplyDefaultSchedule(dlight.cpu.Reduction(), dlight.cpu.Fallback())(mod)

`ApplyDefaultSchedule` tries each rule on each unscheduled PrimFunc; `cpu` holds the CPU
rules, `gpu` the GPU rules (same interface); `default_rules(target)` is the list
`graphc.compile` uses for a target.
"""

from . import cpu, gpu
from .base import (
    ApplyDefaultSchedule,
    BlockInfo,
    IterInfo,
    ScheduleRule,
    ScheduleRuleWarning,
    normalize_prim_func,
    try_inline,
)
from .default import default_rules, default_schedule

__all__ = [
    "ApplyDefaultSchedule",
    "BlockInfo",
    "IterInfo",
    "ScheduleRule",
    "ScheduleRuleWarning",
    "cpu",
    "default_rules",
    "default_schedule",
    "gpu",
    "normalize_prim_func",
    "try_inline",
]
