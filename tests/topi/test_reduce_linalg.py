"""topi reductions and matmul on static and symbolic shapes."""

import numpy as np
import pytest

from graphc import te, topi

N = te.var("n", "int64")


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), ([1, 2], False)])
def test_reductions(te_run, axis, keepdims):
    x = te.placeholder((N, 3, 4), "float32", name="x")
    a = np.random.default_rng(0).uniform(0.5, 1.5, (5, 3, 4)).astype("float32")
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    for fn, ref in ((topi.sum, np.sum), (topi.max, np.max), (topi.mean, np.mean), (topi.variance, np.var)):
        out = te_run([x], fn(x, axis, keepdims), [a], {N: 5})[0]
        np.testing.assert_allclose(out, ref(a, axis=np_axis, keepdims=keepdims), rtol=1e-5)


def test_argmax_ties_take_the_first_index(te_run):
    x = te.placeholder((2, 4), "float32", name="x")
    a = np.array([[1, 3, 3, 0], [-1, -1, -2, -1]], dtype="float32")
    np.testing.assert_array_equal(te_run([x], topi.argmax(x, 1), [a])[0], [1, 0])
    np.testing.assert_array_equal(te_run([x], topi.argmin(x, 1), [a])[0], [3, 2])
    np.testing.assert_array_equal(te_run([x], topi.argmax(x), [a])[0], 1)


def test_matmul_broadcast_batches(te_run):
    a = te.placeholder((N, 1, 2, 3), "float32", name="a")
    b = te.placeholder((4, 3, 5), "float32", name="b")
    c = topi.matmul(a, b)
    assert [str(d) for d in c.shape] == ["n", "4", "2", "5"]
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(2, 1, 2, 3)).astype("float32"), rng.normal(size=(4, 3, 5)).astype("float32")
    np.testing.assert_allclose(te_run([a, b], c, [x, y], {N: 2})[0], x @ y, rtol=1e-5, atol=1e-6)
