"""ConvertBlocksToOpaque / LowerOpaqueBlock: block form to plain loops."""

import numpy as np
import pytest

from graphc import IRModule, tir
from graphc.errors import TIRError
from graphc.ir import structural_equal
from graphc.tir import (
    Allocate,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IterType,
    IterVar,
    PrimFunc,
    SeqStmt,
    Var,
    const,
)  # fmt: skip
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import (
    ConvertBlocksToOpaque,
    LowerBlocks,
    LowerOpaqueBlock,
    convert_blocks_to_opaque,
    lower_blocks,
)  # fmt: skip


def _no_blocks(stmt):
    found = []
    tir.post_order_visit(
        stmt, lambda n: found.append(n) if isinstance(n, tir.Block | tir.BlockRealize) else None
    )
    return not found


def test_convert_binds_iter_vars_and_keeps_blocks(programs):
    f = convert_blocks_to_opaque(programs.vector_add())
    realize = f.body.block.body.body
    assert isinstance(realize, tir.BlockRealize) and realize.iter_values == ()
    assert realize.block.iter_vars == () and realize.block.name_hint == "C"
    store = realize.block.body
    assert store.indices[0] is f.body.block.body.loop_var


def test_vector_add_lowers_to_a_loop(programs):
    f = lower_blocks(programs.vector_add())
    A, B, C = f.buffers
    i = Var("i")
    expected = For(i, const(0), const(16), ForKind.SERIAL, BufferStore(C, A[i] + B[i], (i,)))
    assert structural_equal(f.body, expected)


def test_reduction_init_becomes_if_at_reduce_min(programs):
    f = lower_blocks(programs.reduce_sum())
    A, B = f.buffers
    i, k = Var("i"), Var("k")
    inner = SeqStmt(
        (
            IfThenElse(tir.convert(k == 0), BufferStore(B, const(0.0), (i,))),
            BufferStore(B, B[i] + A[i, k], (i,)),
        )
    )
    expected = For(i, const(0), const(4), ForKind.SERIAL, For(k, const(0), const(6), ForKind.SERIAL, inner))
    assert structural_equal(f.body, expected)


def test_init_condition_uses_the_reduce_domain_min(programs):
    A, B = tir.decl_buffer((8,), "float32", "A"), tir.decl_buffer((1,), "float32", "B")
    k, vk, z = Var("k"), Var("v_k"), Var("v_z")
    realize = tir.BlockRealize(
        (const(0), k + 2),
        const(True),
        tir.Block(
            (
                IterVar(tir.Range(const(0), const(1)), z),
                IterVar(tir.Range(const(2), const(6)), vk, IterType.COMM_REDUCE),
            ),
            (),
            (),
            "S",
            BufferStore(B, B[z] + A[vk], (z,)),
            BufferStore(B, const(0.0), (z,)),
        ),
    )
    f = programs.func([A, B], programs.loops([(k, 6)], realize))
    cond = lower_blocks(f).body.body.seq[0].condition
    assert structural_equal(cond, tir.convert(k + 2 == 2))
    x, out = np.arange(8, dtype="float32"), np.full(1, 7.0, dtype="float32")
    run_primfunc(lower_blocks(f), x, out)
    assert out[0] == x[2:].sum()


def test_predicate_becomes_a_guard(programs):
    f = lower_blocks(programs.guarded())
    guard = f.body.body.body
    assert isinstance(guard, IfThenElse)
    io, ii = f.body.loop_var, f.body.body.loop_var
    assert structural_equal(guard.condition, tir.convert(io * 4 + ii < 10))


def test_alloc_buffers_become_allocate_at_block_position(programs):
    f = lower_blocks(programs.two_stage())
    assert isinstance(f.body, Allocate)
    assert f.body.dtype == "float32" and [int(e) for e in f.body.extents] == [4, 5]
    assert isinstance(f.body.body, SeqStmt) and len(f.body.body.seq) == 2
    assert _no_blocks(f.body)


def test_inner_block_allocation_stays_inside_its_loop(programs):
    A, B = tir.decl_buffer((4,), "float32", "A"), tir.decl_buffer((4,), "float32", "B")
    tmp = tir.decl_buffer((1,), "float32", "tmp", scope="local")
    i = Var("i")
    inner = programs.block(
        "inner",
        [],
        [],
        SeqStmt((BufferStore(tmp, A[i] + 1.0, (const(0),)), BufferStore(B, tmp[0] * 2.0, (i,)))),
        alloc=[tmp],
    )
    f = lower_blocks(programs.func([A, B], programs.loops([(i, 4)], inner)))
    alloc = f.body.body
    assert isinstance(f.body, For) and isinstance(alloc, Allocate)
    assert alloc.buffer_var is tmp.data and alloc.scope == "local"
    x, y = np.arange(4, dtype="float32"), np.zeros(4, dtype="float32")
    run_primfunc(f, x, y)
    assert y.tolist() == ((x + 1) * 2).tolist()


def test_thread_binding_loops_stay(programs):
    A = tir.decl_buffer((32,), "float32", "A")
    tx, vi = Var("threadIdx.x"), Var("v_i")
    body = programs.block("A", [(vi, 32, programs.SP)], [tx], BufferStore(A, const(1.0), (vi,)))
    loop = For(
        tx,
        const(0),
        const(32),
        ForKind.THREAD_BINDING,
        body,
        IterVar(None, tx, IterType.THREAD_INDEX, "threadIdx.x"),
    )
    f = lower_blocks(programs.func([A], loop))
    assert f.body.kind == ForKind.THREAD_BINDING and f.body.thread_binding.thread_tag == "threadIdx.x"
    assert isinstance(f.body.body, BufferStore)


def test_match_buffer_accesses_go_to_the_source(programs):
    A = tir.decl_buffer((4, 8), "float32", "A")
    sub = tir.decl_buffer((8,), "float32", "sub")
    i, j, vi = Var("i"), Var("j"), Var("v_i")
    region = tir.BufferRegion(A, (tir.Range(vi, const(1)), tir.Range(const(0), const(8))))
    body = programs.loops([(j, 8)], BufferStore(sub, sub[j] * 2.0, (j,)))
    realize = programs.block("row", [(vi, 4, programs.SP)], [i], body)
    realize = realize.replace(
        block=realize.block.replace(match_buffers=(tir.MatchBufferRegion(sub, region),))
    )
    f = programs.func([A], programs.loops([(i, 4)], realize))
    x = np.arange(32, dtype="float32").reshape(4, 8)
    expected = x * 2
    lowered = lower_blocks(f)
    store = lowered.body.body.body
    assert store.buffer is A and store.indices[0] is lowered.body.loop_var
    run_primfunc(lowered, x)
    np.testing.assert_array_equal(x, expected)


def test_mismatched_binding_count_is_an_error(programs):
    f = programs.vector_add()
    realize = f.body.block.body.body
    bad = f.with_body(
        f.body.replace(
            block=f.body.block.replace(body=f.body.block.body.replace(body=realize.replace(iter_values=())))
        )
    )
    with pytest.raises(TIRError, match="has 1 iter vars but its BlockRealize binds 0 values"):
        lower_blocks(bad)


def test_passes_by_tvm_names_and_idempotence(programs):
    mod = IRModule({"main": programs.matmul()})
    step1 = ConvertBlocksToOpaque()(mod)
    step2 = LowerOpaqueBlock()(step1)
    assert _no_blocks(step2["main"].body)
    assert structural_equal(step2["main"], LowerBlocks()(mod)["main"])
    again = LowerOpaqueBlock()(ConvertBlocksToOpaque()(step2))
    assert again["main"] is step2["main"]
    assert isinstance(mod["main"].body, tir.BlockRealize)  # the input is untouched


def test_lowered_block_form_matches_numerically(programs):
    for make in (
        programs.vector_add,
        programs.reduce_sum,
        programs.matmul,
        programs.two_stage,
        programs.guarded,
    ):
        f = make()
        ins = programs.random_inputs(f, seed=1)
        a, b = [x.copy() for x in ins], [x.copy() for x in ins]
        run_primfunc(f, *a)
        run_primfunc(lower_blocks(f), *b)
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6)


def test_block_without_reduce_vars_runs_init_unconditionally(programs):
    B = tir.decl_buffer((3,), "float32", "B")
    i, vi = Var("i"), Var("v_i")
    realize = programs.block(
        "B",
        [(vi, 3, programs.SP)],
        [i],
        BufferStore(B, B[vi] + 1.0, (vi,)),
        init=BufferStore(B, const(5.0), (vi,)),
    )
    f = lower_blocks(programs.func([B], programs.loops([(i, 3)], realize)))
    assert isinstance(f.body.body, SeqStmt) and isinstance(f.body.body.seq[0], BufferStore)
    assert isinstance(f, PrimFunc)


def test_strided_alloc_buffer_allocates_its_span(programs):
    A = tir.decl_buffer((2, 3), "float32", "A")
    tmp = tir.decl_buffer((2, 3), "float32", "tmp", strides=(const(4), const(1)))
    i, j, vi, vj = Var("i"), Var("j"), Var("v_i"), Var("v_j")
    sp = programs.SP
    s1 = programs.block("T", [(vi, 2, sp), (vj, 3, sp)], [i, j], BufferStore(tmp, A[vi, vj] + 1.0, (vi, vj)))
    i2, j2, wi, wj = Var("i"), Var("j"), Var("w_i"), Var("w_j")
    s2 = programs.block(
        "A", [(wi, 2, sp), (wj, 3, sp)], [i2, j2], BufferStore(A, tmp[wi, wj] * 2.0, (wi, wj))
    )
    body = SeqStmt((programs.loops([(i, 2), (j, 3)], s1), programs.loops([(i2, 2), (j2, 3)], s2)))
    f = lower_blocks(programs.func([A], body, alloc=[tmp]))
    assert isinstance(f.body, Allocate) and int(f.body.extents[0]) == 7
    x = np.arange(6, dtype="float32").reshape(2, 3)
    expected = (x + 1) * 2
    from graphc.tir.transform import lower_primfunc

    run_primfunc(lower_primfunc(f), x)
    np.testing.assert_array_equal(x, expected)


def test_split_reduction_init_condition_is_per_loop(programs):
    A, B = tir.decl_buffer((4, 8), "float32", "A"), tir.decl_buffer((4,), "float32", "B")
    i, k0, k1, vi, vk = Var("i"), Var("k_0"), Var("k_1"), Var("v_i"), Var("v_k")
    update = BufferStore(B, B[vi] + A[vi, vk], (vi,))
    blk = programs.block(
        "B",
        [(vi, 4, programs.SP), (vk, 8, programs.RD)],
        [i, k0 * 4 + k1],
        update,
        BufferStore(B, const(0.0), (vi,)),
    )
    f = programs.func([A, B], programs.loops([(i, 4), (k0, 2), (k1, 4)], blk))
    lowered = lower_blocks(f)
    guard = lowered.body.body.body.body.seq[0]
    assert structural_equal(guard.condition, tir.all(tir.convert(k0 == 0), tir.convert(k1 == 0)))
    x, out = np.random.default_rng(0).random((4, 8), dtype="float32"), np.full(4, 9.0, dtype="float32")
    run_primfunc(lowered, x, out)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-6)
