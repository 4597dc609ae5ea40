"""Statements through LLVM: loops, branches, lets, allocations, asserts, symbolic shapes."""

import numpy as np
import pytest

from graphc import tir
from graphc.errors import CodegenError
from graphc.runtime.kernel import KernelError
from graphc.target.llvm.stmt import STACK_LIMIT_BYTES

S = tir.ForKind.SERIAL


def loop(var, extent, body, kind=S):
    return tir.For(var, tir.const(0, var.dtype), tir.convert(extent), kind, body)


def test_nested_loops_matmul(build_func):
    n = 6
    A, B, C = (tir.decl_buffer((n, n), "float32", nm) for nm in "ABC")
    Af, Bf, Cf = (tir.decl_buffer((n * n,), "float32", nm + "f", data=buf.data) for nm, buf in
                  zip("ABC", (A, B, C)))
    handles = [tir.Var(nm.lower(), "handle") for nm in "ABC"]
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    init = tir.BufferStore(Cf, tir.const(0.0), (i * n + j,))
    update = tir.BufferStore(Cf, Cf[i * n + j] + Af[i * n + k] * Bf[k * n + j], (i * n + j,))
    body = loop(i, n, loop(j, n, tir.SeqStmt((init, loop(k, n, update)))))
    lib = build_func(tir.PrimFunc(handles, body, buffer_map=dict(zip(handles, (A, B, C)))))
    a, b = np.random.rand(n, n).astype("float32"), np.random.rand(n, n).astype("float32")
    c = np.zeros((n, n), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@pytest.mark.parametrize("kind", [tir.ForKind.PARALLEL, tir.ForKind.VECTORIZED, tir.ForKind.UNROLLED])
def test_loop_kinds_run_serially_with_hints(kind, build_func):
    A = tir.decl_buffer((8,), "int32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    lib = build_func(tir.PrimFunc([a], loop(i, 8, tir.BufferStore(A, i * 3, (i,)), kind), buffer_map={a: A}))
    x = np.zeros(8, "int32")
    lib["main"](x)
    np.testing.assert_array_equal(x, np.arange(8) * 3)


def test_thread_binding_needs_gpu(build_func):
    A = tir.decl_buffer((8,), "int32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    iv = tir.IterVar(None, i, tir.IterType.THREAD_INDEX, "threadIdx.x")
    body = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.THREAD_BINDING, tir.BufferStore(A, i, (i,)),
                   thread_binding=iv)
    with pytest.raises(CodegenError, match="thread bindings need a GPU target"):
        build_func(tir.PrimFunc([a], body, buffer_map={a: A}))


def test_if_then_else_stmt_and_let_stmt(build_func):
    A = tir.decl_buffer((10,), "int32", "A")
    a, i, v = tir.Var("a", "handle"), tir.Var("i"), tir.Var("v")
    even = tir.convert(i % 2 == 0)
    branch = tir.IfThenElse(even, tir.BufferStore(A, v, (i,)), tir.BufferStore(A, -v, (i,)))
    body = loop(i, 10, tir.LetStmt(v, i * i, branch))
    lib = build_func(tir.PrimFunc([a], body, buffer_map={a: A}))
    x = np.zeros(10, "int32")
    lib["main"](x)
    r = np.arange(10)
    np.testing.assert_array_equal(x, np.where(r % 2 == 0, r * r, -r * r))


def _scratch_func(extent, n_var=None, dtype="float32"):
    """out[i] = 2 * in[i] through a scratch buffer of `extent` elements allocated in the body."""
    n = n_var if n_var is not None else extent
    In, Out = tir.decl_buffer((n,), dtype, "In"), tir.decl_buffer((n,), dtype, "Out")
    h_in, h_out, i = tir.Var("hin", "handle"), tir.Var("hout", "handle"), tir.Var("i")
    data = tir.Var("scratch", "handle", type_annotation=dtype)
    T = tir.decl_buffer((extent,), dtype, "scratch", data=data)
    fill = loop(i, n, tir.BufferStore(T, In[i] * 2.0, (i,)))
    j = tir.Var("j")
    copy = loop(j, n, tir.BufferStore(Out, T[j], (j,)))
    alloc = tir.Allocate(data, dtype, (tir.convert(extent),), tir.const(True), tir.SeqStmt((fill, copy)))
    params = [h_in, h_out]
    return tir.PrimFunc(params, alloc, buffer_map={h_in: In, h_out: Out})


@pytest.mark.parametrize("extent", [16, STACK_LIMIT_BYTES])  # stack, then heap (4 bytes each)
def test_allocate_stack_and_heap(extent, build_func):
    lib = build_func(_scratch_func(extent))
    ll = lib.get_source("ll")
    assert ("aligned_alloc" in ll) == (extent * 4 > STACK_LIMIT_BYTES)
    x = np.random.rand(extent).astype("float32")
    y = np.zeros_like(x)
    lib["main"](x, y)
    np.testing.assert_array_equal(y, x * 2)


def test_allocate_symbolic_extent_uses_heap(build_func):
    n = tir.Var("n")
    lib = build_func(_scratch_func(n, n))
    assert "aligned_alloc" in lib.get_source("ll")
    for size in (3, 100):
        x = np.random.rand(size).astype("float32")
        y = np.zeros_like(x)
        lib["main"](x, y)
        np.testing.assert_array_equal(y, x * 2)


def test_allocation_inside_loop_does_not_grow_the_stack(build_func):
    # 200_000 iterations each allocating 4 KiB: the alloca must live in the entry block
    A = tir.decl_buffer((1,), "float32", "A")
    a, i, j = tir.Var("a", "handle"), tir.Var("i"), tir.Var("j")
    data = tir.Var("t", "handle", type_annotation="float32")
    T = tir.decl_buffer((1024,), "float32", "t", data=data)
    inner = tir.SeqStmt((tir.BufferStore(T, tir.Cast("float32", i), (j,)),
                         tir.BufferStore(A, A[0] + T[j], (tir.const(0),))))
    body = loop(i, 200_000, tir.Allocate(data, "float32", (tir.const(1024),), tir.const(True),
                                         tir.For(j, tir.const(0), tir.const(1), S, inner)))
    lib = build_func(tir.PrimFunc([a], body, buffer_map={a: A}))
    x = np.zeros(1, "float32")
    lib["main"](x)
    assert x[0] == pytest.approx(sum(range(200_000)), rel=1e-3)


def test_symbolic_shapes_and_scalar_params(build_func):
    n, m = tir.Var("n"), tir.Var("m")
    A, B = tir.decl_buffer((n, m), "float32", "A"), tir.decl_buffer((n, m), "float32", "B")
    Af = tir.decl_buffer((n * m,), "float32", "Af", data=A.data)
    Bf = tir.decl_buffer((n * m,), "float32", "Bf", data=B.data)
    a, b, alpha, i = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("alpha", "float32"), tir.Var("i")
    body = loop(i, n * m, tir.BufferStore(Bf, Af[i] * alpha, (i,)))
    lib = build_func(tir.PrimFunc([a, b, alpha], body, buffer_map={a: A, b: B}))
    for shape in ((2, 3), (5, 1), (0, 4)):
        x = np.random.rand(*shape).astype("float32")
        y = np.zeros_like(x)
        lib["main"](x, y, 1.5)
        np.testing.assert_allclose(y, x * 1.5)


def test_assert_stmt_raises_with_message(build_func):
    n = tir.Var("n")
    A = tir.decl_buffer((n,), "int32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    body = tir.AssertStmt(tir.convert(n > 2), tir.StringImm("need more than two elements"),
                          loop(i, n, tir.BufferStore(A, i, (i,))))
    lib = build_func(tir.PrimFunc([a], body, buffer_map={a: A}))
    x = np.zeros(4, "int32")
    lib["main"](x)
    np.testing.assert_array_equal(x, np.arange(4))
    with pytest.raises(KernelError, match="need more than two elements"):
        lib["main"](np.zeros(2, "int32"))


def test_assert_inside_heap_allocation_frees_and_reports(build_func):
    n = tir.Var("n")
    In, Out = tir.decl_buffer((n,), "float32", "In"), tir.decl_buffer((n,), "float32", "Out")
    f = _scratch_func(n, n)
    guarded = f.body.replace(body=tir.AssertStmt(tir.convert(n < 50), tir.StringImm("too big"), f.body.body))
    lib = build_func(f.with_body(guarded))
    with pytest.raises(KernelError, match="too big"):
        lib["main"](np.zeros(60, "float32"), np.zeros(60, "float32"))
    del In, Out


def test_attr_stmt_decl_buffer_and_evaluate_pass_through(build_func):
    A = tir.decl_buffer((4,), "int32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    store = loop(i, 4, tir.BufferStore(A, i + 1, (i,)))
    decl = tir.DeclBuffer(A, tir.SeqStmt((tir.Evaluate(0), store)))
    body = tir.AttrStmt(A.data, "pragma_hint", tir.const(1), decl)
    lib = build_func(tir.PrimFunc([a], body, buffer_map={a: A}))
    x = np.zeros(4, "int32")
    lib["main"](x)
    np.testing.assert_array_equal(x, [1, 2, 3, 4])


def test_unbound_variable_is_a_codegen_error(build_func):
    A = tir.decl_buffer((4,), "int32", "A")
    a = tir.Var("a", "handle")
    with pytest.raises(CodegenError, match="'ghost'"):
        store = tir.BufferStore(A, tir.Var("ghost"), (tir.const(0),))
        build_func(tir.PrimFunc([a], store, buffer_map={a: A}))


def test_blocks_must_be_lowered_first(build_func):
    blk = tir.Block((), (), (), "root", tir.Evaluate(0))
    with pytest.raises(CodegenError, match="graphc.lower"):
        build_func(tir.PrimFunc([], tir.BlockRealize((), tir.const(True), blk)))


def test_var_only_in_compound_dims_cannot_be_bound(build_func):
    n = tir.Var("n")
    A = tir.decl_buffer((n * 2,), "float32", "A")
    a = tir.Var("a", "handle")
    with pytest.raises(CodegenError, match="'n' appears only inside compound dimensions"):
        build_func(tir.PrimFunc([a], tir.Evaluate(0), buffer_map={a: A}))
