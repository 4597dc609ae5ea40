"""The default-schedule framework: rules, block analysis, shared inlining, and the pass that applies rules."""

from .analysis import BlockInfo, IterInfo, get_block_info, normalize_prim_func
from .common_schedules import try_inline
from .schedule_rule import ScheduleRule
from .transform import ApplyDefaultSchedule, ScheduleRuleWarning, apply_rules

__all__ = [
    "ApplyDefaultSchedule",
    "BlockInfo",
    "IterInfo",
    "ScheduleRule",
    "ScheduleRuleWarning",
    "apply_rules",
    "get_block_info",
    "normalize_prim_func",
    "try_inline",
]
