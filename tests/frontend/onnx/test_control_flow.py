"""Control flow, sequences and optionals: If (both forms of its condition), unrolled Loop and
Scan, sequence operators and sequence inputs."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_testing import check_model, make_model, rand

from graphc.frontend.onnx import from_onnx
from graphc.frontend.onnx.backend import GraphcBackend


def _branch(name, op_type, value):
    node = helper.make_node(op_type, ["x", "c_" + name], ["y_" + name])
    return helper.make_graph(
        [node],
        name,
        [],
        [helper.make_tensor_value_info("y_" + name, TensorProto.FLOAT, [2])],
        initializer=[numpy_helper.from_array(np.full(2, value, "float32"), "c_" + name)],
    )


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_a_run_time_condition(cond):
    node = helper.make_node(
        "If", ["c"], ["y"], then_branch=_branch("then", "Add", 10.0), else_branch=_branch("else", "Mul", 3.0)
    )
    model = make_model([node], [("c", np.bool_, []), ("x", None, [2])], [("y", TensorProto.FLOAT, [2])])
    check_model(model, [np.array(cond), np.array([1.0, 2.0], "float32")])


def test_if_with_a_constant_condition_inlines_its_branch():
    node = helper.make_node(
        "If", ["c"], ["y"], then_branch=_branch("then", "Add", 10.0), else_branch=_branch("else", "Mul", 3.0)
    )
    model = make_model(
        [node],
        [("x", None, [2])],
        [("y", TensorProto.FLOAT, [2])],
        initializers=[numpy_helper.from_array(np.array(False), "c")],
    )
    assert "R.If" not in from_onnx(model).script()
    check_model(model, [np.array([1.0, 2.0], "float32")])


def test_loop_with_a_constant_trip_count_is_unrolled():
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
            helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["acc_out", "i_f"], ["scan_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2]),
        ],
    )
    node = helper.make_node("Loop", ["M", "cond", "acc0"], ["acc", "scans"], body=body)
    inits = [
        numpy_helper.from_array(np.array(4, "int64"), "M"),
        numpy_helper.from_array(np.array(True), "cond"),
        numpy_helper.from_array(np.zeros(2, "float32"), "acc0"),
    ]
    model = make_model(
        [node],
        [("x", None, [2])],
        [("acc", TensorProto.FLOAT, [2]), ("scans", TensorProto.FLOAT, [4, 2])],
        initializers=inits,
    )
    check_model(model, [np.array([1.0, -2.0], "float32")])


def test_scan_accumulates_along_the_sequence():
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["y_t"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [3]),
        ],
        [
            helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [3]),
        ],
    )
    node = helper.make_node(
        "Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1, scan_input_directions=[1]
    )
    model = make_model(
        [node],
        [("s0", None, [3]), ("xs", None, [4, 3])],
        [("s", TensorProto.FLOAT, [3]), ("ys", TensorProto.FLOAT, [4, 3])],
    )
    check_model(model, [rand(3), rand(4, 3, seed=1)], reference="ort")  # onnx.reference: forward scans only


def test_sequences_from_inputs_and_operators():
    nodes = [
        helper.make_node("SequenceInsert", ["seq", "t"], ["s2"]),
        helper.make_node("SequenceAt", ["s2", "i"], ["a"]),
        helper.make_node("SequenceLength", ["s2"], ["n"]),
        helper.make_node("ConcatFromSequence", ["s2"], ["c"], axis=0),
    ]
    seq_type = helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None)
    graph = helper.make_graph(
        nodes,
        "g",
        [seq_type, helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 3])],
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 3]),
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.FLOAT, [4, 3]),
        ],
        initializer=[numpy_helper.from_array(np.array(-1, "int64"), "i")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    seq = [rand(2, 3), rand(1, 3, seed=1)]
    t = rand(1, 3, seed=2)
    a, n, c = GraphcBackend.run_model(model, [seq, t])
    np.testing.assert_array_equal(a, t)
    assert n == 3
    np.testing.assert_array_equal(c, np.concatenate(seq + [t]))


def test_split_to_sequence_and_optionals():
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0),
        helper.make_node("Optional", ["x"], ["o"]),
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("OptionalGetElement", ["o"], ["got"]),
        helper.make_node("SequenceAt", ["s", "one"], ["second"]),
    ]
    model = make_model(
        nodes,
        [("x", None, [2, 3])],
        [
            ("has", TensorProto.BOOL, []),
            ("got", TensorProto.FLOAT, [2, 3]),
            ("second", TensorProto.FLOAT, [2]),
        ],
        initializers=[numpy_helper.from_array(np.array(1, "int64"), "one")],
    )
    x = rand(2, 3)
    has, got, second = GraphcBackend.run_model(model, [x])
    assert bool(has)
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(second, x[:, 1])


def _optional_model(nodes, elem_type, outputs):
    graph = helper.make_graph(
        nodes, "g", [helper.make_value_info("opt", helper.make_optional_type_proto(elem_type))], outputs
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_optional_tensor_input_present_and_empty():
    nodes = [helper.make_node("OptionalHasElement", ["opt"], ["has"])]
    tensor = helper.make_tensor_type_proto(TensorProto.FLOAT, [4])
    model = _optional_model(nodes, tensor, [helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    rep = GraphcBackend.prepare(model)
    assert bool(rep.run([rand(4)])[0]) is True
    assert bool(rep.run([None])[0]) is False  # compiled again, the input imported as empty
    # from_onnx: shape_dict None marks the optional input empty; it is then no parameter
    assert not from_onnx(model, shape_dict={"opt": None})["main"].params


def test_optional_sequence_input_through_identity_and_get_element():
    nodes = [
        helper.make_node("Identity", ["opt"], ["same"]),
        helper.make_node("OptionalGetElement", ["opt"], ["seq"]),
    ]
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT32, [None]))
    outputs = [
        helper.make_value_info("same", helper.make_optional_type_proto(seq_type)),
        helper.make_value_info("seq", seq_type),
    ]
    model = _optional_model(nodes, seq_type, outputs)
    seq = [np.arange(4, dtype="int32"), np.arange(2, dtype="int32")]
    same, got = GraphcBackend.run_model(model, [seq])
    for a, b in zip(same + got, seq + seq):
        np.testing.assert_array_equal(a, b)
    assert (
        GraphcBackend.run_model(model.__class__.FromString(model.SerializeToString()), [seq])[1][1].size == 2
    )


def test_if_returning_an_empty_optional_from_one_branch():
    elem = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    opt_type = helper.make_optional_type_proto(elem)
    then_graph = helper.make_graph(
        [helper.make_node("Optional", [], ["empty"], type=elem)],
        "then",
        [],
        [helper.make_value_info("empty", opt_type)],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Optional", ["x"], ["full"])],
        "else",
        [],
        [helper.make_value_info("full", opt_type)],
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [helper.make_value_info("y", opt_type)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rep = GraphcBackend.prepare(model)
    x = rand(2)
    assert rep.run([np.array(True), x])[0] is None
    np.testing.assert_array_equal(rep.run([np.array(False), x])[0], x)


@pytest.mark.parametrize("position", [0, 1, 2, -1, -2])
def test_sequence_insert_at_a_run_time_position(position):
    nodes = [helper.make_node("SequenceInsert", ["seq", "t", "pos"], ["out"])]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("t", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("pos", TensorProto.INT64, []),
        ],
        [helper.make_tensor_sequence_value_info("out", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    seq, t = [rand(4), rand(2, seed=1)], rand(3, seed=2)
    rep = GraphcBackend.prepare(model)
    (got,) = rep.run([seq, t, np.array(position, "int64")])
    expected = list(seq)
    expected.insert(position, t)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    with pytest.raises(AssertionError, match="SequenceInsert node .*out of range"):
        rep.run([seq, t, np.array(3, "int64")])


def test_split_to_sequence_with_a_run_time_split():
    nodes = [helper.make_node("SplitToSequence", ["x", "split"], ["s"], axis=1)]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("split", TensorProto.INT64, [3]),
        ],
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rep = GraphcBackend.prepare(model)
    x = rand(2, 6)
    for split in ([1, 2, 3], [4, 0, 2]):
        (got,) = rep.run([x, np.array(split, "int64")])
        for g, e in zip(got, np.split(x, np.cumsum(split)[:-1], axis=1)):
            np.testing.assert_array_equal(g, e)
    with pytest.raises(AssertionError, match="SplitToSequence node .*add up"):
        rep.run([x, np.array([1, 1, 1], "int64")])
