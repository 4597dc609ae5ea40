"""Tests of verify_well_formed: valid programs pass, each violation is reported clearly."""

import pytest

from graphc import tir
from graphc.errors import VerifyError
from graphc.ir.module import IRModule
from graphc.tir import (
    Allocate,
    Block,
    BlockRealize,
    BufferRegion,
    DeclBuffer,
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
)  # fmt: skip
from graphc.tir.analysis import verify_well_formed


def loop(var, extent, body, kind=ForKind.SERIAL, thread=None):
    return For(var, const(0), const(extent) if isinstance(extent, int) else extent, kind, body, thread)


def root(body, alloc=()):
    return BlockRealize((), const(True), Block((), (), (), "root", body, alloc_buffers=tuple(alloc)))


def func(params_buffers, body, scalars=()):
    params, bmap = [], {}
    for buf in params_buffers:
        h = Var(buf.name + "_handle", "handle")
        params.append(h)
        bmap[h] = buf
    return PrimFunc(params + list(scalars), body, buffer_map=bmap, attrs={"global_symbol": "main"})


def block_copy(A, B, n=16, name="B"):
    """for i: with block: vi = i; B[vi] = A[vi] * 2"""
    i, vi = Var("i"), Var("vi")
    blk = Block(
        (IterVar(Range(const(0), const(n)), vi, IterType.DATA_PAR),),
        (BufferRegion.from_point(A, [vi]),), (BufferRegion.from_point(B, [vi]),),
        name, B.vstore([vi], A[vi] * 2.0),
    )  # fmt: skip
    return i, vi, blk, loop(i, n, BlockRealize((i,), const(True), blk))


def buffers(n=16):
    return tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")


# --- valid programs ----------------------------------------------------------------------


def test_valid_block_program():
    A, B = buffers()
    _, _, _, body = block_copy(A, B)
    f = func([A, B], root(body))
    assert verify_well_formed(f)
    assert verify_well_formed(IRModule({"main": f}))


def test_valid_symbolic_shape_and_scalar_param():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "float32", "A")
    alpha = Var("alpha", "float32")
    i = Var("i")
    f = func([A], loop(i, n, A.vstore([i], A[i] * alpha)), scalars=[alpha])
    assert verify_well_formed(f)


def test_valid_intermediate_buffer_and_reduction():
    A, B = buffers()
    C = tir.decl_buffer((16,), "float32", "C")
    i, k, vi, vk = Var("i"), Var("k"), Var("vi"), Var("vk")
    red = Block(
        (IterVar(Range(const(0), const(16)), vi),
         IterVar(Range(const(0), const(4)), vk, IterType.COMM_REDUCE)),
        (), (), "C", C.vstore([vi], C[vi] + A[vi]), init=C.vstore([vi], 0.0),
    )  # fmt: skip
    body = SeqStmt((loop(i, 16, loop(k, 4, BlockRealize((i, k), const(True), red))), block_copy(C, B)[3]))
    assert verify_well_formed(func([A, B], root(body, alloc=[C])))


def test_valid_lowered_program_with_allocate_and_flat_views():
    A, B = buffers()
    i, j, t = Var("i"), Var("j"), Var("t")
    tmp_data = Var("tmp", "handle", "float32")
    tmp = tir.decl_buffer((16,), "float32", "tmp", data=tmp_data)
    flat_a = tir.decl_buffer((16,), "float32", "A_flat", data=A.data)
    body = Allocate(tmp_data, "float32", (const(16),), const(True), SeqStmt((
        loop(i, 16, LetStmt(t, i * 1, tmp.vstore([t], flat_a[i]))),
        loop(j, 16, DeclBuffer(flat_a, B.vstore([j], tmp[j]))),
    )))  # fmt: skip
    assert verify_well_formed(func([A, B], body))


def test_valid_thread_bindings():
    A, B = buffers(64)
    bx, tx = Var("blockIdx.x"), Var("threadIdx.x")
    store = B.vstore([bx * 32 + tx], A[bx * 32 + tx])
    tag = IterVar(None, tx, IterType.THREAD_INDEX, "threadIdx.x")
    inner = loop(tx, 32, store, ForKind.THREAD_BINDING, tag)
    outer = loop(bx, 2, inner, ForKind.THREAD_BINDING, IterVar(None, bx, IterType.THREAD_INDEX, "blockIdx.x"))
    assert verify_well_formed(func([A, B], outer))
    t = Var("tx")
    attr = tir.AttrStmt(IterVar(None, t, IterType.THREAD_INDEX, "threadIdx.x"), "thread_extent", const(16),
                        B.vstore([t], A[t]))  # fmt: skip
    assert verify_well_formed(func([A, B], attr))


def test_sibling_loops_may_reuse_a_var():
    A, B = buffers()
    i = Var("i")
    body = SeqStmt((loop(i, 16, B.vstore([i], A[i])), loop(i, 16, A.vstore([i], B[i]))))
    assert verify_well_formed(func([A, B], body))


# --- violations --------------------------------------------------------------------------


def check_fails(f, *fragments):
    assert verify_well_formed(f, assert_mode=False) is False
    with pytest.raises(VerifyError) as info:
        verify_well_formed(f)
    message = str(info.value)
    assert "'main'" in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_undefined_variable():
    A, B = buffers()
    i, j = Var("i"), Var("j")
    check_fails(func([A, B], loop(i, 16, B.vstore([i], A[j]))), "'j'", "not defined")


def test_loop_var_used_after_its_loop():
    A, B = buffers()
    i = Var("i")
    body = SeqStmt((loop(i, 16, B.vstore([i], A[i])), B.vstore([i], 0.0)))
    check_fails(func([A, B], body), "'i'", "not defined")


def test_let_var_out_of_scope():
    A, B = buffers()
    t = Var("t")
    body = SeqStmt((LetStmt(t, const(1), B.vstore([t], 0.0)), A.vstore([t], 0.0)))
    check_fails(func([A, B], body), "'t'")


def test_loop_var_nesting_itself():
    A, B = buffers()
    i = Var("i")
    check_fails(func([A, B], loop(i, 4, loop(i, 4, B.vstore([i], A[i])))), "'i'", "defined twice")


def test_iter_values_count_mismatch():
    A, B = buffers()
    i, _, blk, _ = block_copy(A, B)
    bad = loop(i, 16, BlockRealize((i, i), const(True), blk))
    check_fails(func([A, B], root(bad)), "block 'B'", "1 iter vars", "2 iter_values")


def test_block_uses_outer_loop_var_directly():
    A, B = buffers()
    i, vi = Var("i"), Var("vi")
    blk = Block((IterVar(Range(const(0), const(16)), vi),), (), (), "B", B.vstore([vi], A[i]))
    body = loop(i, 16, BlockRealize((i,), const(True), blk))
    check_fails(func([A, B], root(body)), "block 'B'", "loop variable 'i'")


def test_root_block_may_use_loop_vars():
    A, B = buffers()
    i = Var("i")
    assert verify_well_formed(func([A, B], root(loop(i, 16, B.vstore([i], A[i])))))


def test_iter_value_with_undefined_var():
    A, B = buffers()
    _, _, blk, _ = block_copy(A, B)
    ghost = Var("ghost")
    check_fails(func([A, B], root(BlockRealize((ghost,), const(True), blk))), "iter_value", "'ghost'")


def test_block_iter_var_used_outside_block():
    A, B = buffers()
    i, vi, _, body = block_copy(A, B)
    after = B.vstore([vi], 0.0)
    check_fails(func([A, B], root(SeqStmt((body, after)))), "'vi'")


def test_alloc_buffer_used_outside_its_block():
    A, B = buffers()
    C = tir.decl_buffer((16,), "float32", "C")
    i, vi = Var("i"), Var("vi")
    inner = Block((IterVar(Range(const(0), const(16)), vi),), (), (), "P", C.vstore([vi], A[vi]),
                  alloc_buffers=(C,))  # fmt: skip
    j = Var("j")
    body = SeqStmt((loop(i, 16, BlockRealize((i,), const(True), inner)), loop(j, 16, B.vstore([j], C[j]))))
    check_fails(func([A, B], root(body)), "'C'", "block 'P'")


def test_unknown_buffer():
    A, B = buffers()
    D = tir.decl_buffer((16,), "float32", "D")
    i = Var("i")
    check_fails(func([A, B], loop(i, 16, B.vstore([i], D[i]))), "'D'", "neither a parameter")


def test_allocate_storage_out_of_scope():
    A, B = buffers()
    data = Var("tmp", "handle", "float32")
    tmp = tir.decl_buffer((16,), "float32", "tmp", data=data)
    i = Var("i")
    body = SeqStmt((Allocate(data, "float32", (const(16),), const(True), tmp.vstore([0], 1.0)),
                    loop(i, 16, B.vstore([i], tmp[i]))))  # fmt: skip
    check_fails(func([A, B], body), "'tmp'")


def test_wrong_argument_type():
    with pytest.raises(VerifyError, match="PrimFunc or an IRModule"):
        verify_well_formed(42)


def test_message_shows_program_window_when_printer_works():
    A, B = buffers()
    i, j = Var("i"), Var("j")
    message = check_fails(func([A, B], loop(i, 16, B.vstore([i], A[j]))), "'j'")
    if "def main" in message:  # the printer is available: the offending line is marked
        marked = [line for line in message.splitlines() if line.startswith("-->")]
        assert len(marked) == 1 and "j" in marked[0]
    else:
        assert message.count("\n") == 0


def test_buffer_data_vars_are_defined_where_their_buffer_is():
    A, B = buffers()
    i = Var("i")
    ptr = tir.call_intrin("handle", "tir.address_of", A.data)
    body = loop(i, 16, SeqStmt((tir.Evaluate(ptr), B.vstore([i], A[i]))))
    assert verify_well_formed(func([A, B], body))
    C = tir.decl_buffer((16,), "float32", "C")
    inner = Block((), (), (), "P", tir.Evaluate(tir.call_intrin("handle", "tir.address_of", C.data)),
                  alloc_buffers=(C,))  # fmt: skip
    assert verify_well_formed(func([A, B], root(BlockRealize((), const(True), inner))))
    after = tir.Evaluate(tir.call_intrin("handle", "tir.address_of", C.data))
    check_fails(func([A, B], root(SeqStmt((BlockRealize((), const(True), inner), after)))), "'C'")


def test_opaque_block_may_use_loop_vars():
    A, B = buffers()
    i = Var("i")
    opaque = Block((), (), (), "", B.vstore([i], A[i]))
    assert verify_well_formed(func([A, B], root(loop(i, 16, BlockRealize((), const(True), opaque)))))


def test_non_expression_operand():
    A, B = buffers()
    store = tir.BufferStore(B, const(1.0), (const(0),))
    # Constructors convert Python ints; a pass that smuggles one in by replace() is still caught.
    object.__setattr__(store, "indices", (0,))
    check_fails(func([A, B], store), "expected a PrimExpr", "int 0")
