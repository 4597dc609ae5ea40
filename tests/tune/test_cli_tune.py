"""`graphc tune` and `graphc compile --tuning-records` on the command line: a run, its resumption,
and the errors of bad input (in-process, through `graphc.cli.main`)."""

import json

import numpy as np
import pytest

from graphc.cli import main

pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """An ONNX file: y = relu(x @ W + b), x of shape (16, 32) (W, b constants: W packed once)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((32, 32)).astype("float32"), "W")
    b = numpy_helper.from_array(rng.standard_normal(32).astype("float32"), "b")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 32])], [w, b])
    path = tmp_path_factory.mktemp("cli") / "mlp.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def records_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_tune_resumes_from_its_records_file_then_compile_applies_it(model, tmp_path, capsys):
    records = tmp_path / "records.json"
    assert main(["tune", str(model), "--trials", "3", "--timeout", "20", "-o", str(records)]) == 0
    first = records_of(records)
    trials = [r for r in first if not r["default"] and not r["confirmed"]]
    assert len(trials) == 3
    out = capsys.readouterr().out
    # 3 candidates, the default's baseline and the final re-measurements (when one beat the default)
    assert "best GFLOP/s" in out and f"{len(first)} new records" in out
    assert all(r["baseline"] > 0 for r in trials if r["status"] == "ok")  # timed with the default
    assert main(["tune", str(model), "--trials", "5", "-o", str(records)]) == 0
    second = records_of(records)
    assert second[: len(first)] == first and sum(not r["default"] and not r["confirmed"] for r in second) == 5
    # the default is measured once for the file (and again with each confirmation)
    assert sum(r["default"] and not r["confirmed"] for r in second) == 1
    assert "continuing" in capsys.readouterr().out
    exe = tmp_path / "mlp.graphc"
    assert main(["compile", str(model), "--tuning-records", str(records), "-o", str(exe)]) == 0
    import onnx
    from onnx.reference import ReferenceEvaluator

    import graphc
    from graphc.vm import Executable

    vm = graphc.relax.VirtualMachine(Executable.load(str(exe)), graphc.cpu())
    x = np.random.default_rng(1).standard_normal((16, 32)).astype("float32")
    (expected,) = ReferenceEvaluator(onnx.load(model)).run(None, {"x": x})
    np.testing.assert_allclose(vm["main"](x).numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("args, message", [
    (["--target", "nonsense"], "unknown target kind"),
    (["--trials", "0"], "expected a positive integer"),
    (["--trials", "-2"], "expected a positive integer"),
    (["--timeout", "0"], "expected a positive number of seconds"),
])
def test_bad_options_are_usage_errors(model, tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["tune", str(model), "-o", str(tmp_path / "r.json"), *args])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_unreadable_or_malformed_records_files_are_usage_errors(model, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"workload": "w"}\n{oops\n')
    for command in (["tune", str(model), "-o", str(bad)],
                    ["compile", str(model), "--tuning-records", str(bad)]):
        with pytest.raises(SystemExit) as exit_info:
            main(command)
        assert exit_info.value.code == 2 and "line 1: not a tuning record" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["tune", str(model), "-o", str(tmp_path)])  # a directory
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compile", str(model), "--tuning-records", str(tmp_path / "missing.json")])
    assert "does not exist" in capsys.readouterr().err


def test_tune_for_opencl_on_the_command_line(model, tmp_path, capsys):
    import graphc

    if not graphc.opencl(0).exist:
        pytest.skip("no OpenCL platform (install PoCL: apt-get install pocl-opencl-icd)")
    records = tmp_path / "records.json"
    assert main(["tune", str(model), "--target", "opencl", "--trials", "2", "--timeout", "20",
                 "-o", str(records)]) == 0
    written = records_of(records)
    assert written and all(r["target"].startswith("opencl -device=") for r in written)
    assert "best GFLOP/s" in capsys.readouterr().out


def test_tune_for_cuda_without_a_device_is_refused_before_loading(tmp_path, capsys):
    import graphc

    if graphc.cuda(0).exist:
        pytest.skip("a CUDA device is visible here")
    command = ["tune", str(tmp_path / "missing.onnx"), "--target", "cuda", "-o", str(tmp_path / "r.json")]
    assert main(command) == 1
    assert "no CUDA device is visible" in capsys.readouterr().err
