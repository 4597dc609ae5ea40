"""Random sequences of schedule primitives never change what a tensor program computes.

Each step draws a primitive and its arguments at random (sched_fuzz.py); an illegal one must
raise ScheduleError and leave the schedule exactly as it was, a legal one must give a module
that computes the same values as the original (both built with LLVM and run). A few examples
run here; benchmarks/schedule_fuzz.py runs many.
"""

import pytest
import sched_fuzz
import sched_programs as P
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from graphc import tir
from graphc.tir import ScheduleError
from graphc.tir.analysis.verify_well_formed import verify_well_formed


@settings(
    max_examples=30,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking a build-per-step case takes minutes
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_random_schedules_are_refused_or_preserve_results(data):
    sched_fuzz.check_random_schedule(data, sched_fuzz.Stats(), max_steps=4)


@pytest.mark.parametrize("primitive", ["blockize", "decompose_reduction"])
@pytest.mark.parametrize("start, legal", [(1, False), (7, False), (12, True)])
def test_init_of_a_partitioned_fused_reduction(primitive, start, legal):
    """Found by the long run: fuse a row sum's (i, k), partition the fused loop at 1 and
    blockize the second part. Its separate init reset row 0, which the first part had begun.
    Only a partition at a row boundary keeps every row's first update in one part."""
    f = P.row_sum(4, 6)
    sch = tir.Schedule(f)
    fused = sch.fuse(*sch.get_loops(sch.get_block("B")))
    sch.loop_partition(fused, [start, None], False)
    block = sch.get_child_blocks(sch.get_block("root"))[1]
    (loop,) = sch.get_loops(block)
    before = P.snapshot(sch)
    apply = (lambda: sch.blockize(loop)) if primitive == "blockize" else (
        lambda: sch.decompose_reduction(block, loop))
    if not legal:
        with pytest.raises(ScheduleError, match="some spatial point does not reach the reduce iters' minima"):
            apply()
        P.assert_unchanged(sch, before)
        return
    apply()
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(f, sch.mod["main"])
