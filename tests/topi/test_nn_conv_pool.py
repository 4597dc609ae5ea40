"""topi.nn convolution and pooling computes: layouts, symbolic spatial sizes, integer data."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphc import te, topi
from graphc.errors import TIRError
from graphc.topi.nn.conv import layout_perm

RNG = np.random.default_rng(0)
H = te.var("h", "int64")


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def test_layout_helpers():
    assert layout_perm("NCHW", "NCHW") == [0, 1, 2, 3]
    assert layout_perm("HWIO", "OIHW") == [3, 2, 0, 1]
    with pytest.raises(TIRError, match="layout 'NCHW4c' is not a permutation of 'NCHW'"):
        layout_perm("NCHW4c", "NCHW")
    x = te.placeholder((1, 2, 5, 5), "float32", name="x")
    with pytest.raises(TIRError, match=r"padding needs 1, 2 or 4 values, got \[1, 2, 3\]"):
        topi.nn.pool2d(x, "max", 2, padding=(1, 2, 3))
    with pytest.raises(TIRError, match="pool_type must be 'max' or 'avg', got 'min'"):
        topi.nn.pool2d(x, "min", 2)


def test_conv2d_symbolic_height_and_output_layout(te_run):
    x = te.placeholder((2, 3, H, 6), "float32", name="x")
    w = te.placeholder((4, 3, 3, 2), "float32", name="w")
    y = topi.nn.conv2d(x, w, strides=(2, 1), padding=1, out_layout="NHWC")
    assert [int(d) for d in y.shape[2:]] == [7, 4] and str(y.shape[1]) == str((H - 1) // 2 + 1)
    xv, wv = _rand(2, 3, 7, 6), _rand(4, 3, 3, 2)
    out = te_run([x, w], y, [xv, wv], {H: 7})[0]
    ref = F.conv2d(torch.from_numpy(xv), torch.from_numpy(wv), stride=(2, 1), padding=1).permute(0, 2, 3, 1)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_conv3d_ndhwc(te_run):
    xv, wv = _rand(1, 3, 4, 3, 4), _rand(2, 2, 2, 2, 4)  # NDHWC data, DHWIO weight (groups=2)
    x = te.placeholder(xv.shape, "float32", name="x")
    w = te.placeholder(wv.shape, "float32", name="w")
    y = topi.nn.conv3d(x, w, padding=(0, 1, 1, 1, 0, 0), groups=2, data_layout="NDHWC", kernel_layout="DHWIO")
    out = te_run([x, w], y, [xv, wv])[0]
    tx = F.pad(torch.from_numpy(xv).permute(0, 4, 1, 2, 3), (1, 0, 1, 0, 0, 1))
    ref = F.conv3d(tx, torch.from_numpy(wv).permute(4, 3, 0, 1, 2), groups=2).permute(0, 2, 3, 4, 1)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_int_max_pool_pads_with_the_lowest_value(te_run):
    xv = RNG.integers(-100, -1, (1, 2, 5, 5)).astype("int32")
    x = te.placeholder(xv.shape, "int32", name="x")
    out = te_run([x], topi.nn.pool2d(x, "max", 3, strides=2, padding=1), [xv])[0]
    ref = F.max_pool2d(torch.from_numpy(xv.astype("float64")), 3, 2, 1).numpy()
    np.testing.assert_array_equal(out, ref.astype("int32"))


def test_pool_symbolic_and_output_layout(te_run):
    x = te.placeholder((1, 2, H, 6), "float32", name="x")
    y = topi.nn.pool2d(x, "avg", 2, strides=2, ceil_mode=True, out_layout="NHWC")
    xv = _rand(1, 2, 5, 6)
    out = te_run([x], y, [xv], {H: 5})[0]
    ref = F.avg_pool2d(torch.from_numpy(xv), 2, 2, ceil_mode=True).permute(0, 2, 3, 1).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_adaptive_max_pool(te_run):
    x = te.placeholder((1, 2, 7, 5), "float32", name="x")
    xv = _rand(1, 2, 7, 5)
    out = te_run([x], topi.nn.adaptive_pool2d(x, "max", (3, 4)), [xv])[0]
    np.testing.assert_array_equal(out, F.adaptive_max_pool2d(torch.from_numpy(xv), (3, 4)).numpy())
