"""FlattenBuffer: N-D accesses become 1-D accesses of flat buffers sharing the data Var."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphc import IRModule, tir
from graphc.errors import TIRError
from graphc.ir import structural_equal
from graphc.tir import Allocate, BufferStore, For, ForKind, Var, const
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import FlattenBuffer, flat_index, flat_size, flatten_buffer, lower_blocks


def _accesses(stmt):
    out = []
    tir.post_order_visit(
        stmt, lambda n: out.append(n) if isinstance(n, tir.BufferLoad | BufferStore) else None
    )
    return out


def test_matmul_accesses_are_flat_and_share_one_buffer_object(programs):
    f = flatten_buffer(lower_blocks(programs.matmul()))
    A, B, C = f.buffers
    assert [len(b.shape) for b in f.buffers] == [2, 2, 2]  # buffer_map keeps N-D shapes
    accesses = _accesses(f.body)
    assert all(len(a.buffer.shape) == 1 for a in accesses)
    flat_c = {id(a.buffer) for a in accesses if a.buffer.data is C.data}
    assert len(flat_c) == 1
    c_flat = next(a.buffer for a in accesses if a.buffer.data is C.data)
    assert int(c_flat.shape[0]) == 20 and c_flat.name == "C" and c_flat.dtype == "float32"


def test_row_major_index(programs):
    C = tir.decl_buffer((4, 5), "float32", "C")
    i, j = Var("i"), Var("j")
    assert structural_equal(flat_index(C, (i, j)), i * 5 + j)
    D = tir.decl_buffer((2, 3, 4), "float32", "D")
    assert flat_index(D, (const(1), const(2), const(3))).value == 1 * 12 + 2 * 4 + 3


def test_strided_buffer_with_offset():
    s0, off = Var("s0"), Var("off")
    A = tir.decl_buffer((3, 4), "float32", "A", strides=(s0, 1), elem_offset=off)
    i, j = Var("i"), Var("j")
    assert structural_equal(flat_index(A, (i, j)), i * s0 + j + off)
    assert structural_equal(flat_size(A), 1 + 2 * s0 + 3 + off)


def test_symbolic_shape_flat_size(programs):
    n = Var("n")
    A = tir.decl_buffer((n, 8), "float32", "A")
    assert structural_equal(flat_size(A), n * 8)


def test_ramp_index_flattens_to_a_ramp():
    A = tir.decl_buffer((4, 8), "float32", "A")
    i = Var("i")
    index = flat_index(A, (i, tir.ramp(const(0), 1, 4)))
    assert isinstance(index, tir.Ramp) and index.lanes == 4
    assert structural_equal(index.base, i * 8) and index.stride.value == 1
    index = flat_index(A, (tir.ramp(i, 1, 4), const(3)))
    assert isinstance(index, tir.Ramp) and index.stride.value == 8


def test_vector_store_flattens_and_runs():
    A = tir.decl_buffer((2, 8), "float32", "A")
    a, i, j = Var("a", "handle"), Var("i"), Var("j")
    idx = (i, tir.ramp(j * 4, 1, 4))
    store = BufferStore(A, tir.BufferLoad(A, idx, "float32x4") * tir.broadcast(const(2.0), 4), idx)
    body = For(i, const(0), const(2), ForKind.SERIAL, For(j, const(0), const(2), ForKind.SERIAL, store))
    f = tir.PrimFunc([a], body, buffer_map={a: A})
    flat = flatten_buffer(f)
    stores = [s for s in _accesses(flat.body) if isinstance(s, BufferStore)]
    assert isinstance(stores[0].indices[0], tir.Ramp)
    x = np.arange(16, dtype="float32").reshape(2, 8)
    expected = x * 2
    run_primfunc(flat, x)
    np.testing.assert_array_equal(x, expected)


def test_allocate_extents_become_flat(programs):
    f = flatten_buffer(lower_blocks(programs.two_stage()))
    assert isinstance(f.body, Allocate) and [int(e) for e in f.body.extents] == [20]


def test_one_d_buffers_are_untouched_and_pass_is_idempotent(programs):
    f = lower_blocks(programs.vector_add())
    assert flatten_buffer(f) is f
    g = flatten_buffer(lower_blocks(programs.matmul()))
    assert flatten_buffer(g) is g


def test_zero_d_buffer():
    A = tir.decl_buffer((), "float32", "A")
    a = Var("a", "handle")
    f = flatten_buffer(tir.PrimFunc([a], BufferStore(A, const(3.0), ()), buffer_map={a: A}))
    assert [int(d) for d in f.body.buffer.shape] == [1] and f.body.indices[0].value == 0
    x = np.zeros((), dtype="float32")
    run_primfunc(f, x)
    assert x == 3.0


def test_block_form_is_rejected(programs):
    with pytest.raises(TIRError, match="run ConvertBlocksToOpaque and LowerOpaqueBlock first"):
        FlattenBuffer()(IRModule({"main": programs.matmul()}))


def test_flattened_programs_match_numerically(programs):
    for make in (programs.reduce_sum, programs.matmul, programs.two_stage):
        f = lower_blocks(make())
        ins = programs.random_inputs(f, seed=2)
        a, b = [x.copy() for x in ins], [x.copy() for x in ins]
        run_primfunc(f, *a)
        run_primfunc(flatten_buffer(f), *b)
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6)


def test_symbolic_strides_bound_at_run_time(programs):
    s0 = Var("s0")
    A = tir.decl_buffer((4, 3), "float32", "A", strides=(s0, 1))
    B = tir.decl_buffer((4, 3), "float32", "B")
    i, j, vi, vj = Var("i"), Var("j"), Var("v_i"), Var("v_j")
    store = BufferStore(B, A[vi, vj] + 1.0, (vi, vj))
    blk = programs.block("B", [(vi, 4, programs.SP), (vj, 3, programs.SP)], [i, j], store)
    f = programs.func([A, B], programs.loops([(i, 4), (j, 3)], blk))
    lowered = flatten_buffer(lower_blocks(f))
    loads = [n for n in _accesses(lowered.body) if isinstance(n, tir.BufferLoad)]
    assert structural_equal(loads[0].indices[0], lowered.body.loop_var * s0 + lowered.body.body.loop_var)
    x, y = np.arange(12, dtype="float32").reshape(4, 3), np.zeros((4, 3), dtype="float32")
    run_primfunc(lowered, x, y)
    np.testing.assert_array_equal(y, x + 1)


@settings(max_examples=50, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    data=st.data(),
)
def test_flat_index_matches_numpy_ravel(shape, data):
    from graphc.tir.interpreter import Interpreter

    index = [data.draw(st.integers(0, d - 1)) for d in shape]
    buf = tir.decl_buffer(tuple(shape), "float32", "X")
    assert Interpreter().eval(flat_index(buf, [const(i) for i in index])) == np.ravel_multi_index(
        index, shape
    )
    assert Interpreter().eval(flat_size(buf)) == int(np.prod(shape))
