"""The default schedule rules of each target kind, in the order they are tried (one list per kind).

`graphc.compile`, the examples and the benchmarks all schedule through `default_schedule`, so
a new rule reaches every user by being added here.

>>> [rule.name for rule in default_rules("llvm")]
['Attention', 'Matmul', 'Conv2d', 'Depthwise', 'Window', 'Reduction', 'Fallback']
>>> default_schedule("llvm").info.name
'ApplyDefaultSchedule'
"""

from __future__ import annotations

from ..target import Target
from . import cpu, gpu
from .base import ApplyDefaultSchedule, ScheduleRule


def default_rules(target: str | dict | Target | None = None) -> list[ScheduleRule]:
    """Fresh instances of the default rules for `target` (default: the current target, else llvm)."""
    target = Target.resolve(target)
    if target.is_cpu:
        return [cpu.Attention(), cpu.Matmul(), cpu.Conv2d(), cpu.Depthwise(), cpu.Window(), cpu.Reduction(),
                cpu.Fallback()]
    if target.is_gpu:
        return [gpu.Matmul(), gpu.Conv2d(), gpu.GEMV(), gpu.LowBatchGEMV(), gpu.Reduction(),
                gpu.GeneralReduction(), gpu.Transpose(), gpu.Fallback()]
    return []


def default_schedule(target: str | dict | Target | None = None) -> ApplyDefaultSchedule:
    """`ApplyDefaultSchedule` with the default rules of `target`."""
    target = Target.resolve(target)
    return ApplyDefaultSchedule(*default_rules(target), target=target)


__all__ = ["default_rules", "default_schedule"]
