"""The schedules of the TensorIR tutorials (blitz course, MLC tensor-program notebook), on small shapes."""

import sched_programs as P

from graphc import tir
from graphc.tir import ForKind


def _extents(sch, block):
    return [sch.get(lp).extent.value for lp in sch.get_loops(block)]


def test_blitz_course_split_reorder_bind():
    f = P.vector_add(8, with_b=False)
    sch = tir.Schedule(f)
    block_b = sch.get_block("B")
    (i,) = sch.get_loops(block_b)
    i_0, i_1, i_2 = sch.split(i, factors=[2, 2, 2])
    assert _extents(sch, block_b) == [2, 2, 2]
    sch.reorder(i_0, i_2, i_1)
    assert [sch.get(lp).loop_var for lp in sch.get_loops(block_b)] == [i_0.var, i_2.var, i_1.var]
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_2, "threadIdx.x")
    kinds = [sch.get(lp).kind for lp in sch.get_loops(block_b)]
    assert kinds == [ForKind.THREAD_BINDING, ForKind.THREAD_BINDING, ForKind.SERIAL]
    realize = sch.get(i_1).body
    (value,) = realize.iter_values
    assert isinstance(value, tir.Add)  # i_0 * 4 + i_1 * 2 + i_2
    P.assert_same_result(f, sch.mod["main"])


def test_mlc_vector_add_split_reorder_parallel():
    f = P.vector_add(128)
    sch = tir.Schedule(f)
    block_c = sch.get_sblock("C")
    (i,) = sch.get_loops(block_c)
    i0, i1, i2 = sch.split(i, factors=[None, 4, 4])
    assert _extents(sch, block_c) == [8, 4, 4]
    sch.reorder(i2, i1)
    assert _extents(sch, block_c) == [8, 4, 4]
    assert [sch.get(lp).loop_var for lp in sch.get_loops(block_c)] == [i0.var, i2.var, i1.var]
    sch.parallel(i0)
    assert sch.get(i0).kind == ForKind.PARALLEL
    P.assert_same_result(f, sch.mod["main"])


def test_mlc_matmul_blocking_reorder_parallel():
    f = P.matmul(64, 64, 4)
    block_size = 32
    sch = tir.Schedule(f)
    block_c = sch.get_sblock("C")
    (y, x, k) = sch.get_loops(block_c)
    yo, yi = sch.split(y, [None, block_size])
    xo, xi = sch.split(x, [None, block_size])
    sch.reorder(yo, xo, k, yi, xi)
    sch.parallel(yo)
    assert _extents(sch, block_c) == [2, 2, 4, 32, 32]
    assert sch.get(yo).kind == ForKind.PARALLEL
    trace = str(sch.trace).splitlines()
    assert trace[:3] == [
        'b0 = sch.get_block("C")',
        "l1, l2, l3 = sch.get_loops(b0)",
        "l4, l5 = sch.split(l1, [None, 32])",
    ]
    P.assert_same_result_built(f, sch.mod["main"])
