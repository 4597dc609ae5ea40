"""Random sequences of schedule primitives never change what a tensor program computes.

Each step draws a primitive and its arguments at random (sched_fuzz.py); an illegal one must
raise ScheduleError and leave the schedule exactly as it was, a legal one must give a module
that computes the same values as the original (both built with LLVM and run). A few examples
run here; benchmarks/schedule_fuzz.py runs many.
"""

import sched_fuzz
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st


@settings(
    max_examples=30,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking a build-per-step case takes minutes
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_random_schedules_are_refused_or_preserve_results(data):
    sched_fuzz.check_random_schedule(data, sched_fuzz.Stats(), max_steps=4)
