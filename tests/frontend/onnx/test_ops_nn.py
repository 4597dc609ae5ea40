"""Layers against ONNX's reference implementation: convolution, pooling, normalization,
activations, the softmax family, matrix products."""

import numpy as np
import pytest
from onnx_testing import check_node, rand


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"pads": [1, 1, 1, 1], "strides": [2, 2]},
        {"auto_pad": "SAME_UPPER"},
        {"group": 2, "dilations": [2, 1]},
    ],
)
def test_conv2d(attrs):
    check_node(
        "Conv",
        [rand(1, 4, 7, 6), rand(6, 4 // attrs.get("group", 1), 3, 3, seed=1), rand(6, seed=2)],
        attrs,
        rtol=1e-4,
        atol=1e-5,
    )


def test_conv1d_3d_and_transposed():
    check_node("Conv", [rand(1, 2, 9), rand(3, 2, 3, seed=1)], {"pads": [1, 0]}, rtol=1e-4)
    check_node("Conv", [rand(1, 2, 4, 4, 4), rand(2, 2, 2, 2, 2, seed=1)], rtol=1e-4)
    check_node("ConvTranspose", [rand(1, 2, 3, 3), rand(2, 3, 3, 3, seed=1)], {"strides": [2, 2]}, rtol=1e-4)
    check_node(
        "ConvTranspose",
        [rand(1, 2, 3, 3), rand(2, 3, 3, 3, seed=1)],
        {"strides": [2, 2], "output_shape": [8, 8]},
        rtol=1e-4,
    )


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [2, 2]},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [3, 2], "ceil_mode": 1, "strides": [2, 2]},
    ],
)
def test_pools(op, attrs):
    check_node(op, [rand(1, 2, 7, 6)], attrs)


def test_global_pools_and_lp():
    for op in ("GlobalAveragePool", "GlobalMaxPool"):
        check_node(op, [rand(2, 3, 4, 5)])
    check_node(
        "AveragePool",
        [rand(1, 1, 5, 5)],
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    )


def test_normalizations():
    x = rand(2, 3, 4, 5)
    check_node(
        "BatchNormalization",
        [x, rand(3, seed=1), rand(3, seed=2), rand(3, seed=3), rand(3, seed=4, low=0.5, high=1.5)],
        rtol=1e-4,
    )
    check_node("InstanceNormalization", [x, rand(3, seed=1), rand(3, seed=2)], rtol=1e-4, atol=1e-5)
    check_node(
        "LayerNormalization", [x, rand(4, 5, seed=1), rand(4, 5, seed=2)], {"axis": 2}, rtol=1e-4, atol=1e-5
    )
    check_node("LayerNormalization", [x, rand(5, seed=1)], {"axis": -1}, num_outputs=3, rtol=1e-4, atol=1e-5)
    check_node(
        "GroupNormalization",
        [rand(2, 4, 3), rand(4, seed=1), rand(4, seed=2)],
        {"num_groups": 2},
        opset=21,
        rtol=1e-4,
        atol=1e-5,
    )
    # onnx.reference sums the wrong window at the last channel: ONNX Runtime is the reference
    check_node("LRN", [x], {"size": 3, "alpha": 0.01, "beta": 0.75}, rtol=1e-4, reference="ort")
    check_node("LpNormalization", [x], {"axis": 1, "p": 2}, rtol=1e-4)


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75, 1.0, 1.75, 2.0, 0.6, 3.0])
def test_lrn_exponents(beta):
    # multiples of 1/4 up to 2 become products of square roots, the others a `power`
    x = rand(1, 7, 5, 6, low=0.0, high=3.0)
    check_node("LRN", [x], {"size": 5, "alpha": 0.3, "beta": beta, "bias": 1.5}, rtol=1e-5, reference="ort")


ACTIVATIONS = [
    ("LeakyRelu", {"alpha": 0.2}),
    ("Elu", {"alpha": 0.7}),
    ("Selu", {}),
    ("Celu", {"alpha": 2.0}),
    ("ThresholdedRelu", {"alpha": 0.3}),
    ("HardSigmoid", {}),
    ("Mish", {}),
    ("Gelu", {}),
    ("Gelu", {"approximate": "tanh"}),
    ("Shrink", {"lambd": 0.5, "bias": 0.1}),
]


@pytest.mark.parametrize("op,attrs", ACTIVATIONS)
def test_activations(op, attrs):
    check_node(op, [rand(3, 4, low=-3, high=3)], attrs, opset=20, rtol=1e-4, atol=1e-5)


def test_prelu_and_softmax_family():
    check_node("PRelu", [rand(2, 3, 4, 5), rand(3, 1, 1, seed=1)])
    for op in ("Softmax", "LogSoftmax", "Hardmax"):
        check_node(op, [rand(2, 3, 4)], {"axis": 1}, rtol=1e-5, atol=1e-6)


def test_matmul_gemm_einsum():
    check_node("MatMul", [rand(2, 3, 4), rand(4, 5, seed=1)], rtol=1e-5)
    check_node("MatMul", [rand(4), rand(2, 4, 3, seed=1)], rtol=1e-5)
    check_node(
        "Gemm",
        [rand(4, 3), rand(5, 4, seed=1), rand(5, seed=2)],
        {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0},
        rtol=1e-5,
    )
    check_node("Einsum", [rand(2, 3), rand(3, 4, seed=1)], {"equation": "ij,jk->ik"}, rtol=1e-5)


def test_dropout_is_identity_at_inference():
    check_node("Dropout", [rand(3, 4)], num_outputs=2)


@pytest.mark.parametrize(
    "mode,coord",
    [
        ("nearest", "asymmetric"),
        ("linear", "half_pixel"),
        ("cubic", "pytorch_half_pixel"),
        ("linear", "align_corners"),
        ("nearest", "half_pixel_symmetric"),
    ],
)
def test_resize_scales_and_sizes(mode, coord):
    x = rand(1, 2, 4, 5)
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    # scales whose output sizes are not exact: the sampling step is the scale's, not the sizes' ratio,
    # and align_corners' resized length is in * scale (ONNX's reference and its node tests; ONNX
    # Runtime takes the integer size there); constant and run-time scales alike
    for const_inputs in [(2,), ()]:
        check_node(
            "Resize",
            [x, None, np.array([1, 1, 0.6, 1.7], "float32")],
            attrs,
            opset=19,
            const_inputs=const_inputs,
            rtol=1e-4,
            atol=1e-5,
        )
    check_node(
        "Resize", [x, None, None, np.array([1, 2, 7, 3], "int64")], attrs, opset=19, rtol=1e-4, atol=1e-5
    )


def test_grid_sample():
    grid = rand(1, 3, 4, 2, seed=3, low=-1.1, high=1.1)
    check_node(
        "GridSample",
        [rand(1, 2, 4, 5), grid],
        {"mode": "linear", "align_corners": 1},
        opset=20,
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize("training,ratio", [(False, 0.5), (True, 0.0)])
def test_dropout_with_a_run_time_training_mode(training, ratio):
    # training_mode false, or a ratio of 0: the identity and an all-true mask
    x = rand(3, 4)
    check_node("Dropout", [x, np.array(ratio, "float32"), np.array(training)], num_outputs=2, opset=22)


def test_dropout_training_at_run_time_fails_naming_the_node():
    from onnx import helper
    from onnx_testing import make_model, run_graphc

    node = helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")
    model = make_model([node], [("x", None, [2]), ("r", None, []), ("t", np.bool_, [])], [("y", None, None)])
    x = np.array([1.0, 2.0], "float32")
    ok = run_graphc(model, [x, np.array(0.5, "float32"), np.array(False)])
    np.testing.assert_array_equal(ok[0], x)
    with pytest.raises(AssertionError, match="Dropout node .drop..*training_mode=True"):
        run_graphc(model, [x, np.array(0.5, "float32"), np.array(True)])


@pytest.mark.parametrize("const_stats", [False, True])
def test_batch_norm_training_mode(const_stats):
    x, scale, bias = rand(2, 3, 4, 5), rand(3, seed=1), rand(3, seed=2)
    mean, var = rand(3, seed=3), rand(3, seed=4, low=0.5, high=1.5)
    check_node(
        "BatchNormalization",
        [x, scale, bias, mean, var],
        {"training_mode": 1, "momentum": 0.8, "epsilon": 1e-3},
        opset=15,
        num_outputs=3,
        const_inputs=(1, 2, 3, 4) if const_stats else (),
        rtol=1e-4,
    )
