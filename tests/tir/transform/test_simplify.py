"""Simplify: folded expressions, extent-1 loops removed, constant branches taken."""

import numpy as np

from graphc import IRModule, tir
from graphc.ir import structural_equal
from graphc.tir import BufferStore, Evaluate, For, ForKind, IfThenElse, SeqStmt, Var, const
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import Simplify, flatten_buffer, lower_blocks, simplify_primfunc

A = tir.decl_buffer((8,), "float32", "A")


def _func(body, *buffers):
    params = [Var(b.name, "handle") for b in buffers]
    return tir.PrimFunc(params, body, buffer_map=dict(zip(params, buffers)))


def _loop(var, extent, body, kind=ForKind.SERIAL, low=0):
    return For(var, const(low), const(extent), kind, body)


def test_extent_one_loop_is_replaced_by_its_body():
    i, j = Var("i"), Var("j")
    body = _loop(i, 1, _loop(j, 4, BufferStore(A, const(1.0), (i * 4 + j,))), low=1)
    out = simplify_primfunc(_func(body, A)).body
    assert isinstance(out, For) and out.loop_var is j
    index = out.body.indices[0]
    x = np.zeros(8, dtype="float32")
    run_primfunc(_func(out, A), x)
    assert x.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert not any(v is i for v in [index, getattr(index, "a", None), getattr(index, "b", None)])


def test_constant_conditions_keep_the_taken_branch():
    i = Var("i")
    store = BufferStore(A, const(1.0), (i,))
    other = BufferStore(A, const(2.0), (i,))
    body = _loop(i, 8, SeqStmt((IfThenElse(const(True), store), IfThenElse(const(1) > 2, store, other))))
    out = simplify_primfunc(_func(body, A)).body
    assert isinstance(out.body, SeqStmt) and out.body.seq == (store, other)


def test_constant_arithmetic_folds():
    i = Var("i")
    index = tir.Add(tir.Mul(const(2), const(3), "int32"), i, "int32")  # built unfolded
    out = simplify_primfunc(_func(BufferStore(A, const(0.0), (index,)), A)).body
    assert any(structural_equal(out.indices[0], e, map_free_vars=False) for e in (i + 6, 6 + i))


def test_loop_condition_known_from_the_loop_range_or_kept():
    i = Var("i")
    body = _loop(i, 4, IfThenElse(tir.convert(i < 100), BufferStore(A, const(1.0), (i,))))
    out = simplify_primfunc(_func(body, A)).body
    x = np.zeros(8, dtype="float32")
    run_primfunc(_func(out, A), x)
    assert x.tolist() == [1, 1, 1, 1, 0, 0, 0, 0]


def test_empty_loops_and_no_ops_disappear():
    i, j = Var("i"), Var("j")
    body = SeqStmt((_loop(i, 0, BufferStore(A, const(1.0), (i,))), _loop(j, 4, Evaluate(0))))
    out = simplify_primfunc(_func(body, A)).body
    assert isinstance(out, Evaluate) and out.value.value == 0


def test_thread_binding_loop_of_extent_one_is_kept():
    t = Var("threadIdx.x")
    loop = For(
        t,
        const(0),
        const(1),
        ForKind.THREAD_BINDING,
        BufferStore(A, const(1.0), (t,)),
        tir.IterVar(None, t, tir.IterType.THREAD_INDEX, "threadIdx.x"),
    )
    assert isinstance(simplify_primfunc(_func(loop, A)).body, For)


def test_simplify_pass_keeps_numerics(programs):
    for make in (programs.matmul, programs.guarded, programs.two_stage):
        f = flatten_buffer(lower_blocks(make()))
        g = Simplify()(IRModule({"main": f}))["main"]
        ins = programs.random_inputs(f, seed=3)
        a, b = [x.copy() for x in ins], [x.copy() for x in ins]
        run_primfunc(f, *a)
        run_primfunc(g, *b)
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6)


def test_simplify_is_idempotent(programs):
    f = simplify_primfunc(flatten_buffer(lower_blocks(programs.matmul())))
    assert structural_equal(simplify_primfunc(f), f)
