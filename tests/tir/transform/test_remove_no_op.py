"""RemoveNoOp: statements without effect are dropped."""

from graphc import IRModule, tir
from graphc.tir import Allocate, BufferStore, Evaluate, For, ForKind, IfThenElse, SeqStmt, Var, const
from graphc.tir.transform import RemoveNoOp, remove_no_op

A = tir.decl_buffer((8,), "float32", "A")


def _func(body):
    a = Var("a", "handle")
    return tir.PrimFunc([a], body, buffer_map={a: A})


def test_drops_empty_loops_ifs_and_allocations():
    i, j = Var("i"), Var("j")
    buf = Var("tmp", "handle")
    store = BufferStore(A, const(1.0), (i,))
    body = For(
        i,
        const(0),
        const(8),
        ForKind.SERIAL,
        SeqStmt(
            (
                Evaluate(0),
                For(j, const(0), const(4), ForKind.SERIAL, Evaluate(0)),
                IfThenElse(tir.convert(i < 4), Evaluate(0)),
                Allocate(buf, "float32", (const(4),), const(True), Evaluate(0)),
                store,
            )
        ),
    )
    out = remove_no_op(_func(body)).body
    assert isinstance(out, For) and out.body is store


def test_self_assignment_and_zero_extent_loop_are_removed():
    i = Var("i")
    body = SeqStmt(
        (
            BufferStore(A, A[i], (i,)),
            For(i, const(0), const(0), ForKind.SERIAL, BufferStore(A, const(1.0), (i,))),
        )
    )
    assert isinstance(remove_no_op(_func(body)).body, Evaluate)


def test_empty_then_branch_inverts_the_condition():
    i = Var("i")
    store = BufferStore(A, const(2.0), (i,))
    out = remove_no_op(_func(IfThenElse(tir.convert(i < 4), Evaluate(0), store))).body
    assert isinstance(out, IfThenElse) and out.then_case is store and out.else_case is None
    assert isinstance(out.condition, tir.Not)


def test_calls_with_side_effects_stay():
    call = Evaluate(tir.call_extern("int32", "puts", tir.StringImm("hi")))
    assert remove_no_op(_func(call)).body is call
    sync = Evaluate(tir.Call("int32", "tir.tvm_storage_sync", (tir.StringImm("shared"),)))
    assert remove_no_op(_func(sync)).body is sync


def test_unchanged_function_is_returned_as_is():
    i = Var("i")
    f = _func(For(i, const(0), const(8), ForKind.SERIAL, BufferStore(A, const(1.0), (i,))))
    mod = IRModule({"main": f})
    assert RemoveNoOp()(mod)["main"] is f
