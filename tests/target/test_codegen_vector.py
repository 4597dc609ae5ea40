"""Vectorized and unrolled loops through LLVM: TIR vector code, masks, tails, zmm/ymm, no back-edge."""

import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)
import numpy as np
import pytest

from graphc import tir
from graphc.ir.dtype import to_numpy_dtype
from graphc.target import Target
from graphc.target.llvm.vectorize import native_vector_bits, vectorize_loops

V, S, U = tir.ForKind.VECTORIZED, tir.ForKind.SERIAL, tir.ForKind.UNROLLED
HAS_AVX512 = "+avx512f" in Target("llvm").mattr


def loop(var, extent, body, kind=V, start=0):
    return tir.For(var, tir.const(start, var.dtype), tir.convert(extent), kind, body)


def binary_kernel(build_func, dtype, extent, fn, kind=V, n=None):
    """`C[i] = fn(A[i], B[i])` over a loop of kind `kind`; `n` is the buffers' length."""
    n = n if n is not None else extent
    A, B, C = (tir.decl_buffer((n,), dtype, nm) for nm in "ABC")
    handles = [tir.Var(nm.lower(), "handle") for nm in "ABC"]
    i = tir.Var("i")
    body = loop(i, extent, tir.BufferStore(C, tir.convert(fn(A[i], B[i])), (i,)), kind)
    return build_func(tir.PrimFunc(handles, body, buffer_map=dict(zip(handles, (A, B, C)))))


def sample(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    npd = to_numpy_dtype(dtype)
    if np.issubdtype(npd, np.integer):
        return rng.integers(-50, 50, n).astype(npd)
    return rng.standard_normal(n).astype(npd)


OPS = {
    "float32": lambda x, y: x * y + x,
    "float16": lambda x, y: x + y,
    "float64": lambda x, y: tir.max(x, y) - y,
    "int8": lambda x, y: x + y * 2,
    "int32": lambda x, y: x * y - 3,
    "bool": lambda x, y: x & ~y,
    "bfloat16": lambda x, y: x + y,
}
NP_OPS = {
    "float32": lambda x, y: x * y + x,
    "float16": lambda x, y: x + y,
    "float64": lambda x, y: np.maximum(x, y) - y,
    "int8": lambda x, y: (x + y * 2).astype("int8"),
    "int32": lambda x, y: x * y - 3,
    "bool": lambda x, y: x & ~y,
    "bfloat16": lambda x, y: x + y,
}


@pytest.mark.parametrize("dtype", list(OPS))
@pytest.mark.parametrize("extent", [16, 64, 37, 5, 1])
def test_vectorized_elementwise_matches_numpy(dtype, extent, build_func):
    lib = binary_kernel(build_func, dtype, extent, OPS[dtype])
    a, b = sample(dtype, extent, 1), sample(dtype, extent, 2)
    c = np.zeros(extent, a.dtype)
    lib["main"](a, b, c)
    with np.errstate(over="ignore"):
        want = NP_OPS[dtype](a, b)
    tol = 1e-2 if "16" in dtype else 1e-6
    if dtype in ("bool", "int8", "int32"):
        np.testing.assert_array_equal(c, want)
    else:
        np.testing.assert_allclose(c.astype("float64"), want.astype("float64"), rtol=tol, atol=tol)
    if extent > 1:  # the vector rewrite happened: LLVM IR computes on vectors
        assert " x " in lib.get_source("ll")


def test_rewrite_shape_dividing_and_tail():
    A = tir.decl_buffer((40,), "float32", "A")
    i = tir.Var("i")
    store = tir.BufferStore(A, A[i] + 1.0, (i,))
    whole = vectorize_loops(loop(i, 32, store), 512)  # two float32x16 chunks, no tail
    assert isinstance(whole, tir.For) and whole.extent.value == 2 and whole.kind == S
    assert whole.body.value.dtype == "float32x16"
    split = vectorize_loops(loop(i, 40, store), 256)  # five float32x8 chunks + nothing
    assert split.extent.value == 5 and split.body.value.dtype == "float32x8"
    tail = vectorize_loops(loop(i, 37, store), 512)
    main, rest = tail.seq
    assert main.extent.value == 2 and rest.min.value == 32 and rest.extent.value == 5
    assert rest.body is store  # the tail is the original scalar body


@pytest.mark.parametrize("n", [0, 1, 7, 16, 17, 100])
def test_symbolic_extent_vector_main_and_scalar_tail(n, build_func):
    m = tir.Var("n")
    A, B = tir.decl_buffer((m,), "float32", "A"), tir.decl_buffer((m,), "float32", "B")
    a, b, i = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("i")
    body = loop(i, m, tir.BufferStore(B, A[i] * 3.0, (i,)))
    lib = build_func(tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}))
    x = np.arange(n, dtype="float32")
    y = np.zeros(n, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, x * 3)


def test_vector_condition_masks_loads_and_stores(build_func):
    # the buffers hold exactly `valid` elements: unmasked vector accesses would run past them
    valid, extent = 13, 16
    A, B = tir.decl_buffer((valid,), "float32", "A"), tir.decl_buffer((valid,), "float32", "B")
    C = tir.decl_buffer((extent,), "float32", "C")
    handles = [tir.Var(nm, "handle") for nm in "abc"]
    i = tir.Var("i")
    pad = tir.call_intrin("float32", "tir.if_then_else", tir.convert(i < valid), A[i], tir.const(-1.0))
    guarded = tir.IfThenElse(tir.convert(i < valid), tir.BufferStore(B, A[i] * 2.0, (i,)))
    body = loop(i, extent, tir.SeqStmt((tir.BufferStore(C, pad, (i,)), guarded)))
    lib = build_func(tir.PrimFunc(handles, body, buffer_map=dict(zip(handles, (A, B, C)))))
    assert "llvm.masked" in lib.get_source("ll")
    a = np.arange(valid, dtype="float32")
    b, c = np.zeros(valid, "float32"), np.zeros(extent, "float32")
    lib["main"](a, b, c)
    np.testing.assert_array_equal(c, np.concatenate([a, [-1.0] * (extent - valid)]).astype("float32"))
    np.testing.assert_array_equal(b, a * 2)


def test_strided_gather_let_and_invariant_operands(build_func):
    A, B = tir.decl_buffer((64,), "int32", "A"), tir.decl_buffer((32,), "int32", "B")
    a, b, i, t = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("i"), tir.Var("t")
    body = loop(i, 32, tir.LetStmt(t, A[i * 2] + A[5], tir.BufferStore(B, t * i, (i,))))
    lib = build_func(tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}))
    x = np.arange(64, dtype="int32")
    y = np.zeros(32, "int32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, (x[::2] + 5) * np.arange(32))


def test_int64_loop_var_index_casts_and_scalar_conditions(build_func):
    n = 40
    A = tir.decl_buffer((n,), "float32", "A")
    a, i, flag = tir.Var("a", "handle"), tir.Var("i", "int64"), tir.Var("flag", "bool")
    # i is int64 while the loop bounds are int32 constants; the flag is the same for all lanes
    value = tir.call_intrin("float32", "tir.if_then_else", flag, tir.Cast("float32", i) * 0.5, A[i])
    body = tir.For(i, tir.const(0), tir.const(n), V, tir.BufferStore(A, value, (i,)))
    lib = build_func(tir.PrimFunc([a, flag], body, buffer_map={a: A}))
    x = np.full(n, 7.0, "float32")
    lib["main"](x, False)
    np.testing.assert_array_equal(x, 7.0)
    lib["main"](x, True)
    np.testing.assert_array_equal(x, np.arange(n) * 0.5)


def test_unvectorizable_bodies_stay_correct_serial_loops(build_func):
    A, S_ = tir.decl_buffer((16,), "float32", "A"), tir.decl_buffer((1,), "float32", "S")
    a, s, i, j = tir.Var("a", "handle"), tir.Var("s", "handle"), tir.Var("i"), tir.Var("j")
    # a lane-invariant store (a running sum) and a nested loop: order matters, keep serial
    acc = tir.BufferStore(S_, S_[0] + A[i], (tir.const(0),))
    nested = loop(j, 2, tir.BufferStore(A, A[i] + 1.0, (i,)), S)
    body = loop(i, 16, tir.SeqStmt((nested, acc)))
    assert vectorize_loops(body, 512) is body
    lib = build_func(tir.PrimFunc([a, s], body, buffer_map={a: A, s: S_}))
    x, total = np.arange(16, dtype="float32"), np.zeros(1, "float32")
    lib["main"](x, total)
    np.testing.assert_array_equal(x, np.arange(16) + 2)
    assert total[0] == (np.arange(16) + 2).sum()


@pytest.mark.skipif(not HAS_AVX512, reason="the host has no AVX-512")
def test_avx512_uses_zmm_and_avx2_ymm(build_func):
    f = lambda x, y: x * y + x  # noqa: E731
    asm = binary_kernel(build_func, "float32", 256, f).get_source("asm")
    assert "zmm" in asm
    narrow = binary_kernel(lambda func: build_func(func, target="llvm -mattr=-avx512f"), "float32", 256, f)
    asm = narrow.get_source("asm")
    assert "ymm" in asm and "zmm" not in asm


def test_native_vector_bits():
    assert native_vector_bits(Target("llvm -mattr=-avx512f")) in (256, 128)
    assert native_vector_bits(Target("llvm -mcpu=skylake-avx512 -mattr=+avx512f")) == 512
    assert native_vector_bits(Target("llvm -mcpu=haswell -mattr=+avx2")) == 256


def test_script_vectorized_loop_builds(tmp_path):
    import graphc
    from graphc.script import tir as T

    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (4, 50), "float32")
        B = T.match_buffer(b, (4, 50), "float32")
        for i in range(4):
            for j in T.vectorized(50):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * 0.5

    lib = graphc.build(scale, target="llvm")
    x = np.random.rand(4, 50).astype("float32")
    y = np.zeros_like(x)
    lib["scale"](x, y)
    np.testing.assert_allclose(y, x * 0.5)


# -- unroll ---------------------------------------------------------------------------------
@pytest.mark.parametrize("extent", [4, 64])
def test_unrolled_loop_has_no_back_edge(extent, build_func):
    A = tir.decl_buffer((extent,), "int32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    body = loop(i, extent, tir.BufferStore(A, A[i] * 3 + i, (i,)), U)
    lib = build_func(tir.PrimFunc([a], body, buffer_map={a: A}))
    ll = lib.get_source("ll")
    assert " phi " not in ll and "llvm.loop" not in ll  # straight-line code: nothing loops
    x = np.arange(extent, dtype="int32")
    lib["main"](x)
    np.testing.assert_array_equal(x, np.arange(extent) * 4)


# -- randomized: vectorized and serial loops agree ------------------------------------------
def random_expr(rng, leaves, depth):
    """A random float32 expression over `leaves` (loads, the loop index, constants)."""
    if depth == 0 or rng.random() < 0.25:
        return leaves[rng.integers(len(leaves))]
    a, b = random_expr(rng, leaves, depth - 1), random_expr(rng, leaves, depth - 1)
    pick = rng.integers(6)
    if pick == 0:
        return a + b
    if pick == 1:
        return a - b * 0.5
    if pick == 2:
        return a * b
    if pick == 3:
        return tir.max(a, b)
    if pick == 4:
        return tir.Select(tir.convert(a < b), a, b + 1.0, "float32")
    return tir.min(a, tir.const(2.0))


@pytest.mark.parametrize("seed", range(8))
def test_random_bodies_vectorized_equal_serial(seed, build_func):
    rng = np.random.default_rng(seed)
    extent = int(rng.integers(1, 70))
    symbolic = bool(rng.integers(2))
    n = tir.Var("n") if symbolic else extent
    A, B, C = (tir.decl_buffer((n,), "float32", nm) for nm in "ABC")
    handles = [tir.Var(nm, "handle") for nm in "abc"]
    i = tir.Var("i")
    leaves = [A[i], B[i], tir.Cast("float32", i), tir.const(1.5), A[tir.const(0)]]
    value = random_expr(rng, leaves, 4)
    outs = []
    for kind in (S, V):
        body = loop(i, n, tir.BufferStore(C, value, (i,)), kind)
        lib = build_func(tir.PrimFunc(handles, body, buffer_map=dict(zip(handles, (A, B, C)))))
        a, b = sample("float32", extent, 1), sample("float32", extent, 2)
        c = np.zeros(extent, "float32")
        lib["main"](a, b, c)
        outs.append(c)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6, atol=1e-6)  # fma contraction may differ
