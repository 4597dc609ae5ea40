"""relax.nn.group_norm and relax.nn.instance_norm: struct info, errors, script round trip, and
legalized numerics against PyTorch's F.group_norm / F.instance_norm."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal
from graphc.script import from_source

R = relax
N = tir.Var("n", "int64")


def t(*shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def _x(shape, seed=1):
    # a large mean checks that the variance is computed around the mean
    return (np.random.default_rng(seed).standard_normal(shape) * 2 + 5).astype("float32")


def test_struct_info_and_pattern():
    x, g = R.Var("x", t(N, 6, 4, 4)), R.Var("g", t(6))
    bb = R.BlockBuilder()
    out = bb.normalize(R.op.nn.group_norm(x, g, g, 3, 1, [2, 3])).struct_info
    assert repr(out) == 'R.Tensor((n, 6, 4, 4), dtype="float32")'
    out = bb.normalize(R.op.nn.instance_norm(x, g, g, channel_axis=1, axes=[-2, -1])).struct_info
    assert repr(out) == 'R.Tensor((n, 6, 4, 4), dtype="float32")'
    call = R.op.nn.group_norm(x, g, g, 3, 1, 2, epsilon=1e-3, center=False)
    assert call.attrs == {"num_groups": 3, "channel_axis": 1, "axes": (2,), "epsilon": 1e-3,
                          "center": False, "scale": True}
    for name in ("group_norm", "instance_norm"):
        assert R.op.Op.get(f"relax.nn.{name}").pattern == R.op.OpPatternKind.kOutEWiseFusable
    unknown = R.Var("u", R.TensorStructInfo(ndim=-1, dtype="float32"))
    assert bb.normalize(R.op.nn.instance_norm(unknown, g, g, 1, [2])).struct_info is unknown.struct_info


def _gn(x, g, b, **kw):
    kw = {"num_groups": 3, "channel_axis": 1, "axes": [2, 3], **kw}
    return R.op.nn.group_norm(x, g, b, **kw)


ERRORS = [  # (call builder on x (2, 6, 4, 4), g (6,); message)
    (lambda x, g: _gn(x, g, g, num_groups=4),
     r"'nn.group_norm' expects data's channels \(axis 1\) to be a multiple of num_groups 4, "
     r"got R.Tensor\(\(2, 6"),
    (lambda x, g: _gn(x, g, g, num_groups=0),
     r"'nn.group_norm' expects num_groups to be a positive int, got 0"),
    (lambda x, g: _gn(x, g, g, axes=[1, 2]),
     r"'nn.group_norm' expects axes \[1, 2\] not to include channel_axis 1"),
    (lambda x, g: _gn(x, g, g, axes=[2, -2]), r"'nn.group_norm' expects distinct axes, got \[2, -2\]"),
    (lambda x, g: _gn(x, g, g, channel_axis=4),
     r"'nn.group_norm' expects channel_axis in \[-4, 4\) .* got 4"),
    (lambda x, g: _gn(x, g, g, axes=[5]), r"'nn.group_norm' expects axes in \[-4, 4\) .* got 5"),
    (lambda x, g: _gn(x, R.Var("w", t(4)), g),
     r"'nn.group_norm' expects gamma to have shape \(6,\) \(data's axes \[1\]\), got R.Tensor\(\(4,\)"),
    (lambda x, g: R.op.nn.instance_norm(x, g, R.Var("b", t(6, dtype="float16")), 1, [2, 3]),
     r"'nn.instance_norm' expects beta to have data's dtype float32, "
     r"got R.Tensor\(\(6,\), dtype=\"float16\"\)"),
    (lambda x, g: R.op.nn.instance_norm(R.Var("i", t(2, 6, 4, dtype="int32")), g, g, 1, [2]),
     r"'nn.instance_norm' requires data to have a float dtype, got R.Tensor\(\(2, 6, 4\), dtype=\"int32\"\)"),
    (lambda x, g: R.op.nn.instance_norm(x, R.Var("tup", R.TupleStructInfo([])), g, 1, [2]),
     r"'nn.instance_norm' expects argument gamma to be a tensor \(R.Tensor\), got R.Tuple\(\)"),
]


@pytest.mark.parametrize("make,message", ERRORS)
def test_errors(make, message):
    x, g = R.Var("x", t(2, 6, 4, 4)), R.Var("g", t(6))
    with pytest.raises(TypeInferenceError, match=message):
        R.BlockBuilder().normalize(make(x, g))


def test_symbolic_channels_that_groups_cannot_divide():
    c = tir.Var("c", "int64")
    x, g = R.Var("x", t(2, c * 4 + 2, 3)), R.Var("g", t(c * 4 + 2))
    message = r"to be a multiple of num_groups 4, got R.Tensor\(\(2, c \* 4 \+ 2"
    with pytest.raises(TypeInferenceError, match=message):
        R.BlockBuilder().normalize(R.op.nn.group_norm(x, g, g, 4, 1, [2]))


def test_script_round_trip():
    x, g = R.Var("x", t(N, 6, 5)), R.Var("g", t(6))
    bb = R.BlockBuilder()
    with bb.function("main", [x, g]):
        with bb.dataflow():
            lv = bb.emit(R.op.nn.group_norm(x, g, g, 2, 1, [2], epsilon=1e-3, center=False))
            gv = bb.emit_output(R.op.nn.instance_norm(lv, g, g, 1, [-1], scale=False))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = mod.script()
    assert ('R.nn.group_norm(x, g, g, num_groups=2, channel_axis=1, axes=[2], epsilon=0.001, center=False, '
            'scale=True)') in text
    parsed = from_source(text)
    assert structural_equal(parsed["main"], mod["main"]) and parsed.script() == text


SHAPES = [((2, 6, 3, 4), (2, 6, 3, 4)), ((N, 6, 3, 4), (3, 6, 3, 4))]


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("groups", [1, 2, 6])
@pytest.mark.parametrize("center,scale", [(True, True), (False, True), (True, False)])
def test_group_norm_numerics(legalize_run, shape, run_shape, groups, center, scale):
    x, g, b = _x(run_shape), _x((6,), 2), _x((6,), 3)
    sinfos = [t(*shape), t(6), t(6)]
    out = legalize_run(lambda *a: R.op.nn.group_norm(*a, groups, 1, [2, 3], 1e-5, center, scale), sinfos,
                       [x, g, b], "group_norm")[0]
    ref = F.group_norm(torch.from_numpy(x).double(), groups, torch.from_numpy(g).double() if scale else None,
                       torch.from_numpy(b).double() if center else None, eps=1e-5).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_group_norm_channels_last(legalize_run):
    x, g, b = _x((2, 5, 6)), _x((6,), 2), _x((6,), 3)
    out = legalize_run(lambda *a: R.op.nn.group_norm(*a, 2, -1, [1]), [t(2, 5, 6), t(6), t(6)], [x, g, b],
                       "group_norm")[0]
    ref = F.group_norm(torch.from_numpy(x).permute(0, 2, 1), 2, torch.from_numpy(g), torch.from_numpy(b))
    np.testing.assert_allclose(out, ref.permute(0, 2, 1).numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,run_shape", SHAPES + [((N, 6, 7), (2, 6, 7))])
def test_instance_norm_numerics(legalize_run, shape, run_shape):
    x, g, b = _x(run_shape), _x((6,), 2), _x((6,), 3)
    axes = list(range(2, len(shape)))
    out = legalize_run(lambda *a: R.op.nn.instance_norm(*a, 1, axes, 1e-5), [t(*shape), t(6), t(6)],
                       [x, g, b], "instance_norm")[0]
    ref = F.instance_norm(torch.from_numpy(x).double(), weight=torch.from_numpy(g).double(),
                          bias=torch.from_numpy(b).double(), eps=1e-5).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    out = legalize_run(lambda *a: R.op.nn.instance_norm(*a, 1, axes, 1e-5, center=False, scale=False),
                       [t(*shape), t(6), t(6)], [x, g, b], "instance_norm")[0]
    ref = F.instance_norm(torch.from_numpy(x).double(), eps=1e-5).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_group_norm_over_the_group_channels_only(legalize_run):
    x = _x((2, 4, 3))
    ones, zeros = np.ones(4, "float32"), np.zeros(4, "float32")
    sinfos = [t(2, 4, 3), t(4), t(4)]
    out = legalize_run(lambda *a: R.op.nn.group_norm(*a, 2, 1, []), sinfos, [x, ones, zeros], "group_norm")[0]
    grouped = x.reshape(2, 2, 2, 3).astype("float64")
    mean, var = grouped.mean(axis=2, keepdims=True), grouped.var(axis=2, keepdims=True)
    ref = ((grouped - mean) / np.sqrt(var + 1e-5)).reshape(2, 4, 3)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
