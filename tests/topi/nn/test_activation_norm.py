"""topi.nn activations, softmax and normalizations."""

import numpy as np

from graphc import te, topi

N = te.var("n", "int64")


def test_softmax_rows_sum_to_one(te_run):
    x = te.placeholder((N, 4), "float32", name="x")
    a = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    out = te_run([x], topi.nn.softmax(x), [a], {N: 3})[0]
    np.testing.assert_allclose(out.sum(axis=1), np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(np.exp(te_run([x], topi.nn.log_softmax(x), [a], {N: 3})[0]), out, rtol=1e-5)


def test_softmax_computes_each_exp_once(te_run):
    x = te.placeholder((2, 5, 3), "float32", name="x")
    out = topi.nn.softmax(x, axis=1)
    assert sorted(t.name for t in out.op.input_tensors) == ["T_softmax_exp", "T_softmax_expsum"]
    expsum = next(t for t in out.op.input_tensors if t.name == "T_softmax_expsum")
    assert [t.name for t in expsum.op.input_tensors] == ["T_softmax_exp"]  # the sum reads the same exps
    a = np.random.default_rng(1).normal(size=(2, 5, 3)).astype("float32")
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(te_run([x], out, [a])[0], e / e.sum(axis=1, keepdims=True), rtol=1e-6)


def test_relu_family(te_run):
    x = te.placeholder((5,), "float32", name="x")
    a = np.array([-2, -0.5, 0, 0.5, 2], dtype="float32")
    np.testing.assert_array_equal(te_run([x], topi.nn.relu(x), [a])[0], np.maximum(a, 0))
    np.testing.assert_allclose(te_run([x], topi.nn.leaky_relu(x, 0.2), [a])[0], np.where(a > 0, a, 0.2 * a))
    np.testing.assert_allclose(te_run([x], topi.nn.silu(x), [a])[0], a / (1 + np.exp(-a)), rtol=1e-6)


def test_layer_norm_over_last_axis(te_run):
    x = te.placeholder((N, 4), "float32", name="x")
    g, b = te.placeholder((4,), "float32", name="g"), te.placeholder((4,), "float32", name="b")
    a = np.random.default_rng(1).normal(size=(3, 4)).astype("float32")
    gv, bv = np.full(4, 2.0, "float32"), np.full(4, 0.5, "float32")
    out = te_run([x, g, b], topi.nn.layer_norm(x, g, b, [-1], 1e-5), [a, gv, bv], {N: 3})[0]
    ref = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5) * 2 + 0.5
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
