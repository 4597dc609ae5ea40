"""conv1d/2d/3d and conv1d/2d/3d_transpose: struct info, errors, legalized numerics against torch."""

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


def _rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _sinfo(shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def _torch_pad(x, padding, nd):
    """Explicit (befores..., afters...) padding applied the way torch's F.pad wants it."""
    pads = []
    for k in reversed(range(nd)):
        pads += [padding[k], padding[nd + k]]
    return F.pad(torch.from_numpy(x), pads)


CONV_CASES = [  # (nd, data shape, weight shape, relax kwargs, torch kwargs, full padding)
    (1, (2, 4, 9), (6, 2, 3), dict(strides=2, padding=1, groups=2), dict(stride=2, groups=2), (1, 1)),
    (1, (1, 3, 8), (2, 3, 2), dict(padding=(2, 0), dilation=3), dict(dilation=3), (2, 0)),
    (2, (2, 3, 7, 6), (5, 3, 3, 3), dict(), dict(), (0, 0, 0, 0)),
    (2, (1, 4, 7, 6), (6, 2, 3, 2), dict(strides=(2, 1), padding=(1, 0, 2, 1), dilation=(1, 2), groups=2),
     dict(stride=(2, 1), dilation=(1, 2), groups=2), (1, 0, 2, 1)),
    (2, (2, 4, 6, 6), (4, 1, 3, 3), dict(padding=1, groups=4), dict(groups=4), (1, 1, 1, 1)),  # depthwise
    (2, (1, 2, 5, 5), (8, 1, 2, 2), dict(strides=2, padding=(1, 0), groups=2), dict(stride=2, groups=2),
     (1, 0, 1, 0)),  # channel multiplier 4
    (3, (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(strides=(1, 2, 1), padding=1, dilation=(2, 1, 1)),
     dict(stride=(1, 2, 1), dilation=(2, 1, 1)), (1,) * 6),
]


@pytest.mark.parametrize("nd,dshape,wshape,kwargs,tkwargs,padding", CONV_CASES)
def test_conv_numerics(legalize_run, nd, dshape, wshape, kwargs, tkwargs, padding):
    x, w = _rand(*dshape), _rand(*wshape)
    build = getattr(R.op.nn, f"conv{nd}d")
    out = legalize_run(lambda a, b: build(a, b, **kwargs), [_sinfo(dshape), _sinfo(wshape)], [x, w],
                       f"conv{nd}d")[0]
    conv = getattr(F, f"conv{nd}d")
    ref = conv(_torch_pad(x, padding, nd), torch.from_numpy(w), **tkwargs).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_symbolic_batch_numerics(legalize_run):
    x, w = _rand(3, 4, 6, 5), _rand(6, 2, 3, 3)
    sinfos = [_sinfo((N, 4, 6, 5)), _sinfo((6, 2, 3, 3))]
    out = legalize_run(lambda a, b: R.op.nn.conv2d(a, b, strides=2, padding=1, groups=2), sinfos, [x, w])[0]
    ref = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=2, padding=1, groups=2).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_nhwc_hwio_layouts(legalize_run):
    x, w = _rand(2, 6, 5, 4), _rand(3, 2, 4, 3)  # NHWC data, HWIO weight
    out = legalize_run(
        lambda a, b: R.op.nn.conv2d(a, b, padding=1, data_layout="NHWC", kernel_layout="HWIO"),
        [_sinfo(x.shape), _sinfo(w.shape)], [x, w])[0]
    nchw, oihw = torch.from_numpy(x).permute(0, 3, 1, 2), torch.from_numpy(w).permute(3, 2, 0, 1)
    ref = F.conv2d(nchw, oihw, padding=1)
    np.testing.assert_allclose(out, ref.permute(0, 2, 3, 1).numpy(), rtol=1e-5, atol=1e-5)


def test_conv2d_int8_out_dtype(legalize_run):
    x = RNG.integers(-128, 128, (1, 3, 5, 5)).astype("int8")
    w = RNG.integers(-128, 128, (2, 3, 3, 3)).astype("int8")
    out = legalize_run(lambda a, b: R.op.nn.conv2d(a, b, padding=1, out_dtype="int32"),
                       [_sinfo(x.shape, "int8"), _sinfo(w.shape, "int8")], [x, w])[0]
    ref = F.conv2d(torch.from_numpy(x.astype("float64")), torch.from_numpy(w.astype("float64")), padding=1)
    ref = ref.numpy()
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, ref.astype("int32"))


TRANSPOSE_CASES = [  # (nd, data shape, weight shape, kwargs shared by relax and torch)
    (2, (2, 4, 4, 3), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    (2, (1, 4, 3, 4), (4, 1, 3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                         dilation=(1, 2), groups=2)),
    (2, (1, 2, 3, 3), (2, 3, 2, 2), dict()),
    (1, (2, 3, 5), (3, 2, 3), dict(stride=3, padding=2, output_padding=2, dilation=2)),
    (3, (1, 4, 3, 2, 3), (4, 1, 2, 3, 2), dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0),
                                               groups=2)),
]


@pytest.mark.parametrize("nd,dshape,wshape,kwargs", TRANSPOSE_CASES)
def test_conv_transpose_numerics(legalize_run, nd, dshape, wshape, kwargs):
    x, w = _rand(*dshape), _rand(*wshape)
    rkwargs = {("strides" if k == "stride" else k): v for k, v in kwargs.items()}
    build = getattr(R.op.nn, f"conv{nd}d_transpose")
    out = legalize_run(lambda a, b: build(a, b, **rkwargs), [_sinfo(dshape), _sinfo(wshape)], [x, w],
                       f"conv{nd}d_transpose")[0]
    ref = getattr(F, f"conv_transpose{nd}d")(torch.from_numpy(x), torch.from_numpy(w), **kwargs).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_transpose_symbolic_batch(legalize_run):
    x, w = _rand(3, 2, 3, 3), _rand(2, 2, 3, 3)
    sinfos = [_sinfo((N, 2, 3, 3)), _sinfo((2, 2, 3, 3))]
    out = legalize_run(lambda a, b: R.op.nn.conv2d_transpose(a, b, strides=2, padding=1), sinfos, [x, w])[0]
    ref = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=2, padding=1).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def _infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


def test_struct_info():
    h = tir.Var("h", "int64")
    x = R.Var("x", _sinfo((N, 3, 32, 32)))
    w = R.Var("w", _sinfo((16, 3, 3, 3)))
    assert _infer(R.op.nn.conv2d(x, w)) == 'R.Tensor((n, 16, 30, 30), dtype="float32")'
    assert _infer(R.op.nn.conv2d(x, w, strides=2, padding=1)) == 'R.Tensor((n, 16, 16, 16), dtype="float32")'
    assert _infer(R.op.nn.conv2d(x, w, out_dtype="float16")) == 'R.Tensor((n, 16, 30, 30), dtype="float16")'
    xh = R.Var("xh", _sinfo((N, 3, h, 32)))
    assert _infer(R.op.nn.conv2d(xh, w, padding=1)) == 'R.Tensor((n, 16, h, 32), dtype="float32")'
    assert _infer(R.op.nn.conv2d(xh, w, strides=2)) == \
        'R.Tensor((n, 16, (h - 3) // 2 + 1, 15), dtype="float32")'
    nhwc = R.Var("nhwc", _sinfo((N, 32, 32, 3)))
    hwio = R.Var("hwio", _sinfo((3, 3, 3, 16)))
    call = R.op.nn.conv2d(nhwc, hwio, data_layout="NHWC", kernel_layout="HWIO")
    assert _infer(call) == 'R.Tensor((n, 30, 30, 16), dtype="float32")'
    call = R.op.nn.conv2d(nhwc, hwio, data_layout="NHWC", kernel_layout="HWIO", out_layout="NCHW")
    assert _infer(call) == 'R.Tensor((n, 16, 30, 30), dtype="float32")'
    assert _infer(R.op.nn.conv1d(R.Var("a", _sinfo((2, 4, 10))), R.Var("b", _sinfo((8, 2, 3))), groups=2,
                                 dilation=2)) == 'R.Tensor((2, 8, 6), dtype="float32")'
    assert _infer(R.op.nn.conv3d(R.Var("a", _sinfo((1, 2, 5, 6, 7))), R.Var("b", _sinfo((4, 2, 3, 3, 3))),
                                 padding=(1, 0, 0))) == 'R.Tensor((1, 4, 5, 4, 5), dtype="float32")'
    wt = R.Var("wt", _sinfo((3, 4, 3, 3)))
    assert _infer(R.op.nn.conv2d_transpose(x, wt, strides=2, padding=1, output_padding=1)) == \
        'R.Tensor((n, 4, 64, 64), dtype="float32")'
    assert _infer(R.op.nn.conv2d_transpose(x, R.Var("g", _sinfo((3, 2, 3, 3))), groups=3)) == \
        'R.Tensor((n, 6, 34, 34), dtype="float32")'
    assert _infer(R.op.nn.conv1d_transpose(R.Var("a", _sinfo((1, 2, 5))), R.Var("b", _sinfo((2, 3, 4))),
                                           strides=2)) == 'R.Tensor((1, 3, 12), dtype="float32")'


def test_struct_info_unknown_shape_and_dtype():
    w = R.Var("w", _sinfo((16, 3, 3, 3)))
    x = R.Var("x", R.TensorStructInfo(ndim=4, dtype="float32"))
    assert _infer(R.op.nn.conv2d(x, w)) == 'R.Tensor(dtype="float32", ndim=4)'
    y = R.Var("y", R.TensorStructInfo(ndim=-1, dtype=""))
    assert _infer(R.op.nn.conv2d(y, w)) == "R.Tensor(ndim=4)"


def test_attrs_are_complete():
    x, w = R.Var("x", _sinfo((1, 3, 8, 8))), R.Var("w", _sinfo((4, 3, 3, 3)))
    attrs = R.op.nn.conv2d(x, w, strides=2, padding=(1, 2), dilation=1).attrs
    assert dict(attrs) == {"strides": (2, 2), "padding": (1, 2, 1, 2), "dilation": (1, 1), "groups": 1,
                           "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW",
                           "out_dtype": "void"}
    assert R.op.nn.conv3d(x, w, padding=(1, 2, 3)).attrs["padding"] == (1, 2, 3, 1, 2, 3)
    numpy_ints = R.op.nn.conv2d(x, w, strides=np.int64(2), padding=np.array([1, 0]), groups=np.int32(1)).attrs
    assert (numpy_ints["strides"], numpy_ints["padding"], numpy_ints["groups"]) == ((2, 2), (1, 0, 1, 0), 1)
    assert type(numpy_ints["groups"]) is int and all(type(v) is int for v in numpy_ints["padding"])
    assert R.op.nn.conv2d_transpose(x, w, output_padding=1).attrs["output_padding"] == (1, 1)
    assert R.op.nn.conv3d_transpose(x, w, padding=1).attrs["padding"] == (1,) * 6
    for name in ("conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose", "conv3d_transpose"):
        assert R.Op.get(f"relax.nn.{name}").pattern == R.op.OpPatternKind.kOutEWiseFusable


ERRORS = [  # (data shape, weight shape, kwargs, message)
    ((1, 3, 8), (4, 3, 3, 3), {}, r"'nn.conv2d' expects data to be a 4-d tensor \(layout NCHW\), "
                                  r"got R.Tensor\(\(1, 3, 8\), dtype=\"float32\"\)"),
    ((1, 3, 8, 8), (4, 3, 3), {},
     r"expects weight to be a 4-d tensor \(layout OIHW\), got R.Tensor\(\(4, 3, 3\)"),
    ((1, 3, 8, 8), (4, 2, 3, 3), {}, r"'nn.conv2d' expects data's channels \(3\) to equal weight's input "
                                     r"channels \(2\) times groups \(1\): data is R.Tensor\(\(1, 3, 8, 8\)"),
    ((1, 4, 8, 8), (6, 1, 3, 3), dict(groups=4), r"expects weight's output channels \(6\) to be divisible by "
                                                 r"groups \(4\): weight is R.Tensor\(\(6, 1, 3, 3\)"),
    ((1, 3, 8, 8), (4, 3, 3, 3), dict(groups=0), r"expects groups to be a positive integer, got 0"),
    ((1, 3, 8, 8), (4, 3, 3, 3), dict(data_layout="NCHW4c"),
     r"expects data_layout to be a permutation of 'NCHW' \(e.g. 'NCHW' or 'NHWC'\), got 'NCHW4c'"),
    ((1, 3, 8, 8), (4, 3, 3, 3), dict(kernel_layout="OIHH"),
     r"expects kernel_layout to be a permutation of 'OIHW'"),
    ((1, 3, 8, 8), (4, 3, 3, 3), dict(out_layout="NCW"), r"expects out_layout to be a permutation of 'NCHW'"),
    ((1, 3, 2, 2), (4, 3, 3, 3), {}, r"'nn.conv2d' gives output size 0 along spatial axis 0: data is "),
]


@pytest.mark.parametrize("dshape,wshape,kwargs,message", ERRORS)
def test_conv2d_errors(dshape, wshape, kwargs, message):
    x, w = R.Var("x", _sinfo(dshape)), R.Var("w", _sinfo(wshape))
    with pytest.raises(TypeInferenceError, match=message):
        R.BlockBuilder().normalize(R.op.nn.conv2d(x, w, **kwargs))


def _raises(message):
    return pytest.raises(TypeInferenceError, match=message)


def test_dtype_and_attribute_errors():
    x, w = R.Var("x", _sinfo((1, 3, 8, 8))), R.Var("w", _sinfo((4, 3, 3, 3), "float16"))
    with _raises(r"'nn.conv2d' expects equal dtypes, got float32 and float16: "
                 r"data is R.Tensor\(\(1, 3, 8, 8\), dtype=\"float32\"\), "
                 r"weight is R.Tensor\(\(4, 3, 3, 3\), dtype=\"float16\"\)"):
        R.BlockBuilder().normalize(R.op.nn.conv2d(x, w))
    # an explicit out_dtype accumulates both operands in that dtype (TVM's rule)
    assert _infer(R.op.nn.conv2d(x, w, out_dtype="float32")) == 'R.Tensor((1, 4, 6, 6), dtype="float32")'
    with _raises(r"'nn.conv2d' expects padding to be 1, 2 or 4 non-negative integer\(s\) "
                 r"\(befores then afters\), got \[1, 2, 3\]"):
        R.op.nn.conv2d(x, w, padding=(1, 2, 3))
    with _raises(r"'nn.conv3d' expects strides to be 1 or 3 integer\(s\) >= 1, got \[1, 0, 1\]"):
        R.op.nn.conv3d(x, w, strides=(1, 0, 1))
    with _raises(r"'nn.conv1d' expects dilation to be 1 or 1 integer"):
        R.op.nn.conv1d(x, w, dilation=(1, 1))
    t = R.Var("t", R.TupleStructInfo([]))
    with _raises(r"'nn.conv2d' expects argument weight to be a tensor"):
        R.BlockBuilder().normalize(R.op.nn.conv2d(x, t))


def test_conv_transpose_errors():
    x = R.Var("x", _sinfo((1, 4, 8, 8)))
    bb = R.BlockBuilder()
    with _raises(r"'nn.conv2d_transpose' expects data's channels \(4\) to equal weight's input channels "
                 r"\(3\): data is "):
        bb.normalize(R.op.nn.conv2d_transpose(x, R.Var("w", _sinfo((3, 2, 3, 3)))))
    w = R.Var("w", _sinfo((4, 2, 3, 3)))
    with _raises(r"expects weight's input channels \(4\) to be divisible by groups \(3\)"):
        bb.normalize(R.op.nn.conv2d_transpose(x, w, groups=3))
    with _raises(r"'nn.conv2d_transpose' expects output_padding to be smaller than strides, "
                 r"got output_padding \[1, 1\] with strides \[1, 1\]"):
        bb.normalize(R.op.nn.conv2d_transpose(x, w, output_padding=1))
    with _raises(r"expects kernel_layout to be a permutation of 'IOHW'"):
        bb.normalize(R.op.nn.conv2d_transpose(x, w, kernel_layout="OIHW4o"))


def test_print_parse_round_trip():
    x = R.Var("x", _sinfo((N, 4, 8, 8)))
    w = R.Var("w", _sinfo((8, 2, 3, 3)))
    wt = R.Var("wt", _sinfo((8, 2, 2, 2)))
    bb = R.BlockBuilder()
    with bb.function("main", [x, w, wt]):
        with bb.dataflow():
            lv = bb.emit(R.op.nn.conv2d(x, w, strides=2, padding=(1, 0, 1, 1), groups=2, out_dtype="float32"))
            gv = bb.emit_output(R.op.nn.conv2d_transpose(lv, wt, strides=2, output_padding=1))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = mod.script()
    assert "R.nn.conv2d(x, w, strides=[2, 2], padding=[1, 0, 1, 1], dilation=[1, 1], groups=2, " \
           'data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="float32")' in text
    parsed = from_source(text)
    assert structural_equal(parsed["main"], mod["main"])
    assert parsed.script() == text
