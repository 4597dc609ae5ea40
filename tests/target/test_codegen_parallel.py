"""Parallel loops through LLVM: outlined bodies on libgomp, chunking, captures, per-thread storage."""

import numpy as np
import pytest

import graphc.runtime as rt
from graphc import tir
from graphc.runtime.kernel import KernelError
from graphc.target.llvm.parallel import PARALLEL_MIN_WORK, static_work

P, S, V = tir.ForKind.PARALLEL, tir.ForKind.SERIAL, tir.ForKind.VECTORIZED
GOMP_CALL = "call void @GOMP_parallel("


def loop(var, extent, body, kind=S):
    return tir.For(var, tir.const(0, var.dtype), tir.convert(extent), kind, body)


def func(buffers, body, scalars=()):
    handles = [tir.Var(b.name.lower() + "_h", "handle") for b in buffers]
    return tir.PrimFunc([*handles, *scalars], body, buffer_map=dict(zip(handles, buffers)))


@pytest.fixture
def threads():
    """Set the thread count for one test, restoring it afterwards."""
    old = rt.get_num_threads()
    yield rt.set_num_threads
    rt.set_num_threads(old)


def add_kernel(build_func, n, kind=P, inner=None):
    A, B, C = (tir.decl_buffer((n,), "float32", nm) for nm in "ABC")
    i = tir.Var("i")
    return build_func(func([A, B, C], loop(i, n, tir.BufferStore(C, A[i] + B[i], (i,)), kind)))


def test_large_parallel_loop_calls_gomp_and_is_correct(build_func):
    n = 1 << 20
    lib = add_kernel(build_func, n)
    assert GOMP_CALL in lib.get_source("ll")
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    c = np.zeros_like(a)
    lib["main"](a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_tiny_parallel_loop_stays_serial(build_func):
    lib = add_kernel(build_func, 64)
    assert "GOMP_parallel" not in lib.get_source("ll")
    a, b = np.arange(64, dtype="float32"), np.ones(64, "float32")
    c = np.zeros_like(a)
    lib["main"](a, b, c)
    np.testing.assert_array_equal(c, a + 1)


def test_static_work_counts_nested_constant_loops():
    i, j = tir.Var("i"), tir.Var("j")
    A = tir.decl_buffer((8,), "float32", "A")
    store = tir.BufferStore(A, tir.const(1.0), (j,))
    assert static_work(loop(i, 10, loop(j, 20, store), P)) == 200
    assert static_work(loop(i, tir.Var("n"), store, P)) is None
    assert PARALLEL_MIN_WORK > 200


@pytest.mark.parametrize("rows", [1, 3, 256])
def test_parallel_outer_of_2d_row_sum(rows, build_func):
    cols = 128
    A, R = tir.decl_buffer((rows * cols,), "float32", "A"), tir.decl_buffer((rows,), "float32", "R")
    i, j = tir.Var("i"), tir.Var("j")
    init = tir.BufferStore(R, tir.const(0.0), (i,))
    acc = tir.BufferStore(R, R[i] + A[i * cols + j], (i,))
    body = loop(i, rows, tir.SeqStmt((init, loop(j, cols, acc))), P)
    lib = build_func(func([A, R], body))
    assert (GOMP_CALL in lib.get_source("ll")) == (rows * cols >= PARALLEL_MIN_WORK)
    a = np.random.rand(rows, cols).astype("float32")
    r = np.zeros(rows, "float32")
    lib["main"](a.ravel(), r)
    np.testing.assert_allclose(r, a.sum(1), rtol=1e-5)


@pytest.mark.parametrize("scratch", [256, 8192])  # a stack slot, then a heap buffer per thread
def test_allocate_in_parallel_body_is_per_thread(scratch, build_func, threads):
    threads(4)
    rows = 64
    A, B = (tir.decl_buffer((rows * scratch,), "float32", nm) for nm in "AB")
    i, j = tir.Var("i"), tir.Var("j")
    data = tir.Var("tmp", "handle", type_annotation="float32")
    T = tir.decl_buffer((scratch,), "float32", "tmp", data=data)
    fill = loop(j, scratch, tir.BufferStore(T, A[i * scratch + j] * 2.0, (j,)))
    # reading the mirror element: a buffer shared between threads would mix rows
    use = loop(j, scratch, tir.BufferStore(B, T[j] + T[scratch - 1 - j], (i * scratch + j,)))
    alloc = tir.Allocate(data, "float32", (tir.const(scratch),), tir.const(True), tir.SeqStmt((fill, use)))
    lib = build_func(func([A, B], loop(i, rows, alloc, P)))
    ll = lib.get_source("ll")
    assert GOMP_CALL in ll
    a = np.random.rand(rows, scratch).astype("float32")
    b = np.zeros_like(a)
    lib["main"](a.ravel(), b.ravel())
    np.testing.assert_allclose(b, 2 * a + 2 * a[:, ::-1], rtol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_symbolic_extent_branches_at_run_time(n, build_func):
    m = tir.Var("n")
    A, B = tir.decl_buffer((m,), "int32", "A"), tir.decl_buffer((m,), "int32", "B")
    i = tir.Var("i")
    lib = build_func(func([A, B], loop(i, m, tir.BufferStore(B, A[i] * i, (i,)), P)))
    assert GOMP_CALL in lib.get_source("ll")
    a = np.arange(n, dtype="int32")
    b = np.full(n, -1, "int32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a * a)


def test_nested_parallel_runs_inner_serially(build_func):
    rows, cols = 64, 512
    A = tir.decl_buffer((rows * cols,), "int32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    body = loop(i, rows, loop(j, cols, tir.BufferStore(A, i * 1000 + j, (i * cols + j,)), P), P)
    lib = build_func(func([A], body))
    assert lib.get_source("ll").count(GOMP_CALL) == 1  # one region, for the outer loop
    a = np.zeros(rows * cols, "int32")
    lib["main"](a)
    r = np.arange(rows)[:, None] * 1000 + np.arange(cols)[None, :]
    np.testing.assert_array_equal(a.reshape(rows, cols), r)


def test_captures_scalars_lets_and_outer_loop_vars(build_func):
    # a serial loop around a parallel one: its var, a let and a float scalar are captured
    reps, n = 3, 1 << 15
    A = tir.decl_buffer((reps * n,), "float32", "A")
    alpha, k, i, t = tir.Var("alpha", "float32"), tir.Var("k"), tir.Var("i"), tir.Var("t", "float32")
    inner = loop(i, n, tir.BufferStore(A, t + tir.Cast("float32", i), (k * n + i,)), P)
    body = loop(k, reps, tir.LetStmt(t, alpha * tir.Cast("float32", k), inner))
    lib = build_func(func([A], body, scalars=[alpha]))
    a = np.zeros(reps * n, "float32")
    lib["main"](a, 0.5)
    want = 0.5 * np.arange(reps)[:, None] + np.arange(n)[None, :]
    np.testing.assert_array_equal(a.reshape(reps, n), want.astype("float32"))


def test_parallel_with_vectorized_inner_loop(build_func):
    rows, cols = 2048, 200  # 2048 x 13 vector/tail iterations: enough work for the pool
    A, B = (tir.decl_buffer((rows * cols,), "float32", nm) for nm in "AB")
    i, j = tir.Var("i"), tir.Var("j")
    body = loop(i, rows, loop(j, cols, tir.BufferStore(B, A[i * cols + j] * 3.0, (i * cols + j,)), V), P)
    lib = build_func(func([A, B], body))
    ll = lib.get_source("ll")
    assert GOMP_CALL in ll and ("<16 x float>" in ll or "<8 x float>" in ll)
    a = np.random.rand(rows * cols).astype("float32")
    b = np.zeros_like(a)
    lib["main"](a, b)
    np.testing.assert_allclose(b, a * 3, rtol=1e-6)


def test_assertion_failing_in_a_thread_is_reported(build_func, threads):
    threads(4)
    n = 1 << 16
    A = tir.decl_buffer((n,), "int32", "A")
    i = tir.Var("i")
    check = tir.AssertStmt(tir.convert(A[i] >= 0), tir.StringImm("negative input"),
                           tir.BufferStore(A, A[i] + 1, (i,)))
    lib = build_func(func([A], loop(i, n, check, P)))
    a = np.zeros(n, "int32")
    lib["main"](a)
    np.testing.assert_array_equal(a, 1)
    a[n - 3] = -5
    with pytest.raises(KernelError, match="negative input"):
        lib["main"](a)
    assert rt.thread_pool.active_regions() == 0


def test_thread_count_reaches_the_kernel(build_func, threads):
    # every iteration records omp_get_num_threads() and omp_get_thread_num()
    n = 1 << 15
    N, T = tir.decl_buffer((n,), "int32", "N"), tir.decl_buffer((n,), "int32", "T")
    i = tir.Var("i")
    body = tir.SeqStmt((
        tir.BufferStore(N, tir.call_extern("int32", "omp_get_num_threads"), (i,)),
        tir.BufferStore(T, tir.call_extern("int32", "omp_get_thread_num"), (i,)),
    ))
    lib = build_func(func([N, T], loop(i, n, body, P)))
    nt, tid = np.zeros(n, "int32"), np.zeros(n, "int32")
    for count in (1, 2, 3):
        threads(count)
        lib["main"](nt, tid)
        if rt.thread_pool.gomp_path() is None:
            count = 1  # no libgomp: serial stand-ins
        assert set(nt.tolist()) == {count}
        assert sorted(set(tid.tolist())) == list(range(count))
        assert np.all(np.diff(tid) >= 0)  # static contiguous chunks in thread order
