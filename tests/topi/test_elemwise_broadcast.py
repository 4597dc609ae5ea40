"""topi elementwise and broadcast computes on static and symbolic shapes."""

import numpy as np

from graphc import te, topi

N = te.var("n", "int64")


def test_unary_on_symbolic_shape(te_run):
    x = te.placeholder((N, 3), "float32", name="x")
    a = np.random.default_rng(0).uniform(-2, 2, (4, 3)).astype("float32")
    for fn, ref in ((topi.exp, np.exp), (topi.sign, np.sign), (topi.square, np.square), (topi.abs, np.abs)):
        np.testing.assert_allclose(te_run([x], fn(x), [a], {N: 4})[0], ref(a), rtol=1e-6)
    out = te_run([x], topi.clip(x, -0.5, 0.5), [a], {N: 4})[0]
    np.testing.assert_allclose(out, np.clip(a, -0.5, 0.5))
    out = te_run([x], topi.cast(x, "int32"), [a], {N: 4})[0]
    np.testing.assert_array_equal(out, a.astype("int32"))


def test_broadcast_shapes_and_values(te_run):
    a = te.placeholder((N, 1, 3), "float32", name="a")
    b = te.placeholder((2, 1), "float32", name="b")
    c = topi.subtract(a, b)
    assert [str(d) for d in c.shape] == ["n", "2", "3"]
    x, y = np.random.default_rng(1).normal(size=(4, 1, 3)), np.random.default_rng(2).normal(size=(2, 1))
    x, y = x.astype("float32"), y.astype("float32")
    np.testing.assert_allclose(te_run([a, b], c, [x, y], {N: 4})[0], x - y, rtol=1e-6)
    np.testing.assert_array_equal(te_run([a, b], topi.greater(a, b), [x, y], {N: 4})[0], x > y)


def test_where_and_broadcast_to(te_run):
    c = te.placeholder((3, 1), "bool", name="c")
    x = te.placeholder((4,), "float32", name="x")
    cv = np.array([[True], [False], [True]])
    xv = np.arange(4, dtype="float32")
    out = te_run([c, x], topi.where(c, x, topi.negative(x)), [cv, xv])
    np.testing.assert_array_equal(out[0], np.where(cv, xv, -xv))
    out = te_run([x], topi.broadcast_to(x, (2, 3, 4)), [xv])[0]
    np.testing.assert_array_equal(out, np.broadcast_to(xv, (2, 3, 4)))
