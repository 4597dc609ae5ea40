"""relax.nn.pad and relax.nn.pixel_shuffle: struct info, errors, script round trip, and
legalized numerics against numpy's pad and PyTorch's F.pad / F.pixel_shuffle."""

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


def _sinfo(call):
    return R.BlockBuilder().normalize(call).struct_info


def _x(shape, seed=1, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_struct_info_and_attrs():
    x = R.Var("x", t(N, 3, 4))
    assert repr(_sinfo(R.op.nn.pad(x, [1, 2, 0, 0, 3, 0]))) == 'R.Tensor((n + 3, 3, 7), dtype="float32")'
    call = R.op.nn.pad(x, [(1, 2), (0, 0), (3, 0)], "edge", 2)
    assert call.attrs == {"pad_width": (1, 2, 0, 0, 3, 0), "pad_mode": "edge", "pad_value": 2.0}
    assert repr(_sinfo(R.op.nn.pixel_shuffle(R.Var("y", t(N, 2, 18, 2, 3)), 3))) == \
        'R.Tensor((n, 2, 2, 6, 9), dtype="float32")'
    c = tir.Var("c", "int64")
    assert repr(_sinfo(R.op.nn.pixel_shuffle(R.Var("z", t(c * 4, 2, 3)), 2))) == \
        'R.Tensor((c, 4, 6), dtype="float32")'
    unknown = R.Var("u", R.TensorStructInfo(ndim=-1, dtype="int8"))
    assert _sinfo(R.op.nn.pad(unknown, [1, 1])) is unknown.struct_info
    for name in ("pad", "pixel_shuffle"):
        assert R.op.Op.get(f"relax.nn.{name}").pattern == R.op.OpPatternKind.kInjective


ERRORS = [
    (lambda x: R.op.nn.pad(x, [1, 1]),
     r"'nn.pad' expects pad_width to have 2 \* ndim = 4 entries \(before, after for each axis\) for data "
     r"R.Tensor\(\(3, 4\), dtype=\"float32\"\), got 2: \[1, 1\]"),
    (lambda x: R.op.nn.pad(x, [1, 1, 0, -1]),
     r"'nn.pad' expects non-negative pad_width, got \[1, 1, 0, -1\]"),
    (lambda x: R.op.nn.pad(x, [1, 1, 0, 0], "mirror"),
     r"'nn.pad' expects pad_mode to be one of \['constant', 'reflect', 'edge', 'replicate', 'circular'\], "
     r"got 'mirror'"),
    (lambda x: R.op.nn.pad(x, [3, 0, 0, 0], "reflect"),
     r"'nn.pad' with pad_mode 'reflect' expects each pad width smaller than the axis length, got 3, 0 on "
     r"axis 0"),
    (lambda x: R.op.nn.pad(x, [0, 0, 0, 5], "circular"),
     r"'nn.pad' with pad_mode 'circular' expects each pad width at most the axis length, got 0, 5 on axis 1"),
    (lambda x: R.op.nn.pixel_shuffle(x, 2),
     r"'nn.pixel_shuffle' expects data to have at least 3 dimensions \(..., channels, height, width\), "
     r"got R.Tensor\(\(3, 4\)"),
    (lambda x: R.op.nn.pixel_shuffle(R.Var("y", t(1, 6, 2, 2)), 2),
     r"'nn.pixel_shuffle' expects data's channels \(axis -3\) to be a multiple of upscale_factor \*\* 2 = 4, "
     r"got R.Tensor\(\(1, 6, 2, 2\)"),
    (lambda x: R.op.nn.pixel_shuffle(R.Var("y", t(1, 6, 2, 2)), 0),
     r"'nn.pixel_shuffle' expects upscale_factor to be a positive int, got 0"),
    (lambda x: R.op.nn.pad(R.Var("tup", R.TupleStructInfo([])), [1, 1]),
     r"'nn.pad' expects argument data to be a tensor \(R.Tensor\), got R.Tuple\(\)"),
]


@pytest.mark.parametrize("make,message", ERRORS)
def test_errors(make, message):
    with pytest.raises(TypeInferenceError, match=message):
        _sinfo(make(R.Var("x", t(3, 4))))


def test_script_round_trip():
    x = R.Var("x", t(N, 8, 2, 3))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(R.op.nn.pad(x, [0, 0, 0, 0, 1, 1, 2, 0], "reflect"))
            gv = bb.emit_output(R.op.nn.pixel_shuffle(lv, 2))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = mod.script()
    assert 'R.nn.pad(x, pad_width=[0, 0, 0, 0, 1, 1, 2, 0], pad_mode="reflect", pad_value=0.0)' in text
    assert "R.nn.pixel_shuffle(lv, upscale_factor=2)" in text
    parsed = from_source(text)
    assert structural_equal(parsed["main"], mod["main"]) and parsed.script() == text


PAD_CASES = [  # (pad_mode, numpy mode, widths per axis)
    ("constant", "constant", [(0, 1), (2, 0), (1, 3)]),
    ("reflect", "reflect", [(1, 1), (0, 0), (3, 2)]),
    ("edge", "edge", [(2, 1), (1, 0), (0, 4)]),
    ("replicate", "edge", [(0, 0), (2, 2), (1, 1)]),
    ("circular", "wrap", [(1, 2), (3, 3), (4, 0)]),
]
SHAPES = [((2, 3, 4), (2, 3, 4)), ((N, 3, 4), (3, 3, 4))]


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("mode,np_mode,widths", PAD_CASES)
def test_pad_numerics(legalize_run, shape, run_shape, mode, np_mode, widths):
    x = _x(run_shape)
    flat = [w for pair in widths for w in pair]
    out = legalize_run(lambda a: R.op.nn.pad(a, flat, mode, 1.5), [t(*shape)], [x], "pad")[0]
    kwargs = {"constant_values": 1.5} if mode == "constant" else {}
    np.testing.assert_array_equal(out, np.pad(x, widths, np_mode, **kwargs))


def test_pad_matches_torch_and_integer_data(legalize_run):
    x = _x((1, 2, 3, 5))
    out = legalize_run(lambda a: R.op.nn.pad(a, [0, 0, 0, 0, 1, 2, 2, 1], "reflect"), [t(1, 2, 3, 5)], [x],
                       "pad")[0]
    np.testing.assert_array_equal(out, F.pad(torch.from_numpy(x), (2, 1, 1, 2), mode="reflect").numpy())
    i = np.arange(6, dtype="int32").reshape(2, 3)
    out = legalize_run(lambda a: R.op.nn.pad(a, [1, 0, 0, 2], pad_value=-7), [t(2, 3, dtype="int32")], [i],
                       "pad")[0]
    np.testing.assert_array_equal(out, np.pad(i, [(1, 0), (0, 2)], constant_values=-7))


SHUFFLES = [((1, 8, 3, 5), (1, 8, 3, 5), 2), ((N, 9, 2, 2), (2, 9, 2, 2), 3),
            ((2, 3, 4, 2, 3), (2, 3, 4, 2, 3), 2), ((4, 2, 3), (4, 2, 3), 1)]


@pytest.mark.parametrize("shape,run_shape,r", SHUFFLES)
def test_pixel_shuffle_numerics(legalize_run, shape, run_shape, r):
    x = _x(run_shape)
    out = legalize_run(lambda a: R.op.nn.pixel_shuffle(a, r), [t(*shape)], [x], "pixel_shuffle")[0]
    np.testing.assert_array_equal(out, F.pixel_shuffle(torch.from_numpy(x), r).numpy())
