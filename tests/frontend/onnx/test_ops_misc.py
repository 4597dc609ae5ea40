"""Edge cases of math, reductions and normalization, and the tensor operators of the
conformance push (BitCast, ReverseSequence, TensorScatter, Det, DFT, ...), against ONNX's
reference implementation or numpy."""

import numpy as np
import pytest
from onnx_testing import check_node, rand


def test_float_mod_without_fmod_follows_the_divisor_sign_and_ieee_edges():
    inf, nan = np.inf, np.nan
    x = np.array([0, -0.0, 0, -0.0, -3, 3, -1, 1, inf, -inf, 1, 1, nan, 1, 5.5, -5.5], "float32")
    y = np.array([-2, 2, 2, -2, inf, inf, -inf, -inf, 2, 2, 0, -0.0, 2, nan, -2, 2], "float32")
    with np.errstate(all="ignore"):
        expected = np.mod(x, y)
    for dtype in ("float32", "float64"):
        (got,) = check_node("Mod", [x.astype(dtype), y.astype(dtype)], expected=[expected.astype(dtype)])
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_out_of_width_amounts_leave_the_sign_fill(direction):
    x = np.array([-8, 4, -1, 7, -8, 5], "int32")
    y = np.array([-1, 32, 100, 3, 1, 0], "int32")
    inside = (y >= 0) & (y < 32)
    safe = np.where(inside, y, 0)
    shifted = np.left_shift(x, safe) if direction == "LEFT" else np.right_shift(x, safe)
    fill = np.where((x < 0) & (direction == "RIGHT"), -1, 0).astype("int32")
    check_node("BitShift", [x, y], {"direction": direction}, expected=[np.where(inside, shifted, fill)])
    u = np.array([1, 200, 3], "uint8")
    v = np.array([8, 1, 200], "uint8")
    want = np.where(v < 8, np.left_shift(u, np.where(v < 8, v, 0)), 0).astype("uint8")
    check_node("BitShift", [u, v], {"direction": "LEFT"}, expected=[want])


def test_lp_normalization_of_a_zero_vector_is_zero():
    x = np.array([[[1, 2, 2], [3, 4, 0]], [[0, 5, 5], [6, 8, 0]]], "float32")
    for p in (1, 2):
        norm = np.linalg.norm(x, ord=p, axis=0, keepdims=True)
        want = np.where(norm == 0, 0, x / np.where(norm == 0, 1, norm)).astype("float32")
        check_node("LpNormalization", [x], {"axis": 0, "p": p}, expected=[want])


IDENTITIES = {
    "ReduceSum": 0.0,
    "ReduceProd": 1.0,
    "ReduceMax": -np.inf,
    "ReduceMin": np.inf,
    "ReduceL1": 0.0,
    "ReduceL2": 0.0,
    "ReduceSumSquare": 0.0,
    "ReduceLogSum": -np.inf,
    "ReduceLogSumExp": -np.inf,
}


@pytest.mark.parametrize("op", sorted(IDENTITIES))
@pytest.mark.parametrize("const", [(), (1,)], ids=["runtime-axes", "constant-axes"])
def test_reduction_over_an_empty_axis_is_the_identity(op, const):
    x = np.zeros((2, 0, 4), "float32")
    want = np.full((2, 1, 4), IDENTITIES[op], "float32")
    check_node(op, [x, np.array([1], "int64")], {"keepdims": 1}, const_inputs=const, expected=[want])


def test_integer_max_over_an_empty_axis_is_the_lowest_value():
    x = np.zeros((3, 0), "int32")
    want = np.full((3,), np.iinfo("int32").min, "int32")
    check_node("ReduceMax", [x, np.array([1], "int64")], {"keepdims": 0}, const_inputs=(1,), expected=[want])
    check_node("ReduceSum", [rand(2, 3), np.array([1], "int64")], {"keepdims": 0})


@pytest.mark.parametrize(
    "src, dst, to",
    [("float32", "int32", 6), ("int64", "float64", 11), ("float16", "uint16", 4), ("int8", "uint8", 2)],
)
def test_bit_cast_keeps_the_bits(src, dst, to):
    x = rand(2, 3, dtype="float32", low=-100, high=100).astype(src)
    check_node("BitCast", [x], {"to": to}, opset=26, expected=[x.view(dst)])


def test_bit_cast_of_another_width_is_rejected():
    from graphc.errors import FrontendError

    with pytest.raises(FrontendError, match="BitCast.*'to'|to=7"):
        check_node("BitCast", [rand(3)], {"to": 7}, opset=26, expected=[np.zeros(3, "int64")])


def test_bfloat16_and_zero_size_constants_compile():
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    x, y = rand(2, 3).astype(bf16), rand(2, 3, seed=1).astype(bf16)
    want = (x.astype("float32") + y.astype("float32")).astype(bf16)
    (got,) = check_node("Add", [x, y], const_inputs=(1,), expected=[want])
    empty = np.zeros((2, 0), "float32")
    check_node("Concat", [rand(2, 3), empty], {"axis": 1}, const_inputs=(1,))


@pytest.mark.parametrize("inverse, onesided", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("length", [None, 6, 12], ids=["full", "cropped", "padded"])
def test_dft_against_numpy_fft(inverse, onesided, length):
    last = 2 if inverse else 1
    x = rand(2, 8 if not (inverse and onesided) else 5, 3, last)
    inputs = [x, None if length is None else np.array(length, "int64"), np.array(1, "int64")]
    attrs = {"inverse": inverse, "onesided": onesided}
    check_node("DFT", inputs, attrs, opset=20, const_inputs=(1, 2), rtol=1e-4, atol=1e-5)
    if length is None:
        check_node("DFT", [x], {**attrs, "axis": 1}, opset=17, rtol=1e-4, atol=1e-5)


def test_dft_over_a_run_time_axis():
    x = rand(2, 6, 6, 2)
    for axis in (1, 2, -2):
        check_node("DFT", [x, None, np.array(axis, "int64")], opset=20, rtol=1e-4, atol=1e-5)


def test_one_sided_dft_over_a_run_time_axis_is_rejected():
    from graphc.errors import FrontendError

    x = rand(2, 6, 6, 1)
    with pytest.raises(FrontendError, match="one-sided DFT over an axis computed at run time"):
        check_node("DFT", [x, None, np.array(1, "int64")], {"onesided": 1}, opset=20)


@pytest.mark.parametrize("const", [(), (1,)], ids=["runtime-lens", "constant-lens"])
def test_reverse_sequence(const):
    x = rand(4, 3, 2)
    lens = np.array([1, 3, 2], "int64")
    check_node("ReverseSequence", [x, lens], {"batch_axis": 1, "time_axis": 0}, const_inputs=const)
    y = rand(3, 5)
    check_node("ReverseSequence", [y, np.array([5, 0, 2], "int64")], {"batch_axis": 0, "time_axis": 1})


def test_reverse_sequence_past_the_time_axis_raises():
    with pytest.raises(IndexError):
        check_node("ReverseSequence", [rand(3, 4), np.array([2, 7, 1], "int64")],
                   {"batch_axis": 0, "time_axis": 1}, expected=[np.zeros((3, 4), "float32")])


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter(mode):
    cache, update = rand(3, 2, 5, 4), rand(3, 2, 2, 4, seed=1)
    starts = np.array([0, 3, 4] if mode == "circular" else [0, 3, 1], "int64")
    check_node("TensorScatter", [cache, update, starts], {"mode": mode}, opset=24)
    check_node("TensorScatter", [cache, update, starts], {"mode": mode}, opset=24, const_inputs=(2,))
    check_node("TensorScatter", [rand(3, 5, 4), rand(3, 2, 4, seed=1)], {"axis": 1}, opset=24)


def test_det_against_numpy():
    x = rand(3, 4, 4, low=-2, high=2)
    x[1] = [[0, 1, 2, 3], [1, 0, 1, 1], [2, 2, 0, 1], [1, 3, 4, 0]]  # a zero leading pivot
    x[2, 3] = x[2, 0] + x[2, 1]  # singular
    check_node("Det", [x], expected=[np.linalg.det(x.astype("float64")).astype("float32")],
                        rtol=1e-4, atol=1e-5)
    for shape in [(2, 2), (1, 1), (2, 3, 3, 3)]:
        y = rand(*shape, seed=4, low=-2, high=2)
        check_node("Det", [y], expected=[np.linalg.det(y).astype("float32")], rtol=1e-4, atol=1e-5)


def test_nonzero_and_compress_have_run_time_sizes():
    x = np.array([[0, 1.5, 0], [2, 0, -1]], "float32")
    check_node("NonZero", [x])
    check_node("NonZero", [np.zeros((2, 3), "int32")])
    cond = np.array([True, False, True], "bool")
    check_node("Compress", [x, cond], {"axis": 1})
    check_node("Compress", [x, np.array([False, True], "bool")], {"axis": -2})
    check_node("Compress", [x, np.array([1, 0, 0, 1], "bool")])  # flattened, shorter condition
    check_node("Compress", [x, cond], {"axis": 1}, const_inputs=(1,))


def test_compress_past_the_axis_raises():
    x = rand(2, 3)
    with pytest.raises(IndexError):
        check_node("Compress", [x, np.array([1, 0, 0, 1], "bool")], {"axis": 1},
                   expected=[np.zeros((2, 2), "float32")])


@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("sort", [0, 1])
def test_unique(axis, sort):
    x = np.array([[1, 0, 1], [2, 2, 1], [1, 0, 1], [2, 2, 1]], "float32")
    attrs = {"sorted": sort} if axis is None else {"sorted": sort, "axis": axis}
    if axis is None:
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        if not sort:  # by first occurrence
            values, first, inverse, counts = want
            order = np.argsort(first, kind="stable")
            rank = np.argsort(order)
            want = (values[order], first[order], rank[inverse.reshape(-1)], counts[order])
        check_node("Unique", [x], attrs, num_outputs=4, expected=[np.asarray(w).reshape(-1) if k else w
                                                                   for k, w in enumerate(want)])
    else:
        check_node("Unique", [x], attrs, num_outputs=4, reference="ort")


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("const", [(), (2, 3, 4)], ids=["runtime-thresholds", "constant-thresholds"])
def test_non_max_suppression(center, const):
    rng = np.random.default_rng(3)
    corner = rng.uniform(0, 4, size=(2, 8, 2))
    size = rng.uniform(0.5, 3, size=(2, 8, 2))
    parts = [corner, corner + size] if not center else [corner, size]
    boxes = np.concatenate(parts, axis=2).astype("float32")
    scores = rng.uniform(0, 1, size=(2, 3, 8)).astype("float32")
    limits = [np.array([3], "int64"), np.array([0.3], "float32"), np.array([0.2], "float32")]
    attrs = {"center_point_box": center}
    check_node("NonMaxSuppression", [boxes, scores, *limits], attrs, const_inputs=const)
    check_node("NonMaxSuppression", [boxes, scores, limits[0]], attrs, reference="ort")


def test_half_precision_matmul_and_softmax_round_like_the_reference():
    a = rand(4, 64, 96, low=-2, high=2).astype("float16")
    b = rand(96, 32, seed=1, low=-2, high=2).astype("float16")
    check_node("MatMul", [a, b], rtol=1e-3, atol=0,
                        expected=[(a.astype("float32") @ b.astype("float32")).astype("float16")])
    x = rand(3, 8, 50, low=-6, high=6).astype("float16")
    check_node("Softmax", [x], {"axis": -1}, rtol=1e-3, atol=1e-4)
