"""max/avg pools and adaptive average pools: struct info, errors, legalized numerics against torch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir.structural import structural_equal
from graphc.script import from_source

R = relax
N = tir.Var("n", "int64")
RNG = np.random.default_rng(0)


def _sinfo(shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


POOL_CASES = [  # (nd, data shape, kwargs shared by relax and torch)
    (1, (2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
    (1, (1, 2, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 3, 7, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (1, 2, 6, 7), dict(kernel_size=2, stride=2)),
    (2, (1, 2, 7, 6), dict(kernel_size=(2, 3), stride=(3, 2), padding=(1, 1), ceil_mode=True)),
    (2, (1, 2, 5, 5), dict(kernel_size=3, stride=1, padding=1)),
    (3, (1, 2, 4, 5, 4), dict(kernel_size=2, stride=(1, 2, 2), padding=(0, 1, 1), ceil_mode=True)),
]


def _relax_kwargs(kwargs):
    names = {"kernel_size": "pool_size", "stride": "strides"}
    return {names.get(k, k): v for k, v in kwargs.items()}


@pytest.mark.parametrize("nd,shape,kwargs", POOL_CASES)
def test_max_pool_numerics(legalize_run, nd, shape, kwargs):
    x = _rand(*shape)
    build = getattr(R.op.nn, f"max_pool{nd}d")
    out = legalize_run(lambda a: build(a, **_relax_kwargs(kwargs)), [_sinfo(shape)], [x], f"max_pool{nd}d")[0]
    ref = getattr(F, f"max_pool{nd}d")(torch.from_numpy(x), **kwargs).numpy()
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("nd,shape,kwargs", POOL_CASES)
def test_avg_pool_numerics(legalize_run, nd, shape, kwargs, count_include_pad):
    x = _rand(*shape)
    build = getattr(R.op.nn, f"avg_pool{nd}d")
    rkwargs = dict(_relax_kwargs(kwargs), count_include_pad=count_include_pad)
    out = legalize_run(lambda a: build(a, **rkwargs), [_sinfo(shape)], [x], f"avg_pool{nd}d")[0]
    ref = getattr(F, f"avg_pool{nd}d")(torch.from_numpy(x), count_include_pad=count_include_pad, **kwargs)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-6, atol=1e-6)


def test_max_pool2d_dilation_and_symbolic_batch(legalize_run):
    x = _rand(3, 2, 9, 8)
    def call(a):
        return R.op.nn.max_pool2d(a, 3, strides=2, padding=1, dilation=(2, 1), ceil_mode=True)

    out = legalize_run(call, [_sinfo((N, 2, 9, 8))], [x])[0]
    ref = F.max_pool2d(torch.from_numpy(x), 3, 2, 1, dilation=(2, 1), ceil_mode=True).numpy()
    np.testing.assert_array_equal(out, ref)


def test_pools_with_symbolic_spatial_sizes_and_ceil_mode(legalize_run):
    h, w = tir.Var("h", "int64"), tir.Var("w", "int64")
    x = _rand(2, 2, 7, 6)

    def call(a):
        return R.op.nn.avg_pool2d(a, 3, strides=2, padding=1, ceil_mode=True, count_include_pad=True)

    out = legalize_run(call, [_sinfo((N, 2, h, w))], [x])[0]
    ref = F.avg_pool2d(torch.from_numpy(x), 3, 2, 1, ceil_mode=True, count_include_pad=True).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    out = legalize_run(lambda a: R.op.nn.max_pool2d(a, 2, strides=2, ceil_mode=True), [_sinfo((1, 2, h, w))],
                       [x[:1]])[0]
    np.testing.assert_array_equal(out, F.max_pool2d(torch.from_numpy(x[:1]), 2, 2, ceil_mode=True).numpy())


def test_avg_pool2d_symbolic_batch_and_nhwc(legalize_run):
    x = _rand(2, 7, 6, 3)  # NHWC
    out = legalize_run(lambda a: R.op.nn.avg_pool2d(a, 3, strides=2, padding=1, layout="NHWC"),
                       [_sinfo((N, 7, 6, 3))], [x])[0]
    ref = F.avg_pool2d(torch.from_numpy(x).permute(0, 3, 1, 2), 3, 2, 1, count_include_pad=False)
    np.testing.assert_allclose(out, ref.permute(0, 2, 3, 1).numpy(), rtol=1e-6, atol=1e-6)


ADAPTIVE_CASES = [  # (nd, data shape, output_size)
    (1, (2, 3, 10), 4),
    (1, (1, 2, 5), None),
    (2, (2, 3, 7, 8), (3, 5)),
    (2, (1, 2, 6, 6), 1),
    (2, (1, 2, 5, 7), (4, None)),
    (2, (1, 2, 3, 4), (5, 6)),  # larger than the input: overlapping windows
]


@pytest.mark.parametrize("nd,shape,output_size", ADAPTIVE_CASES)
def test_adaptive_avg_pool_numerics(legalize_run, nd, shape, output_size):
    x = _rand(*shape)
    build = getattr(R.op.nn, f"adaptive_avg_pool{nd}d")
    out = legalize_run(lambda a: build(a, output_size), [_sinfo(shape)], [x], f"adaptive_avg_pool{nd}d")[0]
    torch_size = shape[2:] if output_size is None else output_size
    ref = getattr(F, f"adaptive_avg_pool{nd}d")(torch.from_numpy(x), torch_size).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_adaptive_avg_pool2d_symbolic(legalize_run):
    h = tir.Var("h", "int64")
    x = _rand(2, 3, 7, 5)
    out = legalize_run(lambda a: R.op.nn.adaptive_avg_pool2d(a, (3, 2)), [_sinfo((N, 3, h, 5))], [x])[0]
    ref = F.adaptive_avg_pool2d(torch.from_numpy(x), (3, 2)).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def _infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


def test_struct_info():
    h = tir.Var("h", "int64")
    x = R.Var("x", _sinfo((N, 16, 32, 32)))
    assert _infer(R.op.nn.max_pool2d(x, 2, strides=2)) == 'R.Tensor((n, 16, 16, 16), dtype="float32")'
    assert _infer(R.op.nn.avg_pool2d(x, 3, strides=2, padding=1)) == \
        'R.Tensor((n, 16, 16, 16), dtype="float32")'
    assert _infer(R.op.nn.max_pool2d(x, 3, strides=2, ceil_mode=True)) == \
        'R.Tensor((n, 16, 16, 16), dtype="float32")'
    assert _infer(R.op.nn.max_pool2d(x, 3, strides=2)) == 'R.Tensor((n, 16, 15, 15), dtype="float32")'
    xh = R.Var("xh", _sinfo((N, 16, h, 32), "float16"))
    assert _infer(R.op.nn.max_pool2d(xh, 2, strides=2)) == 'R.Tensor((n, 16, h // 2, 16), dtype="float16")'
    assert _infer(R.op.nn.max_pool2d(xh, 3, strides=2)) == \
        'R.Tensor((n, 16, (h - 3) // 2 + 1, 15), dtype="float16")'
    assert _infer(R.op.nn.max_pool2d(xh, 3, padding=1)) == 'R.Tensor((n, 16, h, 32), dtype="float16")'
    nhwc = R.Var("nhwc", _sinfo((N, 32, 32, 16)))
    assert _infer(R.op.nn.max_pool2d(nhwc, 2, strides=2, layout="NHWC")) == \
        'R.Tensor((n, 16, 16, 16), dtype="float32")'
    assert _infer(R.op.nn.max_pool2d(nhwc, 2, strides=(2, 1), layout="NHWC", out_layout="NCHW")) == \
        'R.Tensor((n, 16, 16, 31), dtype="float32")'
    assert _infer(R.op.nn.max_pool1d(R.Var("a", _sinfo((2, 3, 10))), 3, dilation=2)) == \
        'R.Tensor((2, 3, 6), dtype="float32")'
    assert _infer(R.op.nn.avg_pool3d(R.Var("a", _sinfo((1, 2, 4, 6, 8))), 2, strides=2)) == \
        'R.Tensor((1, 2, 2, 3, 4), dtype="float32")'
    assert _infer(R.op.nn.adaptive_avg_pool2d(xh, (1, None))) == 'R.Tensor((n, 16, 1, 32), dtype="float16")'
    assert _infer(R.op.nn.adaptive_avg_pool2d(xh)) == 'R.Tensor((n, 16, h, 32), dtype="float16")'
    assert _infer(R.op.nn.adaptive_avg_pool1d(R.Var("a", _sinfo((2, 3, 10))), 4)) == \
        'R.Tensor((2, 3, 4), dtype="float32")'
    unknown = R.Var("u", R.TensorStructInfo(ndim=4, dtype="float32"))
    assert _infer(R.op.nn.max_pool2d(unknown, 2)) == 'R.Tensor(dtype="float32", ndim=4)'
    assert _infer(R.op.nn.adaptive_avg_pool2d(unknown, 2)) == 'R.Tensor(dtype="float32", ndim=4)'


def test_attrs_and_patterns():
    x = R.Var("x", _sinfo((1, 3, 8, 8)))
    assert dict(R.op.nn.max_pool2d(x, 3, strides=2, padding=(1, 0)).attrs) == {
        "pool_size": (3, 3), "strides": (2, 2), "padding": (1, 0, 1, 0), "dilation": (1, 1),
        "ceil_mode": False, "count_include_pad": False, "layout": "NCHW", "out_layout": "NCHW"}
    assert R.op.nn.adaptive_avg_pool2d(x, 4).attrs["output_size"] == (4, 4)
    assert R.op.nn.adaptive_avg_pool2d(x, (np.int64(2), None)).attrs["output_size"] == (2, None)
    assert R.op.nn.max_pool2d(x, np.int64(2), strides=np.array([2, 1])).attrs["strides"] == (2, 1)
    assert R.op.nn.adaptive_avg_pool2d(x).attrs["output_size"] is None
    for nd in (1, 2, 3):
        for name in (f"max_pool{nd}d", f"avg_pool{nd}d", f"adaptive_avg_pool{nd}d"):
            assert R.Op.get(f"relax.nn.{name}").pattern == R.op.OpPatternKind.kOutEWiseFusable


def _raises(message):
    return pytest.raises(TypeInferenceError, match=message)


def test_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", _sinfo((1, 3, 8, 8)))
    with _raises(r"'nn.max_pool1d' expects data to be a 3-d tensor \(layout NCW\), "
                 r"got R.Tensor\(\(1, 3, 8, 8\), dtype=\"float32\"\)"):
        bb.normalize(R.op.nn.max_pool1d(x, 2))
    with _raises(r"'nn.adaptive_avg_pool3d' expects data to be a 5-d tensor \(layout NCDHW\)"):
        bb.normalize(R.op.nn.adaptive_avg_pool3d(x, 2))
    with _raises(r"'nn.avg_pool2d' expects layout to be a permutation of 'NCHW' \(e.g. 'NCHW' or 'NHWC'\), "
                 r"got 'NCHW16c'"):
        bb.normalize(R.op.nn.avg_pool2d(x, 2, layout="NCHW16c"))
    with _raises(r"'nn.adaptive_avg_pool2d' expects out_layout to be a permutation of 'NCHW'"):
        bb.normalize(R.op.nn.adaptive_avg_pool2d(x, 2, out_layout="NCH"))
    with _raises(r"'nn.max_pool2d' expects pool_size to be 1 or 2 integer\(s\) >= 1, got \[2, 2, 2\]"):
        R.op.nn.max_pool2d(x, (2, 2, 2))
    with _raises(r"'nn.max_pool2d' expects strides to be 1 or 2 integer\(s\) >= 1, got 0"):
        R.op.nn.max_pool2d(x, 2, strides=0)
    with _raises(r"'nn.avg_pool3d' expects padding to be 1, 3 or 6 non-negative integer\(s\)"):
        R.op.nn.avg_pool3d(x, 2, padding=(1, 1))
    with _raises(r"'nn.max_pool2d' gives output size -1 along spatial axis 0: pool_size \[10, 10\] "
                 r"does not fit data R.Tensor\(\(1, 3, 8, 8\)"):
        bb.normalize(R.op.nn.max_pool2d(x, 10))
    with _raises(r"'nn.adaptive_avg_pool2d' expects output_size to be None or 1 or 2 entries, each a "
                 r"positive integer or None, got \[2, 0\]"):
        R.op.nn.adaptive_avg_pool2d(x, (2, 0))
    with _raises(r"'nn.max_pool2d' expects argument data to be a tensor"):
        bb.normalize(R.op.nn.max_pool2d(R.Var("t", R.TupleStructInfo([])), 2))


def test_print_parse_round_trip():
    x = R.Var("x", _sinfo((N, 4, 8, 8)))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(R.op.nn.max_pool2d(x, 3, strides=2, padding=1, ceil_mode=True))
            lv1 = bb.emit(R.op.nn.avg_pool2d(lv, 2, count_include_pad=True))
            gv = bb.emit_output(R.op.nn.adaptive_avg_pool2d(lv1, (1, None)))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = mod.script()
    assert 'R.nn.adaptive_avg_pool2d(lv1, output_size=[1, None], layout="NCHW", out_layout="NCHW")' in text
    parsed = from_source(text)
    assert structural_equal(parsed["main"], mod["main"])
    assert parsed.script() == text
