"""cpu.Fallback: inlining, parallel outer loops, vectorized inner loops, serial small functions."""

import dlight_programs as P
import pytest

from graphc import dlight, tir
from graphc.dlight.cpu.utils import PARALLEL_MIN_WORK
from graphc.ir import structural_equal

RULE = dlight.cpu.Fallback()


def _apply(program, target=P.AVX512, **kw):
    func, inputs, ref = program(**kw)
    sch = RULE.apply(func, target, False)
    assert isinstance(sch, tir.Schedule)
    P.check_numerics(sch.mod, inputs, ref)
    return sch


@pytest.mark.parametrize("program", [P.elementwise, P.broadcast])
def test_elementwise_and_broadcast_parallel_outer_vector_inner(program):
    sch = _apply(program)
    assert P.loop_kinds(sch, "C") == ["parallel", "serial", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "C")] == [64, 512 // 64, 64]  # 4 registers of 16 lanes


def test_vector_width_follows_the_target():
    sch = _apply(P.elementwise, target=P.AVX2)
    assert [e.value for e in P.loop_extents(sch, "C")] == [64, 512 // 32, 32]  # 4 registers of 8 lanes


def test_one_register_per_vector_loop_when_asked():
    func, inputs, ref = P.elementwise()
    sch = dlight.cpu.Fallback(vector_unroll=1).apply(func, P.AVX512, False)
    assert [e.value for e in P.loop_extents(sch, "C")] == [64, 32, 16]
    P.check_numerics(sch.mod, inputs, ref)


def test_injective_chain_is_inlined_then_scheduled():
    sch = _apply(P.injective_chain)
    assert [b.name for b in dlight.normalize_prim_func(sch)] == ["R"]
    assert P.loop_kinds(sch, "R") == ["parallel", "serial", "vectorized"]


def test_short_outer_loops_are_fused_for_parallelism():
    sch = _apply(P.elementwise, n=4, m=8192)
    kinds = P.loop_kinds(sch, "C")
    assert kinds == ["parallel", "vectorized"]
    assert P.loop_extents(sch, "C")[0].value == 4 * 8192 // 64


def test_tiny_function_stays_serial():
    sch = _apply(P.tiny)
    assert P.loop_kinds(sch, "B") == ["serial", "serial"]  # 8 < 16 lanes: not even vectorized
    assert 4 * 8 < PARALLEL_MIN_WORK


def test_small_function_is_vectorized_but_serial():
    sch = _apply(P.elementwise, n=8, m=128)
    assert P.loop_kinds(sch, "C") == ["serial", "serial", "vectorized"]


def test_non_dividing_inner_extent_gets_a_predicated_tail():
    sch = _apply(P.odd_tail)
    assert P.loop_kinds(sch, "B") == ["serial", "serial", "vectorized"]
    realize = sch.get(sch.get_loops(sch.get_block("B"))[-1]).body
    assert isinstance(realize.predicate, tir.LT)


def test_symbolic_shape_is_parallel_and_vectorized():
    sch = _apply(P.symbolic_add)
    assert P.loop_kinds(sch, "C") == ["parallel", "vectorized"]  # the whole 64-wide row is one vector loop
    P.check_numerics(sch.mod, *P.symbolic_add(n=3)[1:])  # the same function at another size


def test_non_contiguous_inner_loop_is_not_vectorized():
    sch = _apply(P.transpose)
    assert P.loop_kinds(sch, "B") == ["parallel", "serial"]


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_row_reduction_parallel_rows_with_hoisted_init(kind):
    sch = _apply(P.row_reduce, kind=kind)
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial"]
    assert sch.get(sch.get_block("S_update")).init is None


def test_trailing_spatial_loop_of_a_reduction_is_vectorized():
    sch = _apply(P.middle_sum_srs, b=16, m=128)
    assert P.loop_kinds(sch, "S_update") == ["parallel", "serial", "serial", "vectorized"]
    assert P.loop_kinds(sch, "S_init") == ["parallel", "serial", "vectorized"]


def test_softmax_every_block_scheduled():
    sch = _apply(P.softmax)
    assert P.loop_kinds(sch, "O") == ["parallel", "serial", "vectorized"]
    assert P.loop_kinds(sch, "Z_update")[0] == "parallel"


def test_non_cpu_target_declines_and_input_is_untouched():
    func = P.elementwise()[0]
    assert RULE.apply(func, dlight.base.transform.Target("cuda"), False) is None
    before = P.elementwise()[0]
    RULE.apply(func, P.AVX512, False)
    assert structural_equal(func, before)
