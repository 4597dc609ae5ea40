"""Values a converter must not trust: index and position inputs out of range stop the model
with an error naming the operator and the value, in a separate process (a kernel that read or
wrote out of bounds could crash it), and the values just inside the range still match ONNX's
reference implementation."""

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_testing import check_node, make_model, rand

from graphc.errors import FrontendError
from graphc.frontend.onnx import from_onnx

_RUNNER = r"""
import json, sys
import numpy as np
import graphc
from graphc import relax
from graphc.frontend.onnx import from_onnx

folder = sys.argv[1]
report = []
for case in json.load(open(f"{folder}/cases.json")):
    feeds = [np.load(f"{folder}/{name}") for name in case["inputs"]]
    try:
        exe = graphc.compile(from_onnx(f"{folder}/{case['model']}"), "llvm")
        relax.VirtualMachine(exe, graphc.cpu())["main"](*feeds)
        report.append(["ok", ""])
    except Exception as err:  # the test reads the type and the message
        report.append([type(err).__name__, str(err)])
print(json.dumps(report))
"""


def run_isolated(tmp_path, cases):
    """Run each (model, inputs) of `cases` through graphc in one child process: a list of
    (exception type name or "ok", message). The child must exit normally."""
    listed = []
    for k, (model, inputs) in enumerate(cases):
        onnx.save(model, tmp_path / f"m{k}.onnx")
        names = []
        for j, value in enumerate(inputs):
            names.append(f"m{k}_in{j}.npy")
            np.save(tmp_path / names[-1], value)
        listed.append({"model": f"m{k}.onnx", "inputs": names})
    (tmp_path / "cases.json").write_text(json.dumps(listed))
    done = subprocess.run([sys.executable, "-c", _RUNNER, str(tmp_path)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _roi_align_model(sampling_ratio=2, batch=2, height=6, width=7, rois=3):
    node = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], sampling_ratio=sampling_ratio,
                            output_height=3, output_width=2, name="roi")
    inputs = [("x", None, [batch, 3, height, width]), ("r", None, [rois, 4]),
              ("b", TensorProto.INT64, [rois])]
    return make_model([node], inputs, [("y", None, None)], opset=16)


def _tensor_scatter_model(mode="linear"):
    node = helper.make_node("TensorScatter", ["c", "u", "w"], ["y"], mode=mode, name="ts")
    inputs = [("c", None, [3, 2, 5, 4]), ("u", None, [3, 2, 2, 4]), ("w", TensorProto.INT64, [3])]
    return make_model([node], inputs, [("y", None, None)], opset=24)


def test_out_of_range_indices_and_positions_raise(tmp_path):
    x = rand(2, 3, 6, 7)
    rois = np.array([[0.5, 1.0, 4.0, 5.5], [0.0, 0.0, 7.0, 6.0], [2.0, 2.0, 2.2, 2.1]], "float32")
    cache, update = rand(3, 2, 5, 4), rand(3, 2, 2, 4, seed=1)
    cases = [
        (_roi_align_model(), [x, rois, np.array([1, 2, 0], "int64")]),   # image 2 of 2
        (_roi_align_model(), [x, rois, np.array([1, -1, 0], "int64")]),  # negative image index
        (_roi_align_model(0), [x, rois * 4, np.array([1, 0, 0], "int64")]),  # regions 4x the image
        (_tensor_scatter_model(), [cache, update, np.array([0, 4, 1], "int64")]),  # writes 4, 5
        (_tensor_scatter_model(), [cache, update, np.array([0, -1, 1], "int64")]),
        (_tensor_scatter_model(), [cache, update, np.array([0, 3, 1], "int64")]),  # the last fit
    ]
    report = run_isolated(tmp_path, cases)
    kind, message = report[0]
    assert kind == "KernelIndexError" and "roi_align: batch index 2 in batch_indices" in message
    assert "[0, 2)" in message
    kind, message = report[1]
    assert kind == "KernelIndexError" and "batch index -1" in message
    kind, message = report[2]
    assert kind == "KernelIndexError" and "samples per bin along the height" in message
    for kind, message in report[3:5]:
        assert kind == "AssertionError"
        assert "TensorScatter node 'ts' (opset 24): mode 'linear' writes 2 positions" in message
        assert "the cache axis of length 5" in message
    assert "[0 4 1]" in report[3][1] and "[ 0 -1  1]" in report[4][1]
    assert report[5] == ["ok", ""]


def _indexing_model(op_type, idx_shape, **attrs):
    """`op_type` on data x (5, 3) and int64 indices (ScatterElements: updates like indices)."""
    names = ["x", "i", "u"] if op_type == "ScatterElements" else ["x", "i"]
    node = helper.make_node(op_type, names, ["y"], name="pick", **attrs)
    inputs = [("x", None, [5, 3]), ("i", TensorProto.INT64, idx_shape)]
    if op_type == "ScatterElements":
        inputs.append(("u", None, idx_shape))
    return make_model([node], inputs, [("y", None, None)], opset=18)


def test_gather_and_scatter_indices_below_minus_n_raise(tmp_path):
    """[-2n, -n) used to be wrapped twice (once by the converter, once by the kernel) into a
    wrong element; now only [-n, n) is valid, as ONNX says."""
    x = rand(5, 3)
    low = np.array([[-7, 0, 1]], "int64")
    cases = [
        (_indexing_model("Gather", [1, 3]), [x, low]),
        (_indexing_model("GatherElements", [1, 3]), [x, low]),
        (_indexing_model("ScatterElements", [1, 3]), [x, low, rand(1, 3, seed=1)]),
        (_indexing_model("Gather", [1, 3]), [x, np.array([[-5, 4, 0]], "int64")]),  # the edges: valid
    ]
    report = run_isolated(tmp_path, cases)
    for kind, message in report[:3]:
        assert kind == "KernelIndexError" and "index -7" in message and "[-5, 5)" in message, message
    assert report[3] == ["ok", ""]
    check_node("Gather", [x, np.array([[-5, 4, -1]], "int64")])
    check_node("GatherElements", [x, np.array([[-5, 4, -1]], "int64")])
    check_node("ScatterElements", [x, np.array([[-5, 4, -1]], "int64"), rand(1, 3, seed=1)])


def test_a_folded_gather_checks_its_indices():
    nodes = [helper.make_node("Gather", ["c", "i"], ["y"], name="g")]
    inits = [numpy_helper.from_array(np.arange(5, dtype="int64"), "c"),
             numpy_helper.from_array(np.array([-6], "int64"), "i")]
    model = make_model(nodes, [], [("y", None, None)], initializers=inits)
    with pytest.raises(FrontendError, match=r"Gather node 'g' .*index -6 is out of range \[-5, 5\)"):
        from_onnx(model)
