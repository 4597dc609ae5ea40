"""create_prim_func: TE graphs to block-form PrimFuncs, compared with IR built by hand."""

import math

import pytest

from graphc import IRModule, te, tir
from graphc.errors import TIRError
from graphc.ir import assert_structural_equal
from graphc.tir import (
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IterType,
    IterVar,
    PrimFunc,
    Range,
    SeqStmt,
    Var,
    const,
    decl_buffer,
)  # fmt: skip

ATTRS = {"global_symbol": "main", "tir.noalias": True}


def _iv(var, extent, kind=IterType.DATA_PAR, start=0):
    extent = tir.convert(extent)
    return IterVar(Range(const(start, extent.dtype), extent), var, kind)


def _point(buf, *idx):
    return BufferRegion.from_point(buf, list(idx))


def _func(buffers, body, allocs=(), scalars=()):
    handles = [Var(f"var_{b.name}", "handle") for b in buffers]
    root = Block((), (), (), "root", body, None, tuple(allocs))
    params = handles + list(scalars)
    return PrimFunc(params, BlockRealize((), const(True), root), None, dict(zip(handles, buffers)), ATTRS)


def _loops(loop_vars, extents, inner):
    for lv, ext in reversed(list(zip(loop_vars, extents))):
        ext = tir.convert(ext)
        inner = For(lv, const(0, ext.dtype), ext, ForKind.SERIAL, inner)
    return inner


def _add_one_expected():
    A, B = decl_buffer((8,), "float32", "A"), decl_buffer((8,), "float32", "B")
    i0, v = Var("i0"), Var("v_i0")
    block = Block((_iv(v, 8),), (_point(A, v),), (_point(B, v),), "B", BufferStore(B, A[v] + 1.0, (v,)))
    return _func([A, B], _loops([i0], [8], BlockRealize((i0,), const(True), block)))


def test_add_one_classic_flow():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])
    assert_structural_equal(func, _add_one_expected())
    mod = IRModule({"main": func})
    assert mod["main"] is func
    assert func.with_attr("global_symbol", "main").attrs["global_symbol"] == "main"


def test_loop_and_block_var_names():
    A = te.placeholder((8, 4), name="A")
    B = te.compute((8, 4), lambda x, y: A[x, y] * 2.0, name="B")
    realize = te.create_prim_func([A, B]).body.block.body.body.body
    assert [iv.var.name for iv in realize.block.iter_vars] == ["v_x", "v_y"]
    assert [v.name for v in realize.iter_values] == ["x", "y"]
    assert realize.block.name_hint == "B"


def _matmul_expected(n):
    A, B, C = (decl_buffer((n, n), "float32", name) for name in "ABC")
    m, nn, k = Var("m"), Var("n"), Var("k")
    vm, vn, vk = Var("v_m"), Var("v_n"), Var("v_k")
    ivs = (_iv(vm, n), _iv(vn, n), _iv(vk, n, IterType.COMM_REDUCE))
    body = BufferStore(C, C[vm, vn] + A[vm, vk] * B[vk, vn], (vm, vn))
    init = BufferStore(C, const(0.0), (vm, vn))
    reads = (_point(A, vm, vk), _point(B, vk, vn))
    block = Block(ivs, reads, (_point(C, vm, vn),), "C", body, init)
    return _func([A, B, C], _loops([m, nn, k], [n, n, n], BlockRealize((m, nn, k), const(True), block)))


def test_matmul_1024():
    A = te.placeholder((1024, 1024), name="A")
    B = te.placeholder((1024, 1024), name="B")
    k = te.reduce_axis((0, 1024), name="k")
    C = te.compute((1024, 1024), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    assert_structural_equal(te.create_prim_func([A, B, C]), _matmul_expected(1024))


def test_symbolic_elementwise():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    func = te.create_prim_func([A, B])
    assert func.buffer_map[func.params[0]].shape == (n, m)
    Ab, Bb = decl_buffer((n, m), "float32", "A"), decl_buffer((n, m), "float32", "B")
    i, j, vi, vj = Var("i"), Var("j"), Var("v_i"), Var("v_j")
    block = Block(
        (_iv(vi, n), _iv(vj, m)),
        (_point(Ab, vi, vj),),
        (_point(Bb, vi, vj),),
        "B",
        BufferStore(Bb, Ab[vi, vj] * 2.0, (vi, vj)),
    )
    expected = _func([Ab, Bb], _loops([i, j], [n, m], BlockRealize((i, j), const(True), block)))
    assert_structural_equal(func, expected)


def test_symbolic_row_sum():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    Ab, Bb = decl_buffer((n, m), "float32", "A"), decl_buffer((n,), "float32", "B")
    i, kk, vi, vk = Var("i"), Var("k"), Var("v_i"), Var("v_k")
    block = Block(
        (_iv(vi, n), _iv(vk, m, IterType.COMM_REDUCE)),
        (_point(Ab, vi, vk),),
        (_point(Bb, vi),),
        "B",
        BufferStore(Bb, Bb[vi] + Ab[vi, vk], (vi,)),
        BufferStore(Bb, const(0.0), (vi,)),
    )
    expected = _func([Ab, Bb], _loops([i, kk], [n, m], BlockRealize((i, kk), const(True), block)))
    assert_structural_equal(func, expected)


def test_sigmoid_over_input_shape():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: te.sigmoid(A[i]), name="B")
    func = te.create_prim_func([A, B])
    Ab, Bb = decl_buffer((n,), "float32", "A"), decl_buffer((n,), "float32", "B")
    i, vi = Var("i"), Var("v_i")
    block = Block(
        (_iv(vi, n),), (_point(Ab, vi),), (_point(Bb, vi),), "B", BufferStore(Bb, tir.sigmoid(Ab[vi]), (vi,))
    )
    assert_structural_equal(func, _func([Ab, Bb], _loops([i], [n], BlockRealize((i,), const(True), block))))


def test_intermediate_becomes_alloc_buffer_and_blocks_are_ordered():
    A = te.placeholder((4,), name="A")
    T = te.compute((4,), lambda i: A[i] + 1.0, name="T")
    B = te.compute((4,), lambda i: T[i] * 2.0, name="B")
    func = te.create_prim_func([A, B])
    root = func.body.block
    assert [b.name for b in root.alloc_buffers] == ["T"]
    names = [s.body.block.name_hint for s in root.body.seq]
    assert names == ["T", "B"]
    Ab, Tb, Bb = (decl_buffer((4,), "float32", n) for n in "ATB")
    i1, i2, v1, v2 = Var("i"), Var("i"), Var("v_i"), Var("v_i")
    blk1 = Block(
        (_iv(v1, 4),), (_point(Ab, v1),), (_point(Tb, v1),), "T", BufferStore(Tb, Ab[v1] + 1.0, (v1,))
    )
    blk2 = Block(
        (_iv(v2, 4),), (_point(Tb, v2),), (_point(Bb, v2),), "B", BufferStore(Bb, Tb[v2] * 2.0, (v2,))
    )
    body = SeqStmt(
        (
            _loops([i1], [4], BlockRealize((i1,), const(True), blk1)),
            _loops([i2], [4], BlockRealize((i2,), const(True), blk2)),
        )
    )
    assert_structural_equal(func, _func([Ab, Bb], body, allocs=[Tb]))


def test_topological_order_with_diamond():
    A = te.placeholder((4,), name="A")
    X = te.compute((4,), lambda i: A[i] + 1.0, name="X")
    Y = te.compute((4,), lambda i: X[i] * 2.0, name="Y")
    Z = te.compute((4,), lambda i: X[i] - 1.0, name="Z")
    W = te.compute((4,), lambda i: Y[i] + Z[i], name="W")
    func = te.create_prim_func([A, W])
    names = [s.body.block.name_hint for s in func.body.block.body.seq]
    assert names == ["X", "Y", "Z", "W"]
    assert sorted(b.name for b in func.body.block.alloc_buffers) == ["X", "Y", "Z"]


def test_where_condition_guards_reduction_body():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k, where=k < 5), name="B")
    block = te.create_prim_func([A, B]).body.block.body.body.body.block
    assert isinstance(block.body, IfThenElse)
    assert isinstance(block.body.condition, tir.LT)
    assert block.body.condition.a is block.iter_vars[1].var


def test_max_reduction_init_is_minus_infinity_for_floats():
    """A float max starts from -inf (min from inf), so a max over only -inf, or over nothing,
    is -inf as in numpy and ONNX; an integer max starts from the type's smallest value."""
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    B = te.compute((4,), lambda i: te.max(A[i, k], axis=k), name="B")
    block = te.create_prim_func([A, B]).body.block.body.body.body.block
    assert block.init.value.value == -math.inf
    assert isinstance(block.body.value, tir.Max)
    C = te.compute((4,), lambda i: te.min(A[i, k], axis=k), name="C")
    assert te.create_prim_func([A, C]).body.block.body.body.body.block.init.value.value == math.inf
    Ai = te.placeholder((4, 8), "int32", name="Ai")
    Bi = te.compute((4,), lambda i: te.max(Ai[i, k], axis=k), name="Bi")
    block = te.create_prim_func([Ai, Bi]).body.block.body.body.body.block
    assert block.init.value.value == tir.min_value("int32").value


def test_reduce_init_argument():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k, init=3.0), name="B")
    block = te.create_prim_func([A, B]).body.block.body.body.body.block
    assert block.init.value.value == 3.0


def test_nonzero_reduce_axis_start():
    A = te.placeholder((10,), name="A")
    k = te.reduce_axis((2, 10), "k")
    B = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    loop_k = func.body.block.body.body
    assert loop_k.min.value == 2 and loop_k.extent.value == 8
    assert loop_k.body.block.iter_vars[1].dom.min.value == 2


def test_scalar_var_param():
    n = te.var("n")
    s = te.var("s", "float32")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * s, name="B")
    func = te.create_prim_func([A, B, s])
    assert func.params[2] is s and len(func.buffer_map) == 2


def test_unbound_scalar_var_is_an_error():
    s = te.var("scale", "float32")
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * s, name="B")
    with pytest.raises(TIRError, match="scale"):
        te.create_prim_func([A, B])


def test_placeholder_missing_from_arguments():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(TIRError, match="placeholder A"):
        te.create_prim_func([B])


def test_bad_argument_types():
    A = te.placeholder((4,), name="A")
    with pytest.raises(TIRError, match="argument 1"):
        te.create_prim_func([A, 3])
    with pytest.raises(TIRError, match="more than once"):
        te.create_prim_func([A, A])


def test_index_dtype_override_int64():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    func = te.create_prim_func([A, B], index_dtype_override="int64")
    assert all(d.dtype == "int64" for b in func.buffers for d in b.shape)
    loop = func.body.block.body
    assert loop.loop_var.dtype == "int64" and loop.extent.dtype == "int64"
    block = loop.body.body.block
    assert all(iv.var.dtype == "int64" for iv in block.iter_vars)
    assert all(i.dtype == "int64" for i in block.body.value.b.indices)


def test_compute_attrs_become_block_annotations():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i], name="B", attrs={"schedule_rule": "x"})
    block = te.create_prim_func([A, B]).body.block.body.body.block
    assert block.annotations == {"schedule_rule": "x"}


def test_zero_dim_output():
    A = te.placeholder((4,), name="A")
    k = te.reduce_axis((0, 4), "k")
    B = te.compute((), lambda: te.sum(A[k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    loop = func.body.block.body
    assert loop.loop_var.name == "k"
    assert loop.body.block.body.indices == ()


def test_index_dtype_override_retypes_shape_vars():
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] + 1.0, name="B")
    func = te.create_prim_func([A, B, n], index_dtype_override="int64")
    n64 = func.params[2]
    assert n64.name == "n" and n64.dtype == "int64" and n64 is not n
    for buf in func.buffers:
        assert buf.shape[0] is n64 and buf.shape[1].dtype == "int64"
    assert func.body.block.body.extent is n64


def test_argmax_with_int64_indices_keeps_output_dtype():
    X = te.placeholder((4, 8), name="X")
    k = te.reduce_axis((0, 8), "k")
    idx = te.compute((4,), lambda i: te.argmax(X[i, k], axis=k), name="idx")
    func = te.create_prim_func([X, idx], index_dtype_override="int64")
    block = func.body.block.body.body.body.block
    let = block.body
    assert let.var.dtype == "int32" and let.value.dtype == "int32"
    select = let.value.value
    assert isinstance(select, tir.Select) and select.dtype == "int64"
    assert select.false_value is block.iter_vars[1].var
