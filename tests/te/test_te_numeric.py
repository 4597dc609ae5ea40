"""TE programs built with graphc.build(target="llvm") and checked against numpy."""

import numpy as np

import graphc
from graphc import te

RNG = np.random.default_rng(0)


def _run(tensors, *arrays):
    lib = graphc.build(te.create_prim_func(tensors), target="llvm")
    lib["main"](*arrays)
    return arrays


def _rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def test_add_one():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    a, b = _rand(8), np.zeros(8, "float32")
    _run([A, B], a, b)
    np.testing.assert_allclose(b, a + 1.0, rtol=1e-6)


def test_matmul():
    n = 32
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda m, j: te.sum(A[m, k] * B[k, j], axis=k), name="C")
    a, b, c = _rand(n, n), _rand(n, n), np.zeros((n, n), "float32")
    _run([A, B, C], a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_symbolic_elementwise():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    B = te.placeholder((n, m), name="B")
    C = te.compute((n, m), lambda i, j: A[i, j] * B[i, j] + 1.0, name="C")
    a, b, c = _rand(5, 7), _rand(5, 7), np.zeros((5, 7), "float32")
    _run([A, B, C], a, b, c)
    np.testing.assert_allclose(c, a * b + 1.0, rtol=1e-5)


def test_symbolic_row_sum():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    a, b = _rand(6, 9), np.zeros(6, "float32")
    _run([A, B], a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_sigmoid():
    A = te.placeholder((16,), name="A")
    B = te.compute(A.shape, lambda i: te.sigmoid(A[i]), name="B")
    a, b = _rand(16), np.zeros(16, "float32")
    _run([A, B], a, b)
    np.testing.assert_allclose(b, 1.0 / (1.0 + np.exp(-a)), rtol=1e-5)


def test_max_reduction_and_where():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    M = te.compute((4,), lambda i: te.max(A[i, k], axis=k), name="M")
    S = te.compute((4,), lambda i: te.sum(A[i, k], axis=k, where=k < 5), name="S")
    a, m, s = _rand(4, 8), np.zeros(4, "float32"), np.zeros(4, "float32")
    _run([A, M, S], a, m, s)
    np.testing.assert_allclose(m, a.max(axis=1))
    np.testing.assert_allclose(s, a[:, :5].sum(axis=1), rtol=1e-5, atol=1e-5)


def test_argmax():
    X = te.placeholder((4, 8), name="X")
    k = te.reduce_axis((0, 8), "k")
    Idx = te.compute((4,), lambda i: te.argmax(X[i, k], axis=k), name="I")
    x, idx = _rand(4, 8), np.zeros(4, "int32")
    _run([X, Idx], x, idx)
    np.testing.assert_array_equal(idx, x.argmax(axis=1))


def test_multi_output_and_intermediate():
    A = te.placeholder((8,), name="A")
    T = te.compute((8,), lambda i: A[i] * 2.0, name="T")
    B, C = te.compute((8,), lambda i: (T[i] + 1.0, T[i] - 1.0), name="BC")
    a, b, c = _rand(8), np.zeros(8, "float32"), np.zeros(8, "float32")
    _run([A, B, C], a, b, c)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(c, a * 2 - 1, rtol=1e-6)


def test_conv1d_like():
    A = te.placeholder((18,), name="A")
    W = te.placeholder((3,), name="W")
    k = te.reduce_axis((0, 3), "k")
    B = te.compute((8,), lambda i: te.sum(A[i * 2 + k] * W[k], axis=k), name="B")
    a, w, b = _rand(18), _rand(3), np.zeros(8, "float32")
    _run([A, W, B], a, w, b)
    expected = np.array([sum(a[i * 2 + j] * w[j] for j in range(3)) for i in range(8)], "float32")
    np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-5)


def test_int64_indices_argmin_and_symbolic_shape():
    n = te.var("n")
    X = te.placeholder((n, 6), name="X")
    k = te.reduce_axis((0, 6), "k")
    Idx = te.compute((n,), lambda i: te.argmin(X[i, k], axis=k), name="Idx")
    func = te.create_prim_func([X, Idx], index_dtype_override="int64")
    x, idx = _rand(5, 6), np.zeros(5, "int32")
    graphc.build(func, target="llvm")["main"](x, idx)
    np.testing.assert_array_equal(idx, x.argmin(axis=1))


def test_padded_stencil_with_if_then_else():
    A = te.placeholder((8,), name="A")
    B = te.compute(
        (8,),
        lambda i: te.if_then_else(i > 0, A[i - 1], 0.0) + A[i] + te.if_then_else(i < 7, A[i + 1], 0.0),
        name="B",
    )
    a, b = _rand(8), np.zeros(8, "float32")
    _run([A, B], a, b)
    padded = np.concatenate([[0.0], a, [0.0]]).astype("float32")
    np.testing.assert_allclose(b, padded[:-2] + padded[1:-1] + padded[2:], rtol=1e-5, atol=1e-6)
