"""topi shape manipulation and creation computes."""

import numpy as np

from graphc import te, topi

N = te.var("n", "int64")


def _a(shape):
    return np.arange(np.prod(shape), dtype="float32").reshape(shape)


def test_reshape_transpose_on_symbolic_shape(te_run):
    x = te.placeholder((N, 6), "float32", name="x")
    a = _a((3, 6))
    out = te_run([x], topi.reshape(x, (N * 2, 3)), [a], {N: 3})
    np.testing.assert_array_equal(out[0], a.reshape(6, 3))
    np.testing.assert_array_equal(te_run([x], topi.transpose(x), [a], {N: 3})[0], a.T)


def test_concatenate_split_stack(te_run):
    x, y = te.placeholder((2, 3), "float32", name="x"), te.placeholder((2, 2), "float32", name="y")
    a, b = _a((2, 3)), _a((2, 2)) + 50
    np.testing.assert_array_equal(te_run([x, y], topi.concatenate([x, y], 1), [a, b])[0],
                                  np.concatenate([a, b], 1))
    for got, want in zip(te_run([x], topi.split(x, [1, 2], 1), [a]), np.split(a, [1, 2], 1)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(te_run([x], topi.stack([x, x], 2), [a])[0], np.stack([a, a], 2))


def test_slice_take_and_creation(te_run):
    x = te.placeholder((N, 5), "float32", name="x")
    a = _a((4, 5))
    out = te_run([x], topi.strided_slice(x, [0, 1], [1, 0], [10, 5], [1, 2]), [a], {N: 4})
    np.testing.assert_array_equal(out[0], a[1:10, 0:5:2])
    i = te.placeholder((3,), "int64", name="i")
    idx = np.array([4, 0, 2])
    np.testing.assert_array_equal(te_run([x, i], topi.take(x, i, 1), [a, idx], {N: 4})[0], a[:, idx])
    out = te_run([], topi.arange(0.0, 1.0, 0.25, "float32"), [])[0]
    np.testing.assert_allclose(out, [0, 0.25, 0.5, 0.75])
    np.testing.assert_array_equal(te_run([x], topi.trilu(x, 1, upper=True), [a], {N: 4})[0], np.triu(a, 1))
