"""UnrollLoop: small unroll loops are expanded, large ones stay as hints."""

import numpy as np
import pytest

from graphc import IRModule, tir
from graphc.errors import GraphcError
from graphc.ir.transform import PassContext
from graphc.tir import BufferStore, For, ForKind, SeqStmt, Var, const
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import UnrollLoop, unroll_stmt

A = tir.decl_buffer((64,), "float32", "A")


def _mod(body):
    a = Var("a", "handle")
    return IRModule({"main": tir.PrimFunc([a], body, buffer_map={a: A})})


def _loop(extent, kind, low=0):
    i = Var("i")
    return For(i, const(low), const(extent), kind, BufferStore(A, A[i] + 1.0, (i,)))


def test_small_unroll_loop_is_expanded():
    out = UnrollLoop()(_mod(_loop(4, ForKind.UNROLLED, low=2)))["main"]
    assert isinstance(out.body, SeqStmt)
    assert [s.indices[0].value for s in out.body.seq] == [2, 3, 4, 5]
    x = np.zeros(64, dtype="float32")
    run_primfunc(out, x)
    assert x[:8].tolist() == [0, 0, 1, 1, 1, 1, 0, 0]


def test_each_copy_defines_its_own_inner_loop_variables():
    j = Var("j")
    inner = For(j, const(0), const(4), ForKind.SERIAL, BufferStore(A, A[j] + 1.0, (j,)))
    i = Var("i")
    out = UnrollLoop()(_mod(For(i, const(0), const(3), ForKind.UNROLLED, inner)))["main"]
    loops = out.body.seq
    assert len({id(loop.loop_var) for loop in loops}) == 3  # a variable is defined once
    assert all(loop.body.indices[0] is loop.loop_var for loop in loops)
    x = np.zeros(64, dtype="float32")
    run_primfunc(out, x)
    assert x[:6].tolist() == [3, 3, 3, 3, 0, 0]


def test_large_unroll_loop_stays_as_a_hint():
    loop = _loop(64, ForKind.UNROLLED)
    assert UnrollLoop()(_mod(loop))["main"].body is loop
    assert isinstance(UnrollLoop(max_extent=64)(_mod(loop))["main"].body, SeqStmt)


def test_serial_loops_unroll_only_with_auto_max_step():
    loop = _loop(4, ForKind.SERIAL)
    assert UnrollLoop()(_mod(loop))["main"].body is loop
    with PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16}}):
        assert isinstance(UnrollLoop()(_mod(loop))["main"].body, SeqStmt)


def test_explicit_unroll_off_and_symbolic_extent():
    loop = _loop(4, ForKind.UNROLLED)
    assert unroll_stmt(loop, explicit_unroll=False) is loop
    n, i = Var("n"), Var("i")
    sym = For(i, const(0), n, ForKind.UNROLLED, BufferStore(A, const(0.0), (i,)))
    assert unroll_stmt(sym) is sym


def test_unknown_option_is_rejected():
    with pytest.raises(GraphcError, match="unknown max_steps"):
        UnrollLoop(max_steps=3)


def test_pragma_annotations_drive_unrolling_through_the_pipeline(programs):
    from graphc.tir.transform import lower_primfunc

    f = programs.vector_add(n=4)
    root = f.body.block
    loop = root.body
    annotated = loop.replace(annotations={"pragma_auto_unroll_max_step": 8, "keep": 1})
    g = f.with_body(f.body.replace(block=root.replace(body=annotated)))
    lowered = lower_primfunc(g)
    assert isinstance(lowered.body, SeqStmt) and len(lowered.body.seq) == 4
    x, y = np.arange(4, dtype="float32"), np.ones(4, dtype="float32")
    z = np.zeros(4, dtype="float32")
    run_primfunc(lowered, x, y, z)
    assert z.tolist() == [1, 2, 3, 4]


def test_block_pragma_becomes_attr_and_explicit_off_marks_loops(programs):
    from graphc.tir.transform import lower_blocks

    f = programs.vector_add(n=4)
    root = f.body.block.replace(annotations={"pragma_auto_unroll_max_step": 8, "pragma_unroll_explicit": 0})
    lowered = lower_blocks(f.with_body(f.body.replace(block=root)))
    assert isinstance(lowered.body, tir.AttrStmt) and lowered.body.attr_key == "pragma_auto_unroll_max_step"
    out = UnrollLoop()(_mod(lowered.body))["main"].body
    assert isinstance(out, For) and out.kind == ForKind.UNROLLED
