"""Default schedules (TVM's DLight): rules that make unscheduled tensor programs fast on a target.

    mod = dlight.ApplyDefaultSchedule(dlight.cpu.Reduction(), dlight.cpu.Fallback())(mod)

`ApplyDefaultSchedule` tries each rule on each unscheduled PrimFunc; `cpu` holds the CPU
rules, `gpu` the GPU rules (same interface).
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

__all__ = [
    "ApplyDefaultSchedule",
    "BlockInfo",
    "IterInfo",
    "ScheduleRule",
    "ScheduleRuleWarning",
    "cpu",
    "gpu",
    "normalize_prim_func",
    "try_inline",
]
