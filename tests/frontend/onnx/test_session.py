"""graphc.frontend.onnx.InferenceSession: ONNX Runtime's interface, the on-disk executable cache."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_testing import make_model

from graphc.frontend.onnx import InferenceSession


def _model():
    nodes = [helper.make_node("Add", ["x", "w"], ["s"]), helper.make_node("Relu", ["s"], ["y"]),
             helper.make_node("Neg", ["s"], ["z"])]
    w = helper.make_tensor("w", TensorProto.FLOAT, [3], [1.0, -2.0, 0.5])
    outputs = [("y", None, None), ("z", None, None)]
    return make_model(nodes, [("x", None, ["n", 3])], outputs, initializers=[w])


def test_inputs_outputs_and_run_like_onnx_runtime(tmp_path):
    sess = InferenceSession(_model(), cache_dir=tmp_path)
    assert [(i.name, i.shape, i.type) for i in sess.get_inputs()] == [("x", ["n", 3], "tensor(float)")]
    assert [o.name for o in sess.get_outputs()] == ["y", "z"]
    x = np.array([[1, 1, 1], [-3, 4, -1]], "float32")
    s = x + np.array([1.0, -2.0, 0.5], "float32")
    y, z = sess.run(None, {"x": x})
    np.testing.assert_allclose(y, np.maximum(s, 0))
    np.testing.assert_allclose(z, -s)
    [only_z] = sess.run(["z"], {"x": x[:1]})
    np.testing.assert_allclose(only_z, -s[:1])


def test_a_second_session_loads_the_cached_executable(tmp_path):
    first = InferenceSession(_model(), cache_dir=tmp_path)
    assert not first.cache_hit and first.cache_path.is_file()
    second = InferenceSession(_model().SerializeToString(), cache_dir=tmp_path)
    assert second.cache_hit and second.cache_path == first.cache_path
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(second.run(["y"], {"x": x})[0], first.run(["y"], {"x": x})[0])


def test_the_cache_key_depends_on_the_target_options_and_model(tmp_path):
    a = InferenceSession(_model(), cache_dir=tmp_path)
    b = InferenceSession(_model(), cache_dir=tmp_path, shape_dict={"x": [2, 3]})
    other = _model()
    other.graph.node[1].op_type = "Sigmoid"
    c = InferenceSession(other, cache_dir=tmp_path)
    assert len({a.cache_path, b.cache_path, c.cache_path}) == 3 and not c.cache_hit


def test_a_damaged_cache_entry_is_recompiled(tmp_path):
    first = InferenceSession(_model(), cache_dir=tmp_path)
    first.cache_path.write_bytes(b"not an executable")
    again = InferenceSession(_model(), cache_dir=tmp_path)
    assert not again.cache_hit
    assert again.run(["y"], {"x": np.zeros((1, 3), "float32")})[0].tolist() == [[1.0, 0.0, 0.5]]


def test_run_names_missing_inputs_and_unknown_outputs(tmp_path):
    sess = InferenceSession(_model(), cache_dir=False)
    assert sess.cache_path is None
    with pytest.raises(ValueError, match=r"missing \['x'\]"):
        sess.run(None, {"q": np.zeros((1, 3), "float32")})
    with pytest.raises(ValueError, match="no output 'w'"):
        sess.run(["w"], {"x": np.zeros((1, 3), "float32")})
