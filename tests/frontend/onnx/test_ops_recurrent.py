"""RNN, GRU and LSTM against ONNX Runtime: every direction and layout, sequence_lens, initial
states, peepholes, linear_before_reset, activations with alpha/beta, clip; weights and
optional inputs both as constants and as graph inputs."""

import numpy as np
import pytest
from onnx import helper
from onnx_testing import check_node, make_model, rand

from graphc.errors import FrontendError
from graphc.frontend.onnx import from_onnx

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
SEQ, BATCH, IN, HID = 4, 3, 2, 5


def _inputs(kind, directions=1, layout=0, bias=True, lens=None, init=False, peep=False, seed=0):
    g = GATES[kind]
    x = rand(SEQ, BATCH, IN, seed=seed) if layout == 0 else rand(BATCH, SEQ, IN, seed=seed)
    w = rand(directions, g * HID, IN, seed=seed + 1)
    r = rand(directions, g * HID, HID, seed=seed + 2, low=-0.5, high=0.5)
    inputs = [x, w, r, rand(directions, 2 * g * HID, seed=seed + 3) if bias else None]
    inputs.append(None if lens is None else np.asarray(lens, "int32"))
    state = (directions, BATCH, HID) if layout == 0 else (BATCH, directions, HID)
    inputs.append(rand(*state, seed=seed + 4) if init else None)
    if kind == "LSTM":
        inputs.append(rand(*state, seed=seed + 5) if init else None)
        inputs.append(rand(directions, 3 * HID, seed=seed + 6) if peep else None)
    while inputs[-1] is None:
        inputs.pop()
    return inputs


def _check(kind, attrs, inputs, const_inputs=(), opset=22, reference="ort"):
    outputs = 3 if kind == "LSTM" else 2
    return check_node(
        kind,
        inputs,
        dict(hidden_size=HID, **attrs),
        opset=opset,
        num_outputs=outputs,
        const_inputs=const_inputs,
        reference=reference,
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions(kind, direction):
    directions = 2 if direction == "bidirectional" else 1
    _check(kind, {"direction": direction}, _inputs(kind, directions, init=True))


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_batch_major_layout_with_initial_states(kind):
    # ONNX Runtime refuses layout=1: ONNX's reference implementation checks it
    attrs = {"layout": 1, "direction": "bidirectional"}
    _check(kind, attrs, _inputs(kind, 2, layout=1, init=True), reference="onnx")


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens_as_a_graph_input(kind, direction):
    directions = 2 if direction == "bidirectional" else 1
    _check(kind, {"direction": direction}, _inputs(kind, directions, lens=[4, 1, 3], init=True))


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_constant_weights_and_sequence_lens(kind):
    inputs = _inputs(kind, 1, lens=[2, 4, 3])
    _check(kind, {}, inputs, const_inputs=(1, 2, 3, 4))


def test_no_bias_defaults():
    _check("RNN", {}, _inputs("RNN", bias=False))


def test_gru_linear_before_reset():
    _check("GRU", {"linear_before_reset": 1, "direction": "bidirectional"}, _inputs("GRU", 2, init=True))


def test_lstm_peepholes_and_input_forget():
    _check("LSTM", {}, _inputs("LSTM", init=True, peep=True))
    _check("LSTM", {"input_forget": 1}, _inputs("LSTM", init=True, peep=True, seed=3))


@pytest.mark.parametrize(
    "kind,activations,alpha,beta",
    [
        ("RNN", ["Relu"], None, None),
        ("RNN", ["LeakyRelu"], [0.2], None),
        ("GRU", ["HardSigmoid", "Softsign"], [0.3], [0.4]),
        ("LSTM", ["Sigmoid", "Elu", "Softplus"], [0.7], None),
        ("LSTM", ["HardSigmoid", "ScaledTanh", "Affine"], [0.25, 0.9, 1.5], [0.5, 1.1, 0.1]),
    ],
)
def test_activations_with_alpha_and_beta(kind, activations, alpha, beta):
    attrs = {"activations": activations}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    _check(kind, attrs, _inputs(kind, init=True))


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_clip(kind):
    inputs = _inputs(kind, init=True)
    inputs[0] = inputs[0] * 4
    _check(kind, {"clip": 0.5}, inputs)


def test_opset_7_and_the_onnx_reference():
    check_node("GRU", _inputs("GRU"), {"hidden_size": HID}, opset=7, num_outputs=2, rtol=1e-4)
    check_node("LSTM", _inputs("LSTM"), {"hidden_size": HID}, opset=7, num_outputs=3, rtol=1e-4)


def _model(kind, attrs, shape=(SEQ, BATCH, IN)):
    g = GATES[kind]
    node = helper.make_node(kind, ["x", "w", "r"], ["y"], hidden_size=HID, **attrs)
    return make_model(
        [node],
        [("x", None, list(shape)), ("w", None, [1, g * HID, IN]), ("r", None, [1, g * HID, HID])],
        [("y", None, None)],
        opset=22,
    )


@pytest.mark.parametrize(
    "attrs,message",
    [
        ({"direction": "sideways"}, "direction='sideways'"),
        ({"activations": ["Gelu"]}, "unknown function 'Gelu'"),
        ({"activations": ["Tanh", "Tanh"]}, "must name 1 function(s)"),
        ({"activations": ["Tanh"], "activation_alpha": [1.0]}, "activation_alpha"),
        ({"clip": -1.0}, "clip=-1.0"),
    ],
)
def test_bad_attributes_are_refused(attrs, message):
    with pytest.raises(FrontendError, match="RNN node") as info:
        from_onnx(_model("RNN", attrs))
    assert message in str(info.value)


def test_a_run_time_sequence_length_is_refused():
    with pytest.raises(FrontendError, match="known only at run time"):
        from_onnx(_model("LSTM", {}, shape=("seq", BATCH, IN)))
