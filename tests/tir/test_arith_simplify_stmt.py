"""Tests of simplify_stmt: loop, let, branch and block contexts feed the simplifier."""

from graphc import tir
from graphc.tir import (
    Block,
    BlockRealize,
    BufferRegion,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IterType,
    IterVar,
    LetStmt,
    PrimFunc,
    Range,
    SeqStmt,
    Var,
    const,
)  # fmt: skip
from graphc.tir.arith import Analyzer, simplify_stmt
from graphc.tir.arith.keys import expr_text


def loop(var, extent, body):
    return For(var, const(0), const(extent) if isinstance(extent, int) else extent, ForKind.SERIAL, body)


A = tir.decl_buffer((64,), "float32", "A")
B = tir.decl_buffer((64,), "float32", "B")


def test_loop_bounds_simplify_indices():
    i, j = Var("i"), Var("j")
    body = loop(i, 16, loop(j, 4, A.vstore([(i * 4 + j) // 4 * 4 + (i * 4 + j) % 4], 1.0)))
    out = simplify_stmt(body)
    assert expr_text(out.body.body.indices[0]) == "i * 4 + j"


def test_unchanged_statement_keeps_identity():
    i = Var("i")
    body = loop(i, 16, A.vstore([i], B[i]))
    assert simplify_stmt(body) is body


def test_if_decided_by_loop_range_is_dropped():
    i = Var("i")
    then = A.vstore([i], 1.0)
    other = A.vstore([i], 2.0)
    out = simplify_stmt(loop(i, 16, IfThenElse(i < 16, then, other)))
    assert out.body is then
    out = simplify_stmt(loop(i, 16, IfThenElse(i >= 16, then, other)))
    assert out.body is other
    out = simplify_stmt(loop(i, 16, IfThenElse(i >= 16, then)))
    assert isinstance(out.body, Evaluate)


def test_if_branches_see_their_condition():
    i = Var("i")
    inner_then = IfThenElse(i < 8, A.vstore([i], 1.0))
    inner_else = IfThenElse(i < 8, A.vstore([i], 2.0), A.vstore([i], 3.0))
    out = simplify_stmt(loop(i, 16, IfThenElse(i < 4, inner_then, inner_else)))
    assert expr_text(out.body.condition) == "i < 4"
    assert out.body.then_case is inner_then.then_case
    assert isinstance(out.body.else_case, IfThenElse)  # 4 <= i < 16 does not decide i < 8
    out = simplify_stmt(loop(i, 16, IfThenElse(i < 8, IfThenElse(i < 10, A.vstore([i], 1.0)))))
    assert out.body.then_case.__class__.__name__ == "BufferStore"


def test_else_branch_sees_negated_condition():
    i = Var("i")
    other = IfThenElse(i >= 4, A.vstore([i], 2.0))
    out = simplify_stmt(loop(i, 16, IfThenElse(i < 4, A.vstore([i], 1.0), other)))
    assert out.body.else_case is other.then_case


def test_let_binding_is_used():
    i, t = Var("i"), Var("t")
    body = loop(i, 16, LetStmt(t, i % 16, A.vstore([t // 16], 1.0)))
    out = simplify_stmt(body)
    assert expr_text(out.body.value) == "i"
    assert expr_text(out.body.body.indices[0]) == "0"


def test_block_iter_values_predicate_and_regions():
    i0, i1, vi = Var("i0"), Var("i1"), Var("vi")
    blk = Block(
        (IterVar(Range(const(0), const(64)), vi, IterType.DATA_PAR),),
        (BufferRegion(A, (Range(vi // 64 * 64 + vi % 64, const(1)),)),),
        (BufferRegion.from_point(B, [vi]),),
        "B",
        B.vstore([vi], A[vi // 64 * 64 + vi % 64]),
    )
    realize = BlockRealize((i0 * 16 + i1 + 0 * i0,), i0 * 16 + i1 < 64, blk)
    out = simplify_stmt(loop(i0, 4, loop(i1, 16, realize)))
    new = out.body.body
    assert expr_text(new.iter_values[0]) == "i0 * 16 + i1"
    assert isinstance(new.predicate, tir.IntImm) and new.predicate.value == 1
    assert expr_text(new.block.reads[0].region[0].min) == "vi"
    assert expr_text(new.block.body.value.indices[0]) == "vi"


def test_symbolic_fuse_in_primfunc():
    n = tir.SizeVar("n")
    C = tir.decl_buffer((n, 8), "float32", "C")
    f = Var("f")
    body = loop(f, n * 8, C.vstore([f // 8, f % 8], 0.0))
    h = Var("C_handle", "handle")
    func = PrimFunc([h], body, buffer_map={h: C})
    out = simplify_stmt(func)
    assert isinstance(out, PrimFunc)
    assert out is func  # nothing to simplify; identity kept


def test_shared_analyzer_facts_are_restored():
    ana = Analyzer()
    i = Var("i")
    simplify_stmt(loop(i, 16, A.vstore([i], 1.0)), ana)
    assert ana.const_int_bound(i).max_value == 2**31 - 1


def test_seq_and_attr_statements():
    tx = Var("tx")
    attr = tir.AttrStmt(IterVar(None, tx, IterType.THREAD_INDEX, "threadIdx.x"), "thread_extent", const(32),
                        SeqStmt((A.vstore([tx % 32], 1.0), A.vstore([tx // 32], 2.0))))  # fmt: skip
    out = simplify_stmt(attr)
    assert out.body.seq[0].indices[0] is tx
    assert expr_text(out.body.seq[1].indices[0]) == "0"
