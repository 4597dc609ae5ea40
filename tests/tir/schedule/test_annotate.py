"""annotate / unannotate on blocks and loops."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.tir import ScheduleError


def test_annotate_block_and_loop_then_unannotate():
    sch = tir.Schedule(P.elementwise(4, 4))
    b = sch.get_block("B")
    i, _ = sch.get_loops(b)
    sch.annotate(b, "meta_schedule.tiling_structure", "SSRSRS")
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    assert sch.get(b).annotations == {"meta_schedule.tiling_structure": "SSRSRS"}
    assert sch.get(i).annotations == {"pragma_auto_unroll_max_step": 16}
    sch.unannotate(b, "meta_schedule.tiling_structure")
    sch.unannotate(i, "pragma_auto_unroll_max_step")
    assert sch.get(b).annotations == {} and sch.get(i).annotations == {}
    P.assert_same_result(P.elementwise(4, 4), sch.mod["main"])


def test_unannotate_missing_key_is_an_error():
    sch = tir.Schedule(P.elementwise(4, 4))
    b = sch.get_block("B")
    sch.annotate(b, "k", 1)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="has no annotation 'x'.*it has: k"):
        sch.unannotate(b, "x")
    with pytest.raises(ScheduleError, match="keys are strings"):
        sch.annotate(b, 3, 1)
    P.assert_unchanged(sch, before)
