"""`ScheduleRule`: one way to schedule a PrimFunc for a target, or None when it does not apply.

A rule is tried by `ApplyDefaultSchedule`; the first rule that returns a schedule wins. A
rule declines by returning None; it never lets a ScheduleError escape on purpose (the
pass treats one as a decline and warns, since it usually means the rule's checks missed
a case).

>>> from graphc import tir
>>> from graphc.target import Target
>>> f = tir.PrimFunc([], tir.Evaluate(0))
>>> rule = ScheduleRule.from_callable("Nothing", lambda func, target, tunable: None)
>>> rule.name, rule.apply(f, Target("llvm"), False) is None
('Nothing', True)
"""

from __future__ import annotations

from ...tir.function import PrimFunc
from ...tir.schedule import Schedule


class ScheduleRule:
    """Base class of default-schedule rules; subclasses override `apply`."""

    @property
    def name(self) -> str:
        return type(self).__name__

    def apply(self, func: PrimFunc, target, tunable: bool) -> Schedule | list[Schedule] | None:
        """A schedule of `func` for `target` (a list of candidates when `tunable`), or None."""
        raise NotImplementedError(f"schedule rule {self.name} does not define apply()")

    def apply_config(self, func: PrimFunc, config) -> Schedule | None:
        """Apply with a tuned configuration (rules without tuning knobs ignore it)."""
        return None

    @staticmethod
    def from_callable(name: str, func=None):
        """A rule whose `apply` is `func(func, target, tunable)`; also usable as a decorator.

        >>> @ScheduleRule.from_callable("Skip")
        ... def skip(func, target, tunable):
        ...     return None
        >>> skip.name, isinstance(skip, ScheduleRule)
        ('Skip', True)
        """

        def wrap(fn) -> ScheduleRule:
            return _CallableRule(name, fn)

        return wrap if func is None else wrap(func)

    def __repr__(self) -> str:
        return f"<ScheduleRule {self.name}>"


class _CallableRule(ScheduleRule):
    def __init__(self, name: str, fn):
        self._name, self._fn = name, fn

    @property
    def name(self) -> str:
        return self._name

    def apply(self, func, target, tunable):
        return self._fn(func, target, tunable)


__all__ = ["ScheduleRule"]
