"""Tensor manipulation and shape computations against ONNX's reference implementation, each
shape-like operand both as a constant (folded at import) and as a run-time tensor."""

import numpy as np
import pytest
from onnx import helper, numpy_helper
from onnx_testing import check_model, check_node, make_model, rand

from graphc import relax
from graphc.frontend.onnx import from_onnx

BOTH = pytest.mark.parametrize("const", [(), (1, 2, 3, 4)], ids=["runtime", "constant"])


@BOTH
@pytest.mark.parametrize("shape", [[4, -1], [0, 0, 2, 2], [-1], [2, 0, -1]])
def test_reshape(const, shape):
    check_node("Reshape", [rand(2, 3, 4), np.array(shape, "int64")], const_inputs=const)


def test_reshape_allowzero_keeps_zero_sizes():
    check_node("Reshape", [rand(0, 3, 4), np.array([3, 4, 0], "int64")], {"allowzero": 1})


@BOTH
@pytest.mark.parametrize(
    "starts,ends,axes,steps",
    [
        ([0, 1], [2, 3], [0, 1], [1, 1]),
        ([-1], [-100], [1], [-1]),
        ([1], [1000], [-1], [2]),
        ([10], [-10], [0], [-3]),
    ],
)
def test_slice(const, starts, ends, axes, steps):
    ints = [np.array(v, "int64") for v in (starts, ends, axes, steps)]
    check_node("Slice", [rand(4, 5, 6), *ints], const_inputs=const)


@BOTH
def test_expand_tile_and_constant_of_shape(const):
    check_node("Expand", [rand(3, 1), np.array([2, 3, 4], "int64")], const_inputs=const)
    check_node("Tile", [rand(2, 3), np.array([2, 1], "int64")], const_inputs=const)
    check_node(
        "ConstantOfShape",
        [np.array([2, 3], "int64")],
        {"value": numpy_helper.from_array(np.array([7], "int32"))},
        const_inputs=tuple(c - 1 for c in const),
    )


@BOTH
def test_squeeze_unsqueeze_and_split(const):
    check_node("Squeeze", [rand(2, 1, 3, 1), np.array([1, -1], "int64")], const_inputs=(1,))
    check_node("Unsqueeze", [rand(2, 3), np.array([0, 3], "int64")], const_inputs=(1,))
    check_node(
        "Split", [rand(6, 4), np.array([2, 4], "int64")], {"axis": 0}, num_outputs=2, const_inputs=const
    )


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_split_equal_parts_across_opsets(opset):
    attrs = {"axis": 1, **({"num_outputs": 3} if opset >= 18 else {})}
    check_node("Split", [rand(2, 7)], attrs, num_outputs=3, opset=opset)


def test_concat_transpose_flatten_identity():
    check_node("Concat", [rand(2, 3), rand(2, 1, seed=1)], {"axis": -1})
    check_node("Transpose", [rand(2, 3, 4)], {"perm": [2, 0, 1]})
    check_node("Flatten", [rand(2, 3, 4)], {"axis": 2})
    check_node("Identity", [rand(3)])


@pytest.mark.parametrize("indices", [np.array([[0, -1], [2, 1]], "int64"), np.array(1, "int64")])
def test_gather_negative_indices(indices):
    check_node("Gather", [rand(3, 4), indices], {"axis": 0})
    check_node("Gather", [rand(3, 4), indices], {"axis": 0}, const_inputs=(1,))


def test_gather_elements_and_nd_scatter():
    check_node("GatherElements", [rand(3, 3), np.array([[1, 2], [0, 2], [2, 1]], "int64")], {"axis": 1})
    check_node("GatherND", [rand(2, 2, 3), np.array([[0, 1], [1, 0]], "int64")])
    check_node(
        "ScatterElements",
        [rand(3, 3), np.array([[1, 0], [0, 2], [2, 1]], "int64"), rand(3, 2, seed=2)],
        {"axis": 1},
    )
    check_node("ScatterND", [rand(4, 3), np.array([[1], [3]], "int64"), rand(2, 3, seed=2)])


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(mode):
    check_node(
        "Pad",
        [rand(3, 4), np.array([1, 2, 1, 0], "int64"), np.array(1.5, "float32")],
        {"mode": mode},
        opset=19,
        const_inputs=(1, 2),
    )


def test_pad_with_axes_and_negative_widths():
    # onnx.reference cannot take negative pads: ONNX Runtime is the reference
    check_node(
        "Pad",
        [rand(3, 4), np.array([2, -1], "int64"), None, np.array([1], "int64")],
        const_inputs=(1, 3),
        reference="ort",
    )


def test_depth_space_trilu_one_hot():
    check_node("DepthToSpace", [rand(1, 8, 2, 3)], {"blocksize": 2, "mode": "CRD"})
    check_node("DepthToSpace", [rand(1, 8, 2, 3)], {"blocksize": 2})
    check_node("SpaceToDepth", [rand(1, 2, 4, 6)], {"blocksize": 2})
    check_node("Trilu", [rand(4, 5), np.array(-1, "int64")], {"upper": 0})
    check_node("Trilu", [rand(4, 5), np.array(1, "int64")], const_inputs=(1,))
    check_node(
        "OneHot",
        [np.array([0, 2, -1], "int64"), np.array(4, "int64"), np.array([0, 5], "float32")],
        {"axis": 0},
    )


def test_shape_chains_fold_when_static():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i"], ["d"], axis=0),
        helper.make_node("Concat", ["d", "m"], ["t"], axis=0),
        helper.make_node("Reshape", ["x", "t"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([1], "int64"), "i"),
        numpy_helper.from_array(np.array([-1], "int64"), "m"),
    ]
    model = make_model(nodes, [("x", None, [2, 3, 4])], [("y", None, None)], initializers=inits)
    mod = from_onnx(model)
    calls = [b.value.op.name for b in mod["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)]
    assert calls == ["relax.reshape"]  # the whole size computation folded away
    check_model(model, [rand(2, 3, 4)])


def test_constant_of_static_shape_is_a_constant_weight():
    # the ONNX light models ship their weights as ConstantOfShape of shape initializers: the
    # convolution must see a constant weight (packed once), not a `full` run on every call
    half = numpy_helper.from_array(np.array([0.5], "float32"))
    nodes = [
        helper.make_node("ConstantOfShape", ["ws"], ["w"], value=half),
        helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
    ]
    inits = [numpy_helper.from_array(np.array([16, 5, 3, 3], "int64"), "ws")]
    model = make_model(nodes, [("x", None, [1, 5, 7, 9])], [("y", None, None)], initializers=inits)
    mod = from_onnx(model)
    calls = [b.value.op.name for b in mod["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)]
    assert calls == ["relax.nn.conv2d"]
    check_model(model, [rand(1, 5, 7, 9)])


def test_shape_chains_stay_symbolic_with_symbolic_dims():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "zero", "two"], ["nb"]),
        helper.make_node("Concat", ["nb", "m"], ["t"], axis=0),
        helper.make_node("Reshape", ["x", "t"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(v, "int64"), n)
        for n, v in (("zero", [0]), ("two", [2]), ("m", [-1]))
    ]
    model = make_model(nodes, [("x", None, ["n", 3, 4, 5])], [("y", None, None)], initializers=inits)
    mod = from_onnx(model)
    assert "R.reshape(x, R.shape([n, 3, 20]))" in mod.script()
    for n in (1, 4):
        check_model(model, [rand(n, 3, 4, 5)])


def test_size_range_and_eye_like():
    check_node("Size", [rand(2, 5)])
    check_node("Range", [np.array(1, "int64"), np.array(10, "int64"), np.array(3, "int64")])
    check_node("Range", [np.array(1.0, "float32"), np.array(2.0, "float32"), np.array(0.25, "float32")])
    check_node(
        "Range", [np.array(5, "int32"), np.array(-1, "int32"), np.array(-2, "int32")], const_inputs=(0, 1, 2)
    )
    check_node("EyeLike", [rand(3, 4)], {"k": 1})


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_with_run_time_pads_value_and_axes(mode):
    x = rand(3, 4)
    pads = np.array([1, 2, 0, 1], "int64")
    # every operand a graph input: widths, fill value and axes read at run time
    check_node(
        "Pad", [x, pads, np.array(2.5, "float32"), np.array([0, -1], "int64")], {"mode": mode}, opset=19
    )
    check_node("Pad", [x, np.array([0, -1, 1, 1], "int64")], {"mode": "constant"}, reference="ort")
