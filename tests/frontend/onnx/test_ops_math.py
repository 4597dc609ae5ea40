"""Elementwise math and reductions against ONNX's reference implementation."""

import numpy as np
import pytest
from onnx import helper, numpy_helper
from onnx_testing import check_model, check_node, make_model, rand, run_graphc

UNARY = [
    "Abs",
    "Neg",
    "Exp",
    "Sqrt",
    "Sin",
    "Cos",
    "Tan",
    "Atan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Tanh",
    "Sigmoid",
    "Erf",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "Reciprocal",
    "Softsign",
    "Softplus",
    "Relu",
    "HardSwish",
]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op):
    x = rand(3, 4, low=0.1 if op == "Sqrt" else -2.0, high=2.0)
    check_node(op, [x], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "op,low", [("Log", 0.1), ("Asin", -0.9), ("Acos", -0.9), ("Acosh", 1.1), ("Atanh", -0.9)]
)
def test_unary_domains(op, low):
    check_node(op, [rand(3, 4, low=low, high=0.9 if op != "Log" and op != "Acosh" else 3.0)])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean"])
def test_binary_broadcasting(op):
    check_node(op, [rand(2, 3, 4, low=0.5, high=2.0), rand(3, 1, seed=1, low=0.5, high=2.0)])


def test_integer_division_truncates_and_mod_follows_fmod():
    a = np.array([7, -7, 7, -7], "int32")
    b = np.array([2, 2, -2, -2], "int32")
    check_node("Div", [a, b])
    check_node("Mod", [a, b])
    check_node("Mod", [a, b], {"fmod": 1})
    check_node("Mod", [rand(5, low=-3, high=3), np.full(5, 1.5, "float32")], {"fmod": 1})


def test_comparisons_logic_and_bits():
    a, b = rand(6, dtype="int64", low=-3, high=3), rand(6, dtype="int64", seed=1, low=-3, high=3)
    for op in (
        "Equal",
        "Less",
        "Greater",
        "LessOrEqual",
        "GreaterOrEqual",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
    ):
        check_node(op, [a, b])
    p, q = rand(6, dtype="bool"), rand(6, dtype="bool", seed=1)
    for op in ("And", "Or", "Xor"):
        check_node(op, [p, q])
    check_node("Not", [p])
    check_node(
        "BitShift", [np.array([1, 8, 255], "uint8"), np.array([1, 2, 3], "uint8")], {"direction": "RIGHT"}
    )
    check_node(
        "BitShift", [np.array([1, 8, 3], "uint32"), np.array([1, 2, 3], "uint32")], {"direction": "LEFT"}
    )


def test_where_clip_cast():
    check_node("Where", [rand(3, 4, dtype="bool"), rand(3, 4), rand(1, 4, seed=2)])
    check_node("Clip", [rand(3, 4, low=-3, high=3), np.array(-1, "float32"), np.array(1.5, "float32")])
    check_node("Clip", [rand(3, 4, low=-3, high=3), None, np.array(0.5, "float32")])
    check_node("Clip", [rand(3, 4, low=-3, high=3)], {"min": -0.5, "max": 0.5}, opset=6)
    check_node("Cast", [rand(5, low=-3, high=3)], {"to": 6})
    check_node("CastLike", [rand(5, dtype="int32", low=-3, high=3), np.zeros(1, "float64")])


def test_isinf_isnan():
    x = np.array([1.0, np.inf, -np.inf, np.nan], "float32")
    check_node("IsNaN", [x])
    for pos, neg in ((1, 1), (1, 0), (0, 1)):
        check_node("IsInf", [x], {"detect_positive": pos, "detect_negative": neg})


REDUCE = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
]


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("const", [(), (1,)], ids=["runtime-axes", "constant-axes"])
def test_reductions(op, keepdims, const):
    x = rand(2, 3, 4, low=0.5, high=2.0)
    check_node(op, [x, np.array([0, -1], "int64")], {"keepdims": keepdims}, const_inputs=const, rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("const", [(), (1,)], ids=["runtime-axes", "constant-axes"])
def test_reductions_over_an_axis_empty_only_at_run_time(dtype, const):
    """A symbolic axis of size 0 when the model runs: every reduction gives its identity
    (sum 0, prod 1, max -inf or the lowest integer, LogSumExp -inf, ...) as the reference does."""
    ops = REDUCE if dtype == "float32" else ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1"]
    x = np.zeros((0, 3), dtype)
    axes = np.array([0], "int64")
    for op in ops:
        node = helper.make_node(op, ["x", "a"], ["y"], keepdims=0)
        inits = [numpy_helper.from_array(axes, "a")] if const else []
        inputs = [("x", dtype, ["n", 3])] + ([] if const else [("a", "int64", [1])])
        model = make_model([node], inputs, [("y", None, None)], initializers=inits)
        with np.errstate(invalid="ignore", divide="ignore"):  # the reference's mean of nothing
            check_model(model, [x] if const else [x, axes])


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum"])
def test_reductions_with_axes_attribute_and_no_axes(op):
    x = rand(2, 3, 4)
    check_node(op, [x], {"axes": [1]}, opset=11)
    check_node(op, [x], {"keepdims": 0}, opset=13)


def test_arg_reductions_cumsum_topk():
    x = np.array([[1, 3, 3, 0], [2, 2, 1, 2]], "float32")
    for op in ("ArgMax", "ArgMin"):
        check_node(op, [x], {"axis": 1, "keepdims": 0})
        check_node(op, [x], {"axis": 1, "select_last_index": 1})
    check_node("CumSum", [rand(3, 4), np.array(1, "int32")], {"exclusive": 1, "reverse": 1})
    check_node("CumSum", [rand(3, 4), np.array(0, "int64")], const_inputs=(1,))
    check_node("TopK", [rand(3, 5), np.array([2], "int64")], num_outputs=2)
    check_node(
        "TopK",
        [rand(3, 5), np.array([2], "int64")],
        {"largest": 0, "axis": 0},
        num_outputs=2,
        const_inputs=(1,),
    )


def test_cumprod_and_bfloat16_reductions():
    check_node("CumProd", [rand(3, 4, low=0.5, high=1.5), np.array(1, "int64")], {"reverse": 1}, opset=26)
    x = rand(2, 5).astype("float32")
    import ml_dtypes

    got = run_graphc(
        make_model(
            [helper.make_node("ReduceMax", ["x", "a"], ["y"])],
            [("x", ml_dtypes.bfloat16, [2, 5])],
            [("y", ml_dtypes.bfloat16, [2, 1])],
            initializers=[numpy_helper.from_array(np.array([1], "int64"), "a")],
        ),
        [x.astype(ml_dtypes.bfloat16)],
    )[0]
    np.testing.assert_array_equal(
        got.astype("float32"), x.astype(ml_dtypes.bfloat16).astype("float32").max(1, keepdims=True)
    )
