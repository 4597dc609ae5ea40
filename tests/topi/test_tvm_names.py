"""The topi and TE spellings TVM code uses: topi.nn.dense, topi.left_shift, pool2d(kernel=...),
te.Tensor arithmetic."""

import numpy as np

from graphc import te, topi


def test_dense_with_and_without_bias(te_run):
    x = te.placeholder((3, 4), "float32", name="x")
    w = te.placeholder((5, 4), "float32", name="w")
    b = te.placeholder((5,), "float32", name="b")
    xv, wv, bv = (np.random.default_rng(i).standard_normal(s).astype("float32")
                  for i, s in enumerate(((3, 4), (5, 4), (5,))))
    out = te_run([x, w, b], topi.nn.dense(x, w, b), [xv, wv, bv])[0]
    np.testing.assert_allclose(out, xv @ wv.T + bv, rtol=1e-5, atol=1e-6)
    out = te_run([x, w], topi.nn.dense(x, w), [xv, wv])[0]
    np.testing.assert_allclose(out, xv @ wv.T, rtol=1e-5, atol=1e-6)


def test_shifts(te_run):
    a = te.placeholder((4,), "int32", name="a")
    s = te.placeholder((4,), "int32", name="s")
    av, sv = np.array([1, -16, 7, 3], "int32"), np.array([0, 2, 1, 3], "int32")
    assert np.array_equal(te_run([a, s], topi.left_shift(a, s), [av, sv])[0], av << sv)
    assert np.array_equal(te_run([a, s], topi.right_shift(a, s), [av, sv])[0], av >> sv)


def test_pool2d_in_tvm_and_graphc_spellings(te_run):
    x = te.placeholder((1, 2, 5, 5), "float32", name="x")
    xv = np.arange(50, dtype="float32").reshape(1, 2, 5, 5)
    tvm_form = topi.nn.pool2d(x, kernel=(2, 2), stride=(2, 2), dilation=(1, 1), padding=(0, 0, 1, 1),
                              pool_type="max", ceil_mode=False, layout="NCHW")
    positional = topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 1, 1), "max")
    graphc_form = topi.nn.pool2d(x, "max", 2, strides=2, padding=(0, 0, 1, 1))
    outs = [te_run([x], t, [xv])[0] for t in (tvm_form, positional, graphc_form)]
    padded = np.pad(xv, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=-np.inf)
    ref = padded.reshape(1, 2, 3, 2, 3, 2).max(axis=(3, 5))
    for out in outs:
        np.testing.assert_array_equal(out, ref)
    # TVM counts the padding in an average by default; graphc's own spelling does not
    avg = te_run([x], topi.nn.pool2d(x, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), "avg"), [xv])[0]
    np.testing.assert_allclose(avg[0, 0, 0, 0], xv[0, 0, :2, :2].sum() / 9, rtol=1e-6)


def test_te_tensor_arithmetic_builds_broadcast_computes(te_run):
    a = te.placeholder((2, 3), "float32", name="a")
    b = te.placeholder((3,), "float32", name="b")
    c = -(a + b) * 2.0 - 1 / a
    av = np.arange(1, 7, dtype="float32").reshape(2, 3)
    bv = np.array([1, 2, 3], "float32")
    np.testing.assert_allclose(te_run([a, b], c, [av, bv])[0], -(av + bv) * 2 - 1 / av, rtol=1e-6)


def test_upsampling_nearest_and_bilinear(te_run):
    x = te.placeholder((1, 1, 2, 3), "float32", name="x")
    xv = np.arange(6, dtype="float32").reshape(1, 1, 2, 3)
    out = te_run([x], topi.nn.upsampling(x, 2.0, 2.0), [xv])[0]
    np.testing.assert_array_equal(out, xv.repeat(2, axis=2).repeat(2, axis=3))
    out = te_run([x], topi.nn.upsampling(x, 2.0, 1.0, method="bilinear", align_corners=True), [xv])[0]
    np.testing.assert_allclose(out[0, 0, :, 0], [0, 1, 2, 3], rtol=1e-6)
