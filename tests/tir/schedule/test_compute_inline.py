"""compute_inline / reverse_compute_inline: structure, numerics and the illegal cases."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.ir import structural_equal
from graphc.tir import ScheduleError


def _expected_fused_two_stage(f):
    """C[i, j] = A[i, j] * 2 + 1 in one block named `name` with only A's region read."""
    A, C = f.buffers
    i, j, vi, vj = tir.Var("i"), tir.Var("j"), tir.Var("vi"), tir.Var("vj")
    return A, C, i, j, vi, vj


def test_compute_inline_structure_and_numerics():
    f = P.two_stage()
    sch = tir.Schedule(f)
    sch.compute_inline(sch.get_block("B"))
    A, C, i, j, vi, vj = _expected_fused_two_stage(f)
    blk = tir.Block(
        (P.spatial(vi, 8), P.spatial(vj, 8)),
        (P.point(A, vi, vj),),
        (P.point(C, vi, vj),),
        "C",
        C.vstore([vi, vj], A[vi, vj] * 2.0 + 1.0),
    )
    expected = P.func([A, C], P.loop(i, 8, P.loop(j, 8, tir.BlockRealize((i, j), P.TRUE, blk))))
    got = sch.mod["main"]
    assert structural_equal(got.body, expected.body, map_free_vars=True)
    assert got.body.block.alloc_buffers == ()
    P.assert_same_result(f, got)
    with pytest.raises(ScheduleError, match="no block named 'B'"):
        sch.get_block("B")


def test_reverse_compute_inline_structure_and_numerics():
    f = P.two_stage()
    sch = tir.Schedule(f)
    sch.reverse_compute_inline(sch.get_block("C"))
    A, C, i, j, vi, vj = _expected_fused_two_stage(f)
    blk = tir.Block(
        (P.spatial(vi, 8), P.spatial(vj, 8)),
        (P.point(A, vi, vj),),
        (P.point(C, vi, vj),),
        "B",
        C.vstore([vi, vj], A[vi, vj] * 2.0 + 1.0),
    )
    expected = P.func([A, C], P.loop(i, 8, P.loop(j, 8, tir.BlockRealize((i, j), P.TRUE, blk))))
    assert structural_equal(sch.mod["main"].body, expected.body)
    P.assert_same_result(f, sch.mod["main"])


def test_compute_inline_into_reduction_consumer():
    f = P.scale_then_sum()
    sch = tir.Schedule(f)
    sch.compute_inline(sch.get_block("S"))
    blk = sch.get(sch.get_block("B"))
    assert [r.buffer.name for r in blk.reads] == ["A"]
    assert blk.init is not None
    P.assert_same_result(f, sch.mod["main"])


def test_compute_inline_of_transposed_producer_with_scheduled_consumer():
    f = P.two_stage(4, 6)
    sch = tir.Schedule(f)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.split(j, factors=[None, 4])
    sch.compute_inline(sch.get_block("B"))
    P.assert_same_result(f, sch.mod["main"])


@pytest.mark.parametrize(
    "program, block, message",
    [
        (P.two_stage, "C", "an output of the function"),
        (P.mm_relu, "Y", "is a reduction"),
        (P.elementwise, "root", "root block"),
    ],
)
def test_compute_inline_errors(program, block, message):
    sch = tir.Schedule(program())
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match=message):
        sch.compute_inline(sch.get_block(block))
    P.assert_unchanged(sch, before)


def test_compute_inline_rejects_non_trivial_store_indices():
    f = P.two_stage(4, 4)
    sch = tir.Schedule(f)
    b = sch.get_block("B")
    blk = sch.get(b)
    store = blk.body
    vi, vj = store.indices
    bad = blk.replace(body=store.replace(indices=(vj, vi)), iter_vars=blk.iter_vars)
    bad_func = f.with_body(P.find_and_replace(f.body, blk, bad))
    sch = tir.Schedule(bad_func)
    sch.compute_inline(sch.get_block("B"))  # a transposed store is still a permutation: legal
    P.assert_same_result(bad_func, sch.mod["main"])
    worse = blk.replace(body=store.replace(indices=(vi, vi)))
    sch = tir.Schedule(f.with_body(P.find_and_replace(f.body, blk, worse)))
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="distinct block iter vars"):
        sch.compute_inline(sch.get_block("B"))
    P.assert_unchanged(sch, before)


@pytest.mark.parametrize(
    "program, block, message",
    [
        (P.mm_relu, "C", "producer 'Y' is a reduction"),
        (P.elementwise, "B", "exactly one intermediate buffer"),
        (P.mm_relu, "Y", "is a reduction"),
    ],
)
def test_reverse_compute_inline_errors(program, block, message):
    sch = tir.Schedule(program())
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match=message):
        sch.reverse_compute_inline(sch.get_block(block))
    P.assert_unchanged(sch, before)


# -- reverse_compute_inline in the cases TVM allows: Before/Expected ---------------------------

from graphc.script import tir as T  # noqa: E402
from graphc.tir.schedule.testing import assert_structural_equal_ignore_global_symbol  # noqa: E402


@T.prim_func
def multi_loads(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = (B[vi, vj] + 1.0) * B[vi, vj]


@T.prim_func
def multi_loads_inlined(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = (A[vi, vj] * T.float32(2.0) + T.float32(1.0)) * (A[vi, vj] * T.float32(2.0))


@T.prim_func
def partial_consumer(A: T.Buffer((8, 8), "float32"), C: T.Buffer((7, 7), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(7, 7):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def partial_consumer_inlined(A: T.Buffer((8, 8), "float32"), C: T.Buffer((7, 7), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            if vi < 7 and vj < 7:  # TVM >= 0.17's form: an `if` in the body, not a T.where
                C[vi, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)


@T.prim_func
def reshape_consumer(A: T.Buffer((16, 16), "float32"), C: T.Buffer((4, 4, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j, k in T.grid(4, 4, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[vi * 4 + vj, vk] + 1.0


@T.prim_func
def reshape_consumer_inlined(A: T.Buffer((16, 16), "float32"), C: T.Buffer((4, 4, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi // 4, vi % 4, vj])
            C[vi // 4, vi % 4, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)


@pytest.mark.parametrize(
    "before, expected",
    [
        (multi_loads, multi_loads_inlined),  # the consumer loads the producer twice
        (partial_consumer, partial_consumer_inlined),  # it reads 7x7 of the 8x8 the producer writes
        (reshape_consumer, reshape_consumer_inlined),  # it reads B[i * 4 + j, k]: a bijective affine map
    ],
)
def test_reverse_compute_inline_valid_cases(before, expected):
    sch = tir.Schedule(before)
    sch.reverse_compute_inline("C")
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], expected)
    P.assert_same_result(before, sch.mod["main"])


def test_reverse_compute_inline_producer_predicate_must_be_implied():
    @T.prim_func
    def implied(A: T.Buffer((8, 8), "float32"), C: T.Buffer((7, 8), "float32")):
        B = T.alloc_buffer((7, 8), "float32")
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(i < 7)
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(7, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = tir.Schedule(implied)
    sch.reverse_compute_inline("C")
    P.assert_same_result(implied, sch.mod["main"])
