"""PlanAndUpdateBufferAllocationLocation: alloc_buffers move to the innermost covering scope."""

import numpy as np

from graphc import tir
from graphc.tir import Allocate, BufferStore, For, ForKind, IterType, IterVar, SeqStmt, Var, const
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import lower_primfunc, plan_buffer_allocation


def _producer_consumer(programs, kind=ForKind.PARALLEL, scope="global", thread=None):
    """for i: (for j: B[i, j] = A[i, j] * 2); (for j: C[i, j] = B[i, j] + 1), B in the root."""
    A, C = tir.decl_buffer((8, 4), "float32", "A"), tir.decl_buffer((8, 4), "float32", "C")
    B = tir.decl_buffer((8, 4), "float32", "B", scope=scope)
    i, j, j2 = Var("i"), Var("j"), Var("j")
    vi, vj, wi, wj = Var("v_i"), Var("v_j"), Var("w_i"), Var("w_j")
    sp = programs.SP
    s1 = programs.block("B", [(vi, 8, sp), (vj, 4, sp)], [i, j], BufferStore(B, A[vi, vj] * 2.0, (vi, vj)))
    s2 = programs.block("C", [(wi, 8, sp), (wj, 4, sp)], [i, j2], BufferStore(C, B[wi, wj] + 1.0, (wi, wj)))
    body = SeqStmt((programs.loops([(j, 4)], s1), programs.loops([(j2, 4)], s2)))
    binding = IterVar(None, i, IterType.THREAD_INDEX, thread) if thread else None
    return programs.func([A, C], For(i, const(0), const(8), kind, body, binding), alloc=[B])


def _check(programs, f, g):
    ins = programs.random_inputs(f, seed=4)
    a, b = [x.copy() for x in ins], [x.copy() for x in ins]
    run_primfunc(f, *a)
    run_primfunc(g, *b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_buffer_used_under_one_loop_moves_into_it(programs):
    f = _producer_consumer(programs)
    g = plan_buffer_allocation(f)
    assert g.body.block.alloc_buffers == ()
    loop = g.body.block.body
    assert isinstance(loop, For) and isinstance(loop.body, tir.BlockRealize)
    assert loop.body.block.alloc_buffers[0].name == "B" and loop.body.block.iter_vars == ()
    lowered = lower_primfunc(f)
    assert isinstance(lowered.body, For) and lowered.body.kind == ForKind.PARALLEL
    alloc = lowered.body.body
    assert isinstance(alloc, Allocate) and [int(e) for e in alloc.extents] == [4]  # compacted to one row
    _check(programs, f, lowered)


def test_pass_is_idempotent_and_no_op_without_moves(programs):
    g = plan_buffer_allocation(_producer_consumer(programs))
    assert plan_buffer_allocation(g) is g
    f = programs.two_stage()  # producer and consumer in separate loop nests: stays in the root
    assert plan_buffer_allocation(f) is f


def _accumulate(programs, reduce_outer):
    """acc[i] = sum_k A[i, k]; B[i] = acc[i], with the reduce loop inside or outside i."""
    A, B = tir.decl_buffer((4, 6), "float32", "A"), tir.decl_buffer((4,), "float32", "B")
    acc = tir.decl_buffer((4,), "float32", "acc")
    i, k, i2 = Var("i"), Var("k"), Var("i")
    vi, vk, wi = Var("v_i"), Var("v_k"), Var("w_i")
    red = programs.block(
        "acc",
        [(vi, 4, programs.SP), (vk, 6, programs.RD)],
        [i, k],
        BufferStore(acc, acc[vi] + A[vi, vk], (vi,)),
        BufferStore(acc, const(0.0), (vi,)),
    )
    copy = programs.block(
        "B", [(wi, 4, programs.SP)], [i if not reduce_outer else i2], BufferStore(B, acc[wi], (wi,))
    )
    if reduce_outer:
        body = SeqStmt((programs.loops([(k, 6), (i, 4)], red), programs.loops([(i2, 4)], copy)))
    else:
        body = programs.loops([(i, 4)], SeqStmt((programs.loops([(k, 6)], red), copy)))
    return programs.func([A, B], body, alloc=[acc])


def test_reduction_output_is_allocated_above_its_reduce_loop(programs):
    f = _accumulate(programs, reduce_outer=False)
    g = plan_buffer_allocation(f)
    loop_i = g.body.block.body
    assert loop_i.body.block.alloc_buffers[0].name == "acc"  # inside i, above k
    lowered = lower_primfunc(f)
    _check(programs, f, lowered)
    A = programs.random_inputs(f, seed=1)[0]
    out = np.zeros(4, dtype="float32")
    run_primfunc(lowered, A, out)
    np.testing.assert_allclose(out, A.sum(axis=1), rtol=1e-5)


def test_reduce_loop_outside_keeps_the_root_allocation(programs):
    f = _accumulate(programs, reduce_outer=True)
    assert plan_buffer_allocation(f) is f
    _check(programs, f, lower_primfunc(f))


def test_global_buffers_stay_outside_thread_loops(programs):
    f = _producer_consumer(programs, ForKind.THREAD_BINDING, "global", "blockIdx.x")
    assert plan_buffer_allocation(f) is f
    g = plan_buffer_allocation(_producer_consumer(programs, ForKind.THREAD_BINDING, "shared", "blockIdx.x"))
    assert g.body.block.alloc_buffers == ()
    h = _producer_consumer(programs, ForKind.THREAD_BINDING, "shared", "threadIdx.x")
    assert plan_buffer_allocation(h) is h
    k = plan_buffer_allocation(_producer_consumer(programs, ForKind.THREAD_BINDING, "local", "threadIdx.x"))
    assert k.body.block.alloc_buffers == ()


def test_vectorized_loops_are_not_entered(programs):
    f = _producer_consumer(programs, ForKind.VECTORIZED)
    assert plan_buffer_allocation(f) is f


def test_direct_use_in_an_opaque_block_pins_the_buffer(programs):
    A = tir.decl_buffer((4,), "float32", "A")
    tmp = tir.decl_buffer((1,), "float32", "tmp")
    i = Var("i")
    opaque = programs.block("acc", [], [], BufferStore(tmp, tmp[0] + A[i], (const(0),)))
    f = programs.func([A], programs.loops([(i, 4)], opaque), alloc=[tmp])
    assert plan_buffer_allocation(f) is f
