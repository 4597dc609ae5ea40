"""image.resize2d / image.grid_sample: struct info, errors, script round trip, legalized numerics.

Numerics are checked against torch (F.interpolate, F.grid_sample) and, for the modes torch
lacks, against a reference written here from the ONNX Resize specification with exact
rational coordinates.
"""

import math
import re
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal

R = relax
N = tir.Var("n", "int64")


def _rng():
    return np.random.default_rng(0)  # the same data whichever tests run, in whichever order


def _image(shape, dtype="float32"):
    return _rng().standard_normal(shape).astype(dtype)


def _nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def _nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


# ------------------------------------------------------------------------------------------
# resize2d against torch

TORCH_MODES = {  # torch interpolate kwargs -> resize2d attributes
    "nearest": ({"mode": "nearest"}, {"method": "nearest_neighbor",
                                      "coordinate_transformation_mode": "asymmetric",
                                      "rounding_method": "floor"}),
    "nearest-exact": ({"mode": "nearest-exact"}, {"method": "nearest_neighbor",
                                                  "coordinate_transformation_mode": "tf_half_pixel_for_nn",
                                                  "rounding_method": "floor"}),
    "bilinear": ({"mode": "bilinear", "align_corners": False}, {"method": "linear"}),
    "bilinear-corners": ({"mode": "bilinear", "align_corners": True},
                         {"method": "linear", "coordinate_transformation_mode": "align_corners"}),
    "bicubic": ({"mode": "bicubic", "align_corners": False}, {"method": "cubic", "cubic_alpha": -0.75}),
    "bicubic-corners": ({"mode": "bicubic", "align_corners": True},
                        {"method": "cubic", "cubic_alpha": -0.75,
                         "coordinate_transformation_mode": "align_corners"}),
}


@pytest.mark.parametrize("name", list(TORCH_MODES))
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_resize2d_matches_torch(legalize_run, name, layout):
    torch_kw, attrs = TORCH_MODES[name]
    x = _image((2, 3, 5, 7))
    size = (7, 4) if layout == "NCHW" else (3, 10)  # one axis up, one down
    ref = F.interpolate(torch.from_numpy(x), size=size, **torch_kw).numpy()
    if layout == "NCHW":  # with a symbolic batch
        sinfo, arg = R.TensorStructInfo((N, 3, 5, 7), "float32"), x
    else:
        sinfo, arg, ref = R.TensorStructInfo((2, 5, 7, 3), "float32"), _nhwc(x), _nhwc(ref)
    out = legalize_run(lambda a: R.op.image.resize2d(a, size, layout=layout, **attrs), [sinfo], [arg],
                       "resize2d")[0]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=2e-6)


# ------------------------------------------------------------------------------------------
# resize2d against the ONNX Resize specification

def _coord(x: int, n_in: int, n_out: int, mode: str, start=0.0, end=0.0) -> Fraction:
    """The input coordinate of output index x (ONNX Resize's coordinate_transformation_mode)."""
    half, scale = Fraction(1, 2), Fraction(n_in, n_out)
    if mode == "half_pixel":
        return (x + half) * scale - half
    if mode == "pytorch_half_pixel":
        return (x + half) * scale - half if n_out > 1 else Fraction(0)
    if mode == "align_corners":
        return Fraction(x * (n_in - 1), n_out - 1) if n_out > 1 else Fraction(0)
    if mode == "asymmetric":
        return x * scale
    if mode == "tf_half_pixel_for_nn":
        return (x + half) * scale
    s, e = Fraction(start), Fraction(end)  # tf_crop_and_resize
    if n_out > 1:
        return s * (n_in - 1) + x * (e - s) * (n_in - 1) / (n_out - 1)
    return half * (s + e) * (n_in - 1)


def _nearest(v: Fraction, rounding: str) -> int:
    if rounding == "round":
        return round(v)  # half to even
    if rounding == "round_prefer_floor":
        return math.ceil(v - Fraction(1, 2))
    if rounding == "round_prefer_ceil":
        return math.floor(v + Fraction(1, 2))
    return math.floor(v) if rounding == "floor" else math.ceil(v)


def _keys(s: float, a: float) -> float:
    s = abs(s)
    if s <= 1:
        return (a + 2) * s**3 - (a + 3) * s**2 + 1
    return a * s**3 - 5 * a * s**2 + 8 * a * s - 4 * a if s < 2 else 0.0


def _axis_weights(n_in, n_out, mode, method, rounding, alpha, exclude, start, end):
    """(n_out, n_in) interpolation matrix along one axis, and the outputs outside the crop."""
    w = np.zeros((n_out, n_in))
    outside = np.zeros(n_out, dtype=bool)
    for x in range(n_out):
        v = _coord(x, n_in, n_out, mode, start, end)
        outside[x] = v < 0 or v > n_in - 1
        if method == "nearest_neighbor":
            if rounding == "":
                rounding = "round" if mode == "align_corners" else "floor"
            w[x, min(max(_nearest(v, rounding), 0), n_in - 1)] = 1.0
            continue
        base = math.floor(v)
        t = float(v - base)
        if method == "linear":
            taps = {base: 1.0 - t, base + 1: t}
        else:
            taps = {base + k: _keys(t - k, alpha) for k in range(-1, 3)}
            if exclude:
                taps = {i: (c if 0 <= i < n_in else 0.0) for i, c in taps.items()}
                total = sum(taps.values())
                taps = {i: c / total for i, c in taps.items()}
        for i, c in taps.items():
            w[x, min(max(i, 0), n_in - 1)] += c
    return w, outside


def onnx_resize(x, size, roi=(0.0,) * 4, method="linear", coordinate_transformation_mode="half_pixel",
                rounding_method="round", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0):
    """ONNX Resize of the NCHW image x to `size`, in float64."""
    mode = coordinate_transformation_mode
    args = (method, rounding_method, cubic_alpha, cubic_exclude)
    wy, out_y = _axis_weights(x.shape[2], size[0], mode, *args, roi[0], roi[2])
    wx, out_x = _axis_weights(x.shape[3], size[1], mode, *args, roi[1], roi[3])
    out = np.einsum("yi,xj,ncij->ncyx", wy, wx, x.astype("float64"))
    if mode == "tf_crop_and_resize":
        out[:, :, np.logical_or.outer(out_y, out_x)] = extrapolation_value
    return out


ONNX_CASES = [
    # every rounding method; dyadic ratios (0.25, 1.75) put coordinates exactly on .25, .5 and .75
    *[({"method": "nearest_neighbor", "coordinate_transformation_mode": "asymmetric",
        "rounding_method": r}, (4, 7), (16, 4)) for r in ("round", "round_prefer_floor", "round_prefer_ceil",
                                                          "floor", "ceil", "")],
    # every coordinate mode with the default rounding for it ("": round for align_corners, else floor)
    *[({"method": "nearest_neighbor", "coordinate_transformation_mode": m, "rounding_method": ""},
       (5, 7), (3, 9)) for m in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                 "tf_half_pixel_for_nn")],
    ({"method": "linear", "coordinate_transformation_mode": "asymmetric"}, (5, 7), (8, 3)),
    ({"method": "linear", "coordinate_transformation_mode": "tf_half_pixel_for_nn"}, (5, 7), (8, 3)),
    ({"method": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, (5, 7), (1, 9)),
    ({"method": "cubic", "coordinate_transformation_mode": "asymmetric"}, (5, 7), (8, 3)),  # TVM's alpha -0.5
    ({"method": "cubic", "cubic_exclude": 1}, (5, 7), (9, 4)),
    ({"method": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
      "roi": (-0.25, 0.125, 0.75, 1.25), "extrapolation_value": -7.0}, (5, 7), (6, 8)),
]


@pytest.mark.parametrize("attrs,in_hw,size", ONNX_CASES)
def test_resize2d_matches_onnx_reference(legalize_run, attrs, in_hw, size):
    x = _image((1, 2, *in_hw))
    sinfo = [R.TensorStructInfo(x.shape, "float32")]
    out = legalize_run(lambda a: R.op.image.resize2d(a, size, **attrs), sinfo, [x], "resize2d")[0]
    np.testing.assert_allclose(out, onnx_resize(x, size, **attrs), rtol=1e-5, atol=2e-6)


def test_resize2d_symbolic_size_and_out_dtype(legalize_run):
    h, w = tir.Var("h", "int64"), tir.Var("w", "int64")
    x = _image((2, 3, 4, 5))
    sinfo = [R.TensorStructInfo((N, 3, h, w), "float32")]
    call = lambda a: R.op.image.resize2d(a, R.ShapeExpr((h * 2, w + 1)), method="linear")  # noqa: E731
    assert repr(R.BlockBuilder().normalize(call(R.Var("x", sinfo[0]))).struct_info) == (
        'R.Tensor((n, 3, h * 2, w + 1), dtype="float32")')
    out = legalize_run(call, sinfo, [x], "resize2d")[0]
    np.testing.assert_allclose(out, onnx_resize(x, (8, 6)), rtol=1e-5, atol=2e-6)
    # integer pixels, nearest: read exactly and converted to out_dtype
    q = _rng().integers(-1000, 1000, size=(1, 4, 4, 2)).astype("int32")
    out = legalize_run(lambda a: R.op.image.resize2d(a, 8, layout="NHWC", method="nearest_neighbor",
                                                     out_dtype="float32"),
                       [R.TensorStructInfo(q.shape, "int32")], [q], "resize2d")[0]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, _nhwc(np.repeat(np.repeat(_nchw(q), 2, axis=2), 2, axis=3)))


# ------------------------------------------------------------------------------------------
# grid_sample against torch

def _grid(batch, h_out, w_out):
    """(N, 2, H_out, W_out) points: mostly inside [-1, 1], some far outside, some on the edges."""
    rng = _rng()
    g = rng.uniform(-1.2, 1.2, size=(batch, 2, h_out, w_out)).astype("float32")
    g[:, :, 0, :2] = rng.uniform(-4.5, 4.5, size=(batch, 2, 2))
    g[:, :, -1, -3:] = np.array([-1.0, 1.0, 0.0], dtype="float32")[None, None]
    return g


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(legalize_run, method, padding_mode, align_corners):
    x, g = _image((2, 3, 5, 6)), _grid(2, 4, 7)
    ref = F.grid_sample(torch.from_numpy(x), torch.from_numpy(g).permute(0, 2, 3, 1), mode=method,
                        padding_mode=padding_mode, align_corners=align_corners).numpy()
    sinfos = [R.TensorStructInfo((N, 3, 5, 6), "float32"), R.TensorStructInfo((N, 2, 4, 7), "float32")]
    out = legalize_run(lambda a, b: R.op.image.grid_sample(a, b, method, padding_mode=padding_mode,
                                                           align_corners=align_corners),
                       sinfos, [x, g], "grid_sample")[0]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_grid_sample_nhwc(legalize_run):
    x, g = _image((1, 4, 4, 2)), _grid(1, 3, 5)
    ref = F.grid_sample(torch.from_numpy(_nchw(x)), torch.from_numpy(g).permute(0, 2, 3, 1),
                        align_corners=False).numpy()
    sinfos = [R.TensorStructInfo(x.shape, "float32"), R.TensorStructInfo(g.shape, "float32")]
    out = legalize_run(lambda a, b: R.op.image.grid_sample(a, b, layout="NHWC"), sinfos, [x, g],
                       "grid_sample")[0]
    np.testing.assert_allclose(out, _nhwc(ref), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------
# struct info, registry, script

def _sinfo(call) -> str:
    return repr(R.BlockBuilder().normalize(call).struct_info)


def test_struct_info():
    img = R.Var("x", R.TensorStructInfo((N, 3, 8, 8), "float16"))
    m = tir.Var("m", "int64")
    assert _sinfo(R.op.image.resize2d(img, (m, 4))) == 'R.Tensor((n, 3, m, 4), dtype="float16")'
    assert _sinfo(R.op.image.resize2d(img, [5], out_dtype="float32")) == (
        'R.Tensor((n, 3, 5, 5), dtype="float32")')
    assert _sinfo(R.op.image.resize2d(img, 6, layout="NHWC")) == 'R.Tensor((n, 6, 6, 8), dtype="float16")'
    unknown_size = R.Var("s", R.ShapeStructInfo(ndim=2))
    assert _sinfo(R.op.image.resize2d(img, unknown_size)) == 'R.Tensor(dtype="float16", ndim=4)'
    any_rank = R.Var("y", R.TensorStructInfo(dtype="float32"))
    assert _sinfo(R.op.image.resize2d(any_rank, (2, 2))) == 'R.Tensor(dtype="float32", ndim=4)'
    grid = R.Var("g", R.TensorStructInfo((N, 2, 5, m), "float32"))
    assert _sinfo(R.op.image.grid_sample(img, grid)) == 'R.Tensor((n, 3, 5, m), dtype="float16")'
    assert _sinfo(R.op.image.grid_sample(img, grid, layout="NHWC")) == (
        'R.Tensor((n, 5, m, 8), dtype="float16")')
    assert _sinfo(R.op.image.grid_sample(img, R.Var("g", R.TensorStructInfo(dtype="float32", ndim=4)))) == (
        'R.Tensor(dtype="float16", ndim=4)')


def test_registry_entries():
    resize, sample = R.Op.get("relax.image.resize2d"), R.Op.get("relax.image.grid_sample")
    # resize2d: data, size and optionally the run-time (scale_h, scale_w, start_h, start_w, end_h, end_w)
    assert resize.pattern == R.op.OpPatternKind.kInjective and resize.num_inputs == -1
    assert sample.pattern == R.op.OpPatternKind.kOpaque and sample.num_inputs == 2
    assert set(resize.info.attrs) == {"roi", "layout", "method", "coordinate_transformation_mode",
                                      "rounding_method", "cubic_alpha", "cubic_exclude",
                                      "extrapolation_value", "out_dtype", "scale", "antialias"}
    assert set(sample.info.attrs) == {"method", "layout", "padding_mode", "align_corners"}
    call = R.op.image.resize2d(R.Var("x", R.TensorStructInfo((1, 1, 2, 2))), 4)
    assert call.attrs["method"] == "linear" and call.attrs["rounding_method"] == "round"
    assert call.attrs["cubic_alpha"] == -0.5 and call.attrs["roi"] == (0.0, 0.0, 0.0, 0.0)


def test_script_round_trip():
    from graphc.script import from_source

    x = R.Var("x", R.TensorStructInfo((N, 3, 4, 4), "float32"))
    g = R.Var("g", R.TensorStructInfo((N, 2, 5, 6), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, g]):
        with bb.dataflow():
            a = bb.emit(R.op.image.resize2d(x, R.ShapeExpr((N * 2, 4)), roi=[0.1, 0.2, 0.8, 0.9],
                                            coordinate_transformation_mode="tf_crop_and_resize",
                                            extrapolation_value=1.5, out_dtype="float16"))
            b = bb.emit(R.op.image.grid_sample(x, g, "bicubic", padding_mode="border", align_corners=True))
            gv = bb.emit_output(R.Tuple([a, b]))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = mod.script()
    assert ('R.image.resize2d(x, R.shape([n * 2, 4]), roi=[0.1, 0.2, 0.8, 0.9], layout="NCHW", '
            'method="linear", coordinate_transformation_mode="tf_crop_and_resize", rounding_method="round", '
            'cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=1.5, out_dtype="float16")') in text
    assert ('R.image.grid_sample(x, g, method="bicubic", layout="NCHW", padding_mode="border", '
            'align_corners=True)') in text
    assert structural_equal(from_source(text), mod)


# ------------------------------------------------------------------------------------------
# errors

IMG = R.Var("x", R.TensorStructInfo((2, 3, 8, 8), "float32"))
GRID = R.Var("g", R.TensorStructInfo((2, 2, 4, 4), "float32"))


@pytest.mark.parametrize("make,message", [
    (lambda: R.op.image.resize2d(IMG, 4, layout="NCH"),
     "'image.resize2d' expects layout to order the letters N, C, H and W "
     "(e.g. \"NCHW\", \"NHWC\"), got 'NCH'"),
    (lambda: R.op.image.resize2d(IMG, 4, layout="NCHW8c"), "expects layout to order .* got 'NCHW8c'"),
    (lambda: R.op.image.resize2d(R.Var("v", R.TensorStructInfo((3, 8, 8), "float32")), 4),
     "'image.resize2d' expects data to be a 4-d tensor in layout NCHW, "
     'got R.Tensor((3, 8, 8), dtype="float32")'),
    (lambda: R.op.image.resize2d(R.Var("t", R.TupleStructInfo([])), 4),
     "'image.resize2d' expects argument data to be a tensor (R.Tensor), got R.Tuple()"),
    (lambda: R.op.image.resize2d(IMG, (4, 4, 4)),
     "'image.resize2d' expects size to be a 2-d shape (R.Shape([height, width])), got R.Shape([4, 4, 4])"),
    (lambda: R.op.image.resize2d(IMG, IMG),
     "'image.resize2d' expects size to be a 2-d shape .* got R.Tensor((2, 3, 8, 8), dtype=\"float32\")"),
    (lambda: R.op.image.resize2d(IMG, (4, -1)),
     "'image.resize2d' expects a non-negative size, got R.Shape([4, -1])"),
    (lambda: R.op.image.resize2d(IMG, 4, method="bilinear"),
     "'image.resize2d' expects method to be one of ['nearest_neighbor', 'linear', 'cubic'], got 'bilinear'"),
    (lambda: R.op.image.resize2d(IMG, 4, coordinate_transformation_mode="corners"),
     "'image.resize2d' expects coordinate_transformation_mode to be one of ['half_pixel', .*], "
     "got 'corners'"),
    (lambda: R.op.image.resize2d(IMG, 4, rounding_method="nearest"),
     "'image.resize2d' expects rounding_method to be one of ['round', .*], got 'nearest'"),
    (lambda: R.op.image.resize2d(IMG, 4, roi=(0.0, 1.0)),
     "'image.resize2d' expects roi to be 4 floats (start_h, start_w, end_h, end_w), got [0.0, 1.0]"),
    (lambda: R.op.image.grid_sample(IMG, GRID, layout="HWCN8"),
     "'image.grid_sample' expects layout to order"),
    (lambda: R.op.image.grid_sample(IMG, R.Var("g", R.TensorStructInfo((2, 2, 4), "float32"))),
     "'image.grid_sample' expects grid to be a 4-d tensor shaped (N, 2, H_out, W_out), "
     'got R.Tensor((2, 2, 4), dtype="float32")'),
    (lambda: R.op.image.grid_sample(IMG, R.Var("g", R.TensorStructInfo((2, 4, 4, 2), "float32"))),
     "'image.grid_sample' expects grid to have shape (2, 2, H_out, W_out) for data "
     'R.Tensor((2, 3, 8, 8), dtype="float32") in layout NCHW, got R.Tensor((2, 4, 4, 2), dtype="float32")'),
    (lambda: R.op.image.grid_sample(IMG, R.Var("g", R.TensorStructInfo((3, 2, 4, 4), "float32"))),
     "'image.grid_sample' expects grid to have shape (2, 2, H_out, W_out) .* got R.Tensor((3, 2, 4, 4)"),
    (lambda: R.op.image.grid_sample(IMG, R.Var("g", R.TensorStructInfo((2, 2, 4, 4), "int32"))),
     "'image.grid_sample' requires grid to have a float dtype, got R.Tensor((2, 2, 4, 4), dtype=\"int32\")"),
    (lambda: R.op.image.grid_sample(R.Var("q", R.TensorStructInfo((2, 3, 8, 8), "uint8")), GRID),
     "'image.grid_sample' requires data to have a float dtype"),
    (lambda: R.op.image.grid_sample(IMG, GRID, method="bilinear2"),
     "'image.grid_sample' expects method to be one of ['bilinear', 'nearest', 'bicubic'], got 'bilinear2'"),
    (lambda: R.op.image.grid_sample(IMG, GRID, padding_mode="constant"),
     "'image.grid_sample' expects padding_mode to be one of ['zeros', 'border', 'reflection'], "
     "got 'constant'"),
])
def test_errors(make, message):
    """`.*` in a message stands for any text; the rest is matched literally."""
    pattern = ".*".join(re.escape(part) for part in message.split(".*"))
    with pytest.raises(TypeInferenceError, match=pattern):
        R.BlockBuilder().normalize(make())


def test_resize2d_run_time_params():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((1, 1, 2, 2), "float32"))
    params = R.Var("p", R.TensorStructInfo((6,), "float32"))
    call = R.op.image.resize2d(x, (3, 3), params=params)
    assert str(bb.normalize(call).struct_info) == 'R.Tensor((1, 1, 3, 3), dtype="float32")'
    bad = R.Var("p", R.TensorStructInfo((4,), "float32"))
    with pytest.raises(TypeInferenceError, match="params to be a 1-d tensor of 6 floats"):
        bb.normalize(R.op.image.resize2d(x, (3, 3), params=bad))
    ints = R.Var("p", R.TensorStructInfo((6,), "int64"))
    with pytest.raises(TypeInferenceError, match="params to have a float dtype"):
        bb.normalize(R.op.image.resize2d(x, (3, 3), params=ints))
