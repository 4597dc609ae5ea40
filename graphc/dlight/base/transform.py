"""`ApplyDefaultSchedule`: give every unscheduled PrimFunc of a module its first matching rule's schedule.

For each PrimFunc without the attribute ``"tir.is_scheduled"``, the rules are tried in
order with the target (the one given, else `Target.current()`, else ``Target("llvm")``).
The first rule returning a schedule wins and the function is replaced by the scheduled
one, marked ``"tir.is_scheduled": True``. A rule raising ScheduleError counts as declining
(with a warning naming the rule); any other exception propagates with a note naming the
rule and the function. Functions no rule takes are left unchanged.

>>> from graphc import IRModule, tir
>>> from graphc.dlight import ScheduleRule
>>> f = tir.PrimFunc([], tir.Evaluate(0))
>>> keep = ScheduleRule.from_callable("Keep", lambda func, target, tunable: tir.Schedule(func))
>>> mod = ApplyDefaultSchedule(keep)(IRModule({"main": f}))
>>> mod["main"].attrs["tir.is_scheduled"]
True
"""

from __future__ import annotations

import warnings

from ...errors import ScheduleError
from ...ir.module import IRModule
from ...ir.transform import module_pass
from ...target import Target
from ...tir.function import PrimFunc
from ...tir.schedule import Schedule
from .schedule_rule import ScheduleRule


class ScheduleRuleWarning(UserWarning):
    """A schedule rule raised ScheduleError (a rule bug); it was treated as declining."""


@module_pass(opt_level=0, name="ApplyDefaultSchedule")
class ApplyDefaultSchedule:
    """Schedule every unscheduled PrimFunc with the first of `rules` that applies."""

    def __init__(self, *rules: ScheduleRule, target=None):
        for rule in rules:
            if not isinstance(rule, ScheduleRule):
                raise TypeError(
                    f"ApplyDefaultSchedule takes ScheduleRule objects, got {type(rule).__name__}; "
                    f"wrap a function with ScheduleRule.from_callable(name, fn)"
                )
        self.rules = list(rules)
        self.target = None if target is None else Target(target)

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        target = self.target or Target.resolve(None)
        for gv, func in list(mod.items()):
            if not isinstance(func, PrimFunc) or func.attrs.get("tir.is_scheduled", False):
                continue
            scheduled = apply_rules(func, target, self.rules, gv.name_hint)
            if scheduled is not None:
                mod[gv] = scheduled.with_attr("tir.is_scheduled", True)
        return mod


def apply_rules(func: PrimFunc, target: Target, rules, name: str = "main") -> PrimFunc | None:
    """The scheduled function from the first rule that applies to `func`, or None."""
    for rule in rules:
        try:
            space = rule.apply(func, target, False)
        except ScheduleError as err:
            warnings.warn(
                f"schedule rule {rule.name} raised ScheduleError on function {name!r} and was skipped: {err}",
                ScheduleRuleWarning,
                stacklevel=2,
            )
            continue
        except Exception as err:
            err.add_note(f"while applying schedule rule {rule.name} to function {name!r}")
            raise
        if space is None:
            continue
        if isinstance(space, list | tuple):
            if not space:
                continue
            space = space[0]
        if not isinstance(space, Schedule):
            raise TypeError(
                f"schedule rule {rule.name} returned {type(space).__name__}; a rule returns a "
                f"tir.Schedule, a list of them, or None"
            )
        return space.mod[space.func_name]
    return None


__all__ = ["ApplyDefaultSchedule", "ScheduleRuleWarning", "apply_rules"]
