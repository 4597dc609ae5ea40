"""Search spaces: the target's default schedule rules run with a sampler taking their decisions.

A dlight rule asks its schedule for every decision it makes (`sample_categorical`,
`sample_perfect_tile`, ... with its own choice as `decision=`), so the rule is at once the
default schedule (DefaultSampler) and a space (RandomSampler, ReplaySampler). A function's
space is the rule `ApplyDefaultSchedule` picks for it:

>>> from graphc import te
>>> from graphc.tir.schedule import DefaultSampler, RandomSampler
>>> A = te.placeholder((64, 64), name="A"); k = te.reduce_axis((0, 64), "k")
>>> B = te.placeholder((64, 64), name="B")
>>> C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> func = te.create_prim_func([A, B, C])
>>> rule_of(func, "llvm")
'Matmul'
>>> sch = sample_schedule(func, "llvm", RandomSampler(seed=1))
>>> sch.mod[sch.func_name].body is not None
True
"""

from __future__ import annotations

import math

from ..dlight import default_rules
from ..errors import ScheduleError
from ..target import Target
from ..tir.function import PrimFunc
from ..tir.schedule import DefaultSampler, Schedule, use_sampler


class _Counting:
    """Passes decisions through to `inner`, remembering the instructions' infos."""

    def __init__(self, inner):
        self.inner = inner
        self.is_default = getattr(inner, "is_default", False)
        self.infos: list = []
        self.error = None

    def decide(self, kind, info, default):
        self.infos.append(info)
        try:
            return self.inner.decide(kind, info, default)
        except ScheduleError as err:  # the rule may swallow it; sample_schedule reports it
            self.error = err
            raise


def _run(rule, func: PrimFunc, target: Target, sampler) -> tuple:
    """(schedule or None, the sampling infos the rule went through) of one rule, as
    `dlight.apply_rules` runs it (a ScheduleError is a decline)."""
    counting = _Counting(sampler)
    error = None
    with use_sampler(counting):
        try:
            sch = rule.apply(func, target, False)
        except ScheduleError as err:
            sch, error = None, err
    if isinstance(sch, list | tuple):
        sch = sch[0] if sch else None
    if sch is not None and not isinstance(sch, Schedule):
        raise TypeError(f"schedule rule {rule.name} returned {type(sch).__name__}, not a tir.Schedule")
    return sch, counting.infos, counting.error or error


def sample_schedule(func: PrimFunc, target, sampler=None) -> Schedule | None:
    """The schedule of `func` by the first of the target's default rules that applies, with
    `sampler` (default: DefaultSampler) taking the rule's decisions; None when no rule applies.

    The rule is the one `ApplyDefaultSchedule` picks (found with the rules' own decisions,
    remembered per function structure and target): when it declines under the sampled
    decisions, ScheduleError says so (a failed candidate, not a silent switch to another rule).
    `sch.trace` holds the rule's sampling instructions; `scheduled_func(sch, rule_of(...))` is
    the function `ApplyDefaultSchedule` would produce.
    """
    if not isinstance(func, PrimFunc):
        raise TypeError(f"sample_schedule takes a PrimFunc, got {type(func).__name__}")
    target = Target.resolve(target)
    sampler = sampler if sampler is not None else DefaultSampler()
    rules = default_rules(target)
    index = _default_rule(func, target, rules)
    if index is None:
        return None
    sch, infos, error = _run(rules[index], func, target, sampler)
    if sch is None:
        why = f": {error}" if error is not None else ""
        raise ScheduleError(
            f"schedule rule {rules[index].name} applies to this function but declined under the sampled "
            f"decisions (after {len(infos)} sampling instructions){why}"
        )
    return sch


# (structural hash of the function, target) -> the index of the rule that schedules it by default
_RULE_CACHE: dict = {}


def _default_rule(func: PrimFunc, target: Target, rules) -> int | None:
    """The index among `rules` of the first that applies with its own decisions (as
    `ApplyDefaultSchedule` picks), remembered per function structure and target."""
    from ..ir.structural import structural_digest

    key = (structural_digest(func), target.resolved(), tuple(r.name for r in rules))
    if key not in _RULE_CACHE:
        if len(_RULE_CACHE) > 1024:
            _RULE_CACHE.clear()
        default = DefaultSampler()
        applies = (k for k, rule in enumerate(rules) if _run(rule, func, target, default)[0] is not None)
        _RULE_CACHE[key] = next(applies, None)
    return _RULE_CACHE[key]


def rule_of(func: PrimFunc, target) -> str | None:
    """The name of the default rule that schedules `func` on `target` (None: no rule applies)."""
    target = Target.resolve(target)
    rules = default_rules(target)
    index = _default_rule(func, target, rules)
    return None if index is None else rules[index].name


def scheduled_func(sch: Schedule, rule: str | None = None) -> PrimFunc:
    """The function a schedule made, marked as `ApplyDefaultSchedule` marks it."""
    func = sch.mod[sch.func_name]
    if rule is not None:
        func = func.with_attr("dlight.rule", rule)
    return func.with_attr("tir.is_scheduled", True)


def space_size(func: PrimFunc, target) -> int:
    """An estimate of the number of distinct decision vectors of `func`'s space: the product
    of each sampling instruction's number of choices along the default schedule (choices that
    change later instructions' candidates make it an estimate). 1: nothing to tune."""
    target = Target.resolve(target)
    rules = default_rules(target)
    index = _default_rule(func, target, rules)
    if index is None:
        return 1
    _, infos, _ = _run(rules[index], func, target, DefaultSampler())
    return math.prod(info.num_choices() for info in infos)


__all__ = ["rule_of", "sample_schedule", "scheduled_func", "space_size"]
