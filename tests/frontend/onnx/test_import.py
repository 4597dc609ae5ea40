"""The ONNX importer itself: the forms a model comes in, inputs and their symbolic sizes,
parameters, opset versioning, and every error a bad or unsupported model gets."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_testing import check_model, make_model, run_graphc

import graphc
from graphc import relax, tir
from graphc.errors import FrontendError, UnsupportedOperatorError
from graphc.frontend import detach_params
from graphc.frontend.onnx import from_onnx, load


def _relu_model(shape=("n", 3)):
    return make_model(
        [helper.make_node("Relu", ["x"], ["y"])], [("x", None, list(shape))], [("y", None, None)]
    )


def test_model_proto_path_and_bytes_import_alike(tmp_path):
    model = _relu_model()
    path = tmp_path / "relu.onnx"
    onnx.save(model, path)
    texts = {from_onnx(m).script() for m in (model, str(path), path, model.SerializeToString())}
    assert len(texts) == 1
    assert load(path).script() == texts.pop()


def test_relax_frontend_onnx_is_the_onnx_frontend():
    assert relax.frontend.onnx.from_onnx is from_onnx


def test_compile_accepts_path_bytes_and_proto(tmp_path):
    model = _relu_model((2, 3))
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    x = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    for form in (model, str(path), model.SerializeToString()):
        vm = relax.VirtualMachine(graphc.compile(form, "llvm"), graphc.cpu())
        np.testing.assert_array_equal(vm["main"](x).numpy(), np.maximum(x, 0))


def test_compile_passes_shape_dict_through():
    vm = relax.VirtualMachine(graphc.compile(_relu_model(("a", "b")), shape_dict={"x": [1, 4]}), graphc.cpu())
    with pytest.raises(ValueError):
        vm["main"](np.zeros((2, 4), "float32"))
    assert vm["main"](np.zeros((1, 4), "float32")).shape == (1, 4)


def test_dim_params_become_shared_tir_vars_and_one_executable_serves_every_size():
    model = make_model(
        [helper.make_node("Add", ["x", "y"], ["z"])],
        [("x", None, ["batch", 4]), ("y", None, ["batch", 4])],
        [("z", None, None)],
    )
    mod = from_onnx(model)
    x, y = mod["main"].params
    assert isinstance(x.struct_info.shape_values[0], tir.Var)
    assert x.struct_info.shape_values[0] is y.struct_info.shape_values[0]
    vm = relax.VirtualMachine(graphc.compile(mod), graphc.cpu())
    for n in (1, 3, 7):
        a, b = np.ones((n, 4), "float32"), np.full((n, 4), 2, "float32")
        np.testing.assert_array_equal(vm["main"](a, b).numpy(), a + b)


def test_unknown_dims_get_their_own_vars_and_shape_dict_overrides():
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], [("x", None, [None, 3])], [("y", None, None)]
    )
    (x,) = from_onnx(model)["main"].params
    assert str(x.struct_info.shape_values[0]) == "x_dim0"
    (x,) = from_onnx(model, shape_dict={"x": [5, 3]})["main"].params
    assert [int(d.value) for d in x.struct_info.shape_values] == [5, 3]
    (x,) = from_onnx(model, dtype_dict={"x": "float64"})["main"].params
    assert x.struct_info.dtype == "float64"


def test_initializers_are_constants_or_parameters():
    w = np.arange(6, dtype="float32").reshape(2, 3)
    model = make_model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        [("x", None, [2, 3])],
        [("y", None, None)],
        initializers=[numpy_helper.from_array(w, "w")],
    )
    assert [p.name_hint for p in from_onnx(model)["main"].params] == ["x"]
    mod = from_onnx(model, keep_params_in_input=True)
    assert [p.name_hint for p in mod["main"].params] == ["x", "w"]
    assert mod["main"].attrs["num_input"] == 1
    mod, params = detach_params(mod)
    np.testing.assert_array_equal(params["main"][0].numpy(), w)
    vm = relax.VirtualMachine(graphc.compile(mod), graphc.cpu())
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(vm["main"](x, params["main"][0]).numpy(), x + w)


def test_input_names_are_sanitized_unless_asked_not_to():
    model = make_model(
        [helper.make_node("Relu", ["input.1"], ["y"])], [("input.1", None, [2])], [("y", None, None)]
    )
    assert [p.name_hint for p in from_onnx(model)["main"].params] == ["input_1"]
    assert [p.name_hint for p in from_onnx(model, sanitize_input_names=False)["main"].params] == ["input.1"]


def test_the_models_opset_picks_the_converter():
    # Softmax before opset 13 flattens at axis 1; from 13 it works along the last axis
    # (onnx.reference applies the new rule to old models: ONNX Runtime is the reference here)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype("float32")
    for opset in (7, 11, 13, 21):
        model = make_model(
            [helper.make_node("Softmax", ["x"], ["y"])],
            [("x", None, [2, 3, 4])],
            [("y", None, None)],
            opset=opset,
        )
        check_model(model, [x], reference="ort")


def test_reduce_sum_axes_move_from_attribute_to_input_at_opset_13():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    old = make_model(
        [helper.make_node("ReduceSum", ["x"], ["y"], axes=[1])],
        [("x", None, [2, 3, 4])],
        [("y", None, None)],
        opset=11,
    )
    new = make_model(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"])],
        [("x", None, [2, 3, 4])],
        [("y", None, None)],
        opset=13,
        initializers=[numpy_helper.from_array(np.array([1], "int64"), "axes")],
    )
    for model in (old, new):
        (got,) = run_graphc(model, [x])
        np.testing.assert_array_equal(got, x.sum(axis=1, keepdims=True))


def test_every_unsupported_operator_is_listed_at_once():
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("NoSuchOp", ["a"], ["b"], name="first"),
        helper.make_node("NoSuchOp", ["b"], ["c"]),
        helper.make_node("Frobnicate", ["c"], ["d"], domain="my.org"),
    ]
    model = make_model(nodes, [("x", None, [2])], [("d", None, None)], domains=[("my.org", 1)])
    model = onnx.ModelProto.FromString(model.SerializeToString())
    with pytest.raises(UnsupportedOperatorError) as info:
        from_onnx(_unchecked(model))
    text = str(info.value)
    assert "2 operator(s)" in text
    assert "NoSuchOp (domain ai.onnx, opset 18): 2 node(s), first 'first'" in text
    assert "Frobnicate (domain my.org, opset 1): 1 node(s)" in text


def _unchecked(model):
    """`model` with onnx.checker switched off (it rejects unknown operators itself)."""
    from graphc.frontend.onnx import importer

    return importer.GraphImporter(model).run()


def test_an_unhandled_attribute_value_is_rejected_by_name():
    node = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], sampling_ratio=-1, name="roi1")
    inputs = [("x", None, [1, 1, 4, 4]), ("r", None, [1, 4]), ("b", TensorProto.INT64, [1])]
    model = make_model([node], inputs, [("y", None, None)])
    expected = r"RoiAlign node 'roi1' \(opset 16\): attribute sampling_ratio=-1 "
    with pytest.raises(FrontendError, match=expected):
        from_onnx(model)


def test_an_unread_optional_input_is_rejected():
    # Dropout's training_mode=True would need random numbers: refused, not ignored
    nodes = [helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")]
    inits = [
        numpy_helper.from_array(np.array(0.5, "float32"), "r"),
        numpy_helper.from_array(np.array(True), "t"),
    ]
    model = make_model(nodes, [("x", None, [2])], [("y", None, None)], initializers=inits)
    with pytest.raises(FrontendError, match="Dropout node 'drop'.*training_mode"):
        from_onnx(model)


def test_truncated_and_garbage_models_raise_a_frontend_error(tmp_path):
    data = _relu_model().SerializeToString()
    for bad in (data[: len(data) // 2], b"\x00\x01garbage", b""):
        with pytest.raises(FrontendError, match="cannot read the ONNX model"):
            from_onnx(bad)
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[:7])
    with pytest.raises(FrontendError, match="cut.onnx"):
        from_onnx(path)
    with pytest.raises(FrontendError, match="does not exist"):
        from_onnx(tmp_path / "missing.onnx")


def test_a_model_failing_the_checker_is_reported():
    model = _relu_model()
    model.graph.node[0].op_type = ""
    with pytest.raises(FrontendError, match="malformed"):
        from_onnx(model)


def test_an_undefined_value_is_named():
    node = helper.make_node("Add", ["x", "ghost"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(FrontendError, match="ghost"):
        from_onnx(model)


def test_an_initializer_of_the_wrong_size_is_named():
    raw = numpy_helper.from_array(np.ones(6, "float32"), "w")
    raw.dims[:] = [2, 4]  # 8 elements declared, 6 stored
    listed = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3], float_data=[1.0, 2.0])
    for bad in (raw, listed):
        model = make_model(
            [helper.make_node("Add", ["x", "w"], ["y"])],
            [("x", None, [2, 3])],
            [("y", None, None)],
            initializers=[bad],
        )
        with pytest.raises(FrontendError, match=r"tensor name: w|'w'"):
            from_onnx(model)


def test_expanded_function_bodies_import_operators_without_a_converter():
    # Celu has a converter; its expanded ONNX function (the schema's body) imports as well
    x = np.linspace(-3, 3, 12, dtype="float32").reshape(3, 4)
    schema = onnx.defs.get_schema("Celu", 18)
    assert schema.has_function or schema.has_context_dependent_function
    model = make_model(
        [helper.make_node("Celu", ["x"], ["y"], alpha=2.0)], [("x", None, [3, 4])], [("y", None, None)]
    )
    check_model(model, [x])


def test_the_coverage_doc_is_up_to_date():
    """docs/onnx_frontend.md is what scripts/onnx_coverage.py generates from the converter table."""
    script = Path(__file__).resolve().parents[3] / "scripts" / "onnx_coverage.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
