"""Auto-tuning (TVM's MetaSchedule): search the decisions of the default schedule rules.

`space.py` turns the target's dlight rules into search spaces: `sample_schedule(func, target,
sampler)` runs the rule `ApplyDefaultSchedule` would pick with the sampler taking its
decisions (see `graphc.tir.schedule.sampling`).
"""

from .space import rule_of, sample_schedule, scheduled_func, space_size

__all__ = ["rule_of", "sample_schedule", "scheduled_func", "space_size"]
