"""An If inside a function body (a model-local function here; ONNX schema functions such as
AffineGrid's alike) makes the importer build `main` without dataflow blocks, as an If in the
graph itself does: a Relax If cannot sit in a dataflow block."""

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx_testing import run_graphc, run_reference


def test_if_inside_a_local_function():
    then_graph = helper.make_graph(
        [helper.make_node("Div", ["fx", "fx"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Neg", ["fx"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])],
    )
    body = [
        helper.make_node("Mul", ["x", "x"], ["fx"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
    ]
    function = helper.make_function("custom", "Pick", ["x", "c"], ["y"], body,
                                    [helper.make_opsetid("", 18)])
    graph = helper.make_graph(
        [helper.make_node("Exp", ["a"], ["ea"]),
         helper.make_node("Pick", ["ea", "c"], ["out"], domain="custom")],
        "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [3])],
    )
    model = helper.make_model(graph, functions=[function],
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    a = np.array([0.5, -1.0, 2.0], "float32")
    for c in (np.array(True), np.array(False)):
        np.testing.assert_allclose(run_graphc(model, [a, c])[0], run_reference(model, [a, c])[0], rtol=1e-6)
