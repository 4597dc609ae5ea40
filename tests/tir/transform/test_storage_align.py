"""storage_align through lowering: padded strides on the compacted buffer, strided flat accesses,
the same results through the interpreter and the LLVM build."""

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.errors import ScheduleError, TIRError
from graphc.tir.interpreter import Interpreter, run_primfunc
from graphc.tir.transform import (
    compact_buffer_allocation,
    convert_blocks_to_opaque,
    lower_primfunc,
    plan_buffer_allocation,
)
from graphc.tir.transform.storage_align import aligned_strides


def _nodes(stmt):
    found = []
    tir.post_order_visit(stmt, found.append)
    return found


def _matmul_schedule(n=16, align_read=(0, 32, 1), align_write=None):
    """A tiled matmul with a "shared" tile of A and a "local" tile of C, both 8 x 8."""
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    io, ii = sch.split(i, factors=[None, 8])
    jo, ji = sch.split(j, factors=[None, 8])
    ko, ki = sch.split(kk, factors=[None, 8])
    sch.reorder(io, jo, ko, ii, ji, ki)
    shared = sch.cache_read(c, 0, "shared")
    sch.compute_at(shared, ko)
    local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(local, jo)
    if align_read is not None:
        sch.storage_align(shared, 0, *align_read)
    if align_write is not None:
        sch.storage_align(c, 0, *align_write)
    return sch


def _inputs(n=16, seed=0):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
    return a, b, np.zeros((n, n), "float32")


def _allocs(func) -> dict:
    return {n.scope: [int(e) for e in n.extents] for n in _nodes(func.body) if isinstance(n, tir.Allocate)}


def test_aligned_strides_pad_the_axis_and_build_outer_strides_on_it():
    c = tir.const
    assert [int(s) for s in aligned_strides((c(16), c(32)), [(32, 1), None])] == [33, 1]
    assert [int(s) for s in aligned_strides((c(16), c(33)), [(32, 1), None])] == [33, 1]  # already there
    assert [int(s) for s in aligned_strides((c(2), c(3), c(5)), [None, (8, 2), None])] == [30, 10, 1]
    assert [int(s) for s in aligned_strides((c(4), c(6)), [None, (4, 3)])] == [18, 3]  # innermost too


def test_aligned_strides_of_a_symbolic_shape_evaluate_to_the_padded_value():
    n = tir.Var("n")
    strides = aligned_strides((tir.const(8), n), [(32, 1), None])
    for value in (1, 31, 32, 33, 64, 100):
        interp = Interpreter()
        interp.env[n] = value
        padded = int(interp.eval(strides[0]))
        assert padded >= value and padded % 32 == 1 and padded - value < 32


def test_compaction_gives_the_tile_padded_strides():
    sch = _matmul_schedule()
    f = compact_buffer_allocation(convert_blocks_to_opaque(plan_buffer_allocation(sch.mod["main"])))
    [shared] = [b for n in _nodes(f.body) if isinstance(n, tir.Block) for b in n.alloc_buffers
                if b.scope == "shared"]  # fmt: skip
    assert [int(d) for d in shared.shape] == [8, 8]
    assert [int(s) for s in shared.strides] == [33, 1]


def test_lowered_tile_allocates_the_strided_span_and_indexes_with_the_padded_stride():
    lowered = lower_primfunc(_matmul_schedule().mod["main"])
    assert _allocs(lowered) == {"shared": [7 * 33 + 8], "local": [64]}  # unaligned: 8 * 8 = 64
    text = lowered.script()
    assert "A_shared_1[ax0 * 33 + ax1] = A_1[" in text
    assert "A_shared_1[i_1 * 33 + k_1]" in text
    assert "C_local_1[i_1 * 8 + j_1]" in text  # the unaligned cache keeps its compact layout
    unaligned = lower_primfunc(_matmul_schedule(align_read=None).mod["main"])
    assert _allocs(unaligned) == {"shared": [64], "local": [64]}
    assert "A_shared_1[ax0 * 8 + ax1]" in unaligned.script()


def test_cache_write_block_alignment_pads_the_local_tile():
    sch = _matmul_schedule(align_read=None, align_write=(0, 32, 1))
    assert sch.get(sch.get_block("C")).annotations["buffer_dim_align"] == [[0, 0, 32, 1]]
    lowered = lower_primfunc(sch.mod["main"])
    assert _allocs(lowered) == {"shared": [64], "local": [7 * 33 + 8]}
    assert "C_local_1[i_1 * 33 + j_1]" in lowered.script()
    a, b, out = _inputs()
    run_primfunc(lowered, a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("align", [(0, 32, 1), (1, 8, 3), (0, 16, 0)])
def test_interpreter_results_are_unchanged_by_alignment(align):
    sch = _matmul_schedule(align_read=align, align_write=align)
    a, b, before = _inputs(seed=1)
    after = before.copy()
    run_primfunc(sch.mod["main"], a, b, before)
    run_primfunc(lower_primfunc(sch.mod["main"]), a, b, after)
    np.testing.assert_array_equal(before, after)
    np.testing.assert_allclose(after, a @ b, rtol=1e-4, atol=1e-4)


def test_built_aligned_matmul_matches_the_unaligned_one():
    a, b, plain = _inputs(seed=2)
    aligned = plain.copy()
    graphc.build(_matmul_schedule(align_read=None).mod, target="llvm")["main"](a, b, plain)
    graphc.build(_matmul_schedule().mod, target="llvm")["main"](a, b, aligned)
    np.testing.assert_array_equal(plain, aligned)
    np.testing.assert_allclose(aligned, a @ b, rtol=1e-4, atol=1e-4)


def test_alignment_of_a_parameter_buffer_is_ignored():
    """Only intermediates (alloc_buffers) are re-laid out; a function's output keeps its layout."""
    sch = _matmul_schedule(align_read=None)
    with pytest.raises(ScheduleError, match="not allocated by a block"):  # TVM refuses it too
        sch.storage_align(sch.get_block("C_local"), 0, 0, 32, 1)  # writes the parameter C
    sch.annotate(sch.get_block("C_local"), "buffer_dim_align", [[0, 0, 32, 1]])
    lowered = lower_primfunc(sch.mod["main"])
    assert _allocs(lowered) == {"shared": [64], "local": [64]}
    a, b, out = _inputs(seed=3)
    run_primfunc(lowered, a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


def test_bad_annotation_is_reported_with_the_block():
    sch = _matmul_schedule(align_read=None)
    sch.annotate(sch.get_block("A_shared"), "buffer_dim_align", [[3, 0, 32, 1]])
    with pytest.raises(TIRError, match="A_shared.*buffer_index"):
        lower_primfunc(sch.mod["main"])
