"""CompactBufferAllocation: alloc_buffers shrink to the hull of the indices their block uses."""

import numpy as np

from graphc import tir
from graphc.tir import BufferStore, For, ForKind, SeqStmt, Var, const
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import compact_buffer_allocation, convert_blocks_to_opaque, lower_blocks


def _tile_program(programs, n=8, tile=4, extra=0):
    """for io: (for ii: T[io*tile + ii] = A[...] + 1); (for ii: B[...] = T[io*tile + ii + extra...])"""
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    T = tir.decl_buffer((n + extra,), "float32", "T")
    io, ii, ii2 = Var("io"), Var("ii"), Var("ii")
    inner = SeqStmt((
        programs.loops([(ii, tile + extra)], BufferStore(T, A[tir.min(io * tile + ii, n - 1)] + 1.0,
                                                         (io * tile + ii,))),
        programs.loops([(ii2, tile)], BufferStore(B, T[io * tile + ii2 + extra] * 2.0, (io * tile + ii2,))),
    ))  # fmt: skip
    wrapper = programs.block("", [], [], inner, alloc=[T])
    return programs.func([A, B], For(io, const(0), const(n // tile), ForKind.SERIAL, wrapper))


def test_tile_buffer_shrinks_and_indices_shift(programs):
    f = _tile_program(programs)
    g = compact_buffer_allocation(f)
    alloc = g.body.block.body.body.block.alloc_buffers[0]
    assert [int(d) for d in alloc.shape] == [4]
    stores = []
    tir.post_order_visit(g.body, lambda n: stores.append(n) if isinstance(n, BufferStore) else None)
    assert stores[0].buffer is alloc
    x, y1, y2 = np.arange(8, dtype="float32"), np.zeros(8, "float32"), np.zeros(8, "float32")
    run_primfunc(f, x, y1)
    run_primfunc(g, x, y2)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(y1, (x + 1) * 2)


def test_hull_covers_reads_beyond_the_writes(programs):
    f = _tile_program(programs, extra=1)
    g = compact_buffer_allocation(f)
    assert [int(d) for d in g.body.block.body.body.block.alloc_buffers[0].shape] == [5]
    x, y1, y2 = np.arange(8, dtype="float32"), np.zeros(8, "float32"), np.zeros(8, "float32")
    run_primfunc(f, x, y1)
    run_primfunc(g, x, y2)
    np.testing.assert_array_equal(y1, y2)


def test_full_use_is_unchanged_and_pass_is_idempotent(programs):
    f = convert_blocks_to_opaque(programs.two_stage())
    assert compact_buffer_allocation(f) is f
    g = compact_buffer_allocation(_tile_program(programs))
    assert compact_buffer_allocation(g) is g


def test_non_opaque_blocks_are_left_alone(programs):
    f = programs.two_stage()
    assert compact_buffer_allocation(f) is f


def test_strided_buffers_are_not_compacted(programs):
    A = tir.decl_buffer((8,), "float32", "A")
    T = tir.decl_buffer((8,), "float32", "T", strides=(const(1),))
    i = Var("i")
    body = programs.loops([(i, 2)], SeqStmt((BufferStore(T, A[i], (i,)), BufferStore(A, T[i] + 1.0, (i,)))))
    f = programs.func([A], body, alloc=[T])
    assert compact_buffer_allocation(f) is f


def test_lowered_result_allocates_the_tile(programs):
    lowered = lower_blocks(compact_buffer_allocation(_tile_program(programs)))
    alloc = lowered.body.body
    assert isinstance(alloc, tir.Allocate) and [int(e) for e in alloc.extents] == [4]
