"""parallel / vectorize / unroll / bind: loop kinds, thread bindings and the reduction-loop rule."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.tir import ForKind, IterType, ScheduleError


def test_parallel_vectorize_unroll_set_kinds():
    sch = tir.Schedule(P.elementwise(8, 8))
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.parallel(i)
    sch.unroll(j0)
    sch.vectorize(j1)
    kinds = [sch.get(lp).kind for lp in sch.get_loops(b)]
    assert kinds == [ForKind.PARALLEL, ForKind.UNROLLED, ForKind.VECTORIZED]
    assert sch.get(i).loop_var is i.var  # the handle still names the same loop
    P.assert_same_result(P.elementwise(), sch.mod["main"])


def test_parallel_structure():
    f = P.elementwise(4, 4)
    sch = tir.Schedule(f)
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    loop = f.body.block.body
    expected = P.with_root_body(f, tir.For(loop.loop_var, loop.min, loop.extent, ForKind.PARALLEL, loop.body))
    assert structural_equal(sch.mod["main"], expected)


@pytest.mark.parametrize("primitive", ["parallel", "vectorize"])
def test_reduction_loop_cannot_be_parallel_or_vectorized(primitive):
    sch = tir.Schedule(P.matmul(4, 4, 4))
    _, _, k = sch.get_loops(sch.get_block("C"))
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="reduction iter vk"):
        getattr(sch, primitive)(k)
    P.assert_unchanged(sch, before)
    sch.unroll(k)  # unrolling a reduction loop is fine
    P.assert_same_result(P.matmul(4, 4, 4), sch.mod["main"])


def test_fused_spatial_and_reduce_loop_cannot_be_parallel():
    sch = tir.Schedule(P.row_sum(4, 4))
    i, k = sch.get_loops(sch.get_block("B"))
    f = sch.fuse(i, k)
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="reduction"):
        sch.parallel(f)
    P.assert_unchanged(sch, before)


def test_bind_thread_axes():
    sch = tir.Schedule(P.elementwise(8, 8))
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    loop = sch.get(i)
    assert loop.kind == ForKind.THREAD_BINDING
    tb = loop.thread_binding
    assert tb.thread_tag == "blockIdx.x" and tb.var.name == "blockIdx.x" and tb.dom is None
    assert tb.iter_type == IterType.THREAD_INDEX
    assert sch.get(j).thread_binding.thread_tag == "threadIdx.x"
    P.assert_same_result(P.elementwise(), sch.mod["main"])


def test_bind_errors():
    sch = tir.Schedule(P.matmul(4, 4, 4))
    i, j, k = sch.get_loops(sch.get_block("C"))
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="unknown thread axis"):
        sch.bind(i, "threadIdx.w")
    with pytest.raises(ScheduleError, match="reduction"):
        sch.bind(k, "blockIdx.x")
    P.assert_unchanged(sch, before)
    sch.bind(k, "threadIdx.x")  # a cross-thread reduction is allowed
    sch.bind(i, "blockIdx.x")
    with pytest.raises(ScheduleError, match="already bound"):
        sch.parallel(i)
    with pytest.raises(ScheduleError, match="bound to"):
        sch.split(i, factors=[2, 2])


def test_error_message_shows_where_in_the_program():
    sch = tir.Schedule(P.matmul(4, 4, 4))
    _, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError) as info:
        sch.parallel(k)
    text = str(info.value)
    assert "in function 'main':" in text
    assert any(line.startswith("-->") and " k " in line for line in text.splitlines())
