"""Narrow types and quantization: Cast to and from float8 / float4 / int4 / uint4 (checked
against ml_dtypes, ONNX's reference), QuantizeLinear and DequantizeLinear per tensor, per
axis and blocked, the integer and QLinear operators."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_testing import check_node, rand

from graphc.frontend.onnx.backend import GraphcBackend

FLOAT8 = [
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2,
    TensorProto.FLOAT8E5M2FNUZ,
    TensorProto.FLOAT4E2M1,
]
SMALL_INTS = [TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2]


def _cast_model(src, dst, shape, **attrs):
    node = helper.make_node("Cast", ["x"], ["y"], to=dst, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", src, shape)],
        [helper.make_tensor_value_info("y", dst, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


def _values():
    rng = np.random.default_rng(0)
    special = [
        0,
        -0.0,
        1e-9,
        0.3,
        448,
        464,
        465,
        480,
        240,
        57344,
        61440,
        6,
        5,
        7,
        -13,
        np.inf,
        -np.inf,
        np.nan,
    ]
    return np.concatenate(
        [rng.standard_normal(64).astype("float32") * s for s in (1e-3, 1, 100)]
        + [np.array(special, "float32")]
    )


@pytest.mark.parametrize("dst", FLOAT8, ids=TensorProto.DataType.Name)
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_float_to_narrow_floats_and_back(dst, saturate):
    x = _values()
    np_type = helper.tensor_dtype_to_np_dtype(dst)
    attrs = {"saturate": saturate} if dst != TensorProto.FLOAT4E2M1 else {}
    (got,) = GraphcBackend.run_model(_cast_model(TensorProto.FLOAT, dst, [len(x)], **attrs), [x])
    if saturate and dst != TensorProto.FLOAT4E2M1:
        expected = onnx.numpy_helper.saturate_cast(x, np_type)
    else:
        expected = x.astype(np_type)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.astype("float64"), expected.astype("float64"))  # NaNs compare equal
    (back,) = GraphcBackend.run_model(_cast_model(dst, TensorProto.FLOAT, [len(x)]), [expected])
    np.testing.assert_array_equal(back, expected.astype("float32"))


@pytest.mark.parametrize("dst", SMALL_INTS, ids=TensorProto.DataType.Name)
def test_cast_to_small_integers_truncates_and_wraps(dst):
    x = np.array([7.6, 7.4, -8.5, -9, 20, 2.5, 3.5, -1.5], "float32")
    np_type = helper.tensor_dtype_to_np_dtype(dst)
    (got,) = GraphcBackend.run_model(_cast_model(TensorProto.FLOAT, dst, [8]), [x])
    np.testing.assert_array_equal(got.astype("int32"), x.astype(np_type).astype("int32"))
    (back,) = GraphcBackend.run_model(_cast_model(dst, TensorProto.FLOAT, [8]), [x.astype(np_type)])
    np.testing.assert_array_equal(back, x.astype(np_type).astype("float32"))


def test_narrow_types_are_refused_by_arithmetic():
    node = helper.make_node("Add", ["x", "x"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT8E4M3FN, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(ValueError, match="float8_e4m3fn"):
        GraphcBackend.prepare(model)


@pytest.mark.parametrize("zero_point", [np.uint8(128), np.int8(-3)])
def test_quantize_dequantize_per_tensor(zero_point):
    x = rand(3, 4, low=-2, high=2)
    scale = np.float32(0.02)
    check_node("QuantizeLinear", [x, np.array(scale), np.array(zero_point)], opset=21)
    q = rand(3, 4, dtype=zero_point.dtype, low=-100 if zero_point.dtype == np.int8 else 0, high=100)
    check_node("DequantizeLinear", [q, np.array(scale), np.array(zero_point)], opset=21)


def test_quantize_per_axis_and_blocked():
    x = rand(2, 6, low=-2, high=2)
    check_node(
        "QuantizeLinear", [x, np.array([0.01, 0.02], "float32"), np.array([1, 250], "uint8")], {"axis": 0}
    )
    check_node(
        "QuantizeLinear",
        [x, rand(2, 2, low=0.01, high=0.05, seed=1), np.zeros((2, 2), "int8")],
        {"axis": 1, "block_size": 3},
        opset=21,
    )
    check_node(
        "DequantizeLinear",
        [
            rand(2, 6, dtype="int8", low=-100, high=100),
            rand(2, 2, low=0.01, high=0.05),
            np.ones((2, 2), "int8"),
        ],
        {"axis": 1, "block_size": 3},
        opset=21,
    )


def test_quantize_to_float8_and_int4():
    x = rand(8, low=-30, high=30)
    scale = np.array(0.5, "float32")
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    for elem, zero in ((TensorProto.FLOAT8E4M3FN, 0.0), (TensorProto.INT4, 0), (TensorProto.UINT4, 3)):
        z = helper.make_tensor("z", elem, [], [zero])
        graph = helper.make_graph(
            [node],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
            [helper.make_tensor_value_info("y", elem, [8])],
            initializer=[onnx.numpy_helper.from_array(scale, "s"), z],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
        (got,) = GraphcBackend.run_model(model, [x])
        from onnx.reference import ReferenceEvaluator

        (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.astype("float64"), expected.astype("float64"))


def test_dynamic_quantize_and_integer_ops():
    check_node("DynamicQuantizeLinear", [rand(3, 4, low=-1, high=3)], num_outputs=3)
    a, b = rand(3, 4, dtype="uint8", low=0, high=255), rand(4, 2, dtype="uint8", low=0, high=255, seed=1)
    check_node("MatMulInteger", [a, b, np.array(12, "uint8"), np.array(3, "uint8")])
    check_node(
        "ConvInteger",
        [
            rand(1, 1, 4, 4, dtype="uint8", low=0, high=20),
            rand(1, 1, 2, 2, dtype="uint8", low=0, high=5, seed=1),
            np.array(2, "uint8"),
        ],
    )
    check_node(
        "QLinearMatMul",
        [
            a,
            np.array(0.05, "float32"),
            np.array(10, "uint8"),
            b,
            np.array(0.02, "float32"),
            np.array(3, "uint8"),
            np.array(0.5, "float32"),
            np.array(7, "uint8"),
        ],
    )


def test_ml_dtypes_round_trip_through_the_backend():
    x = np.array([1.5, -2.0, 448.0], "float32").astype(ml_dtypes.float8_e4m3fn)
    (got,) = GraphcBackend.run_model(
        _cast_model(TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FN, [3]), [x]
    )
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got.view("uint8"), x.view("uint8"))
