"""Reducers: te.sum/max/min/prod, comm_reducer (multi-value), argmax/argmin."""

import pytest

from graphc import te, tir
from graphc.errors import TIRError
from graphc.ir import assert_structural_equal
from graphc.tir import (
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    For,
    ForKind,
    IterType,
    IterVar,
    LetStmt,
    PrimFunc,
    Range,
    SeqStmt,
    Var,
    const,
    decl_buffer,
)  # fmt: skip


def test_reduce_node_fields():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    r = te.sum(A[0, k], axis=k)
    assert isinstance(r, te.Reduce) and r.value_index == 0 and r.axis == (k,)
    assert r.condition.value == 1 and r.init == ()
    assert r.combiner.identity_element[0].value == 0.0
    assert isinstance(r.combiner.result[0], tir.Add)


def test_multiple_axes():
    A = te.placeholder((4, 8, 3), name="A")
    k1, k2 = te.reduce_axis((0, 8), "k1"), te.reduce_axis((0, 3), "k2")
    B = te.compute((4,), lambda i: te.sum(A[i, k1, k2], axis=[k1, k2]), name="B")
    assert [iv.var.name for iv in B.op.reduce_axis] == ["k1", "k2"]
    block = te.create_prim_func([A, B]).body.block.body.body.body.body.block
    assert [iv.iter_type for iv in block.iter_vars] == [
        IterType.DATA_PAR,
        IterType.COMM_REDUCE,
        IterType.COMM_REDUCE,
    ]


def test_identities():
    A = te.placeholder((4, 8), dtype="int32", name="A")
    k = te.reduce_axis((0, 8), "k")
    assert te.prod(A[0, k], axis=k).combiner.identity_element[0].value == 1
    assert te.min(A[0, k], axis=k).combiner.identity_element[0].value == 2**31 - 1
    assert te.max(A[0, k], axis=k).combiner.identity_element[0].value == -(2**31)


def test_reducer_on_values_folds_combiner():
    x, y, z = tir.Var("x"), tir.Var("y"), tir.Var("z")
    assert isinstance(te.max(x, y), tir.Max)
    assert isinstance(te.min(x, y, z), tir.Min)
    assert te.sum(tir.const(2), tir.const(3)).value == 5


def test_reducer_needs_axis_or_values():
    with pytest.raises(TIRError, match="axis"):
        te.sum(tir.Var("x"))
    with pytest.raises(TIRError, match="not a reduce_axis"):
        A = te.placeholder((4,), name="A")
        B = te.compute((4,), lambda i: A[i], name="B")
        te.sum(A[0], axis=B.op.axis[0])


def test_reduce_axis_errors():
    with pytest.raises(TIRError, match="begin, end"):
        te.reduce_axis(5, "k")


def _pair_reducer():
    def fcombine(x, y):
        return x[0] + y[0], tir.max(x[1], y[1])

    return te.comm_reducer(fcombine, lambda t0, t1: (tir.const(0, t0), te.min_value(t1)), name="summax")


def test_multi_value_comm_reducer():
    summax = _pair_reducer()
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    S, M = te.compute((4,), lambda i: summax((A[i, k], A[i, k] * 2.0), axis=k), name="R")
    assert S.op is M.op and S.name == "R_v0" and M.name == "R_v1"
    block = te.create_prim_func([A, S, M]).body.block.body.body.body.block
    assert isinstance(block.body, LetStmt) and isinstance(block.body.body, LetStmt)
    assert isinstance(block.init, SeqStmt) and len(block.init.seq) == 2


def test_comm_reducer_arity_checked():
    bad = te.comm_reducer(lambda x, y: x[0] + y[0], lambda t0, t1: (0, 0), name="bad")
    k = te.reduce_axis((0, 4), "k")
    with pytest.raises(TIRError, match="2 values"):
        bad((k.var, k.var), axis=k)


def _argmax_expected():
    X = decl_buffer((4, 8), "float32", "X")
    Ib = decl_buffer((4,), "int32", "I")
    V = decl_buffer((4,), "float32", "I_v1")
    i, k, vi, vk = Var("i"), Var("k"), Var("v_i"), Var("v_k")
    t0, t1 = Var("v_I", "int32"), Var("v_I_v1", "float32")
    keep = V[vi] >= X[vi, vk]
    body = LetStmt(
        t0,
        tir.select(keep, Ib[vi], vk),
        LetStmt(
            t1,
            tir.select(keep, V[vi], X[vi, vk]),
            SeqStmt((BufferStore(Ib, t0, (vi,)), BufferStore(V, t1, (vi,)))),
        ),
    )
    init = SeqStmt((BufferStore(Ib, const(-1), (vi,)), BufferStore(V, tir.min_value("float32"), (vi,))))
    ivs = (
        IterVar(Range(const(0), const(4)), vi),
        IterVar(Range(const(0), const(8)), vk, IterType.COMM_REDUCE),
    )
    reads = (BufferRegion.from_point(X, [vi, vk]),)
    writes = (BufferRegion.from_point(Ib, [vi]), BufferRegion.from_point(V, [vi]))
    block = Block(ivs, reads, writes, "I", body, init)
    loops = For(
        i,
        const(0),
        const(4),
        ForKind.SERIAL,
        For(k, const(0), const(8), ForKind.SERIAL, BlockRealize((i, k), const(True), block)),
    )
    root = Block((), (), (), "root", loops, None, (V,))
    hx, hi = Var("var_X", "handle"), Var("var_I", "handle")
    return PrimFunc(
        [hx, hi],
        BlockRealize((), const(True), root),
        None,
        {hx: X, hi: Ib},
        {"global_symbol": "main", "tir.noalias": True},
    )


def test_argmax_structure():
    X = te.placeholder((4, 8), name="X")
    k = te.reduce_axis((0, 8), "k")
    Idx = te.compute((4,), lambda i: te.argmax(X[i, k], axis=k), name="I")
    assert Idx.dtype == "int32" and Idx.name == "I" and Idx.op.num_outputs == 2
    assert_structural_equal(te.create_prim_func([X, Idx]), _argmax_expected())


def test_argmin_uses_max_value_identity():
    X = te.placeholder((4, 8), name="X")
    k = te.reduce_axis((0, 8), "k")
    Idx = te.compute((4,), lambda i: te.argmin(X[i, k], axis=k), name="I")
    block = te.create_prim_func([X, Idx]).body.block.body.body.body.block
    assert block.init.seq[1].value.value == tir.max_value("float32").value
    assert isinstance(block.body.value, tir.Select) and isinstance(block.body.value.condition, tir.LE)


def test_argmax_needs_one_axis():
    X = te.placeholder((4, 8), name="X")
    k1, k2 = te.reduce_axis((0, 4), "k1"), te.reduce_axis((0, 8), "k2")
    with pytest.raises(TIRError, match="exactly one"):
        te.argmax(X[k1, k2], axis=[k1, k2])
