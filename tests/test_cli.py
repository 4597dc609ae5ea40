"""The `graphc` console script, run in a subprocess as a user runs it: the compiler-workflow
notes' flow (compile a model file with --input-shapes, run it on an .npz of inputs, read the
outputs' .npz, compare with PyTorch), --print-time, --profile, show --stage, and the errors
(short messages, exit status 1 for the model or inputs, 2 for usage). The .pt2 route runs in
README.md's example (tests/test_docs.py); loading and its refusals in-process in test_loader.py."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

GRAPHC = Path(sys.executable).parent / "graphc"

FACTORY = '''
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 32), nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def make():
    torch.manual_seed(0)
    return MLP().eval(), (torch.randn(1, 784),)
'''


def graphc(*args, cwd, check=True):
    assert GRAPHC.exists(), f"no console script at {GRAPHC}: run scripts/install.sh test (pip install -e .)"
    # a private compile cache: a hit from an earlier run would skip the progress the tests read
    env = {**os.environ, "GRAPHC_CACHE_DIR": str(Path(cwd) / ".graphc-cache")}
    proc = subprocess.run([str(GRAPHC), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env)
    if check:
        command = " ".join(map(str, args))
        assert proc.returncode == 0, f"graphc {command} exited {proc.returncode}:\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A directory with the model factory, and the model compiled for 4 rows by the command line."""
    path = tmp_path_factory.mktemp("cli")
    (path / "models.py").write_text(FACTORY)
    proc = graphc("compile", "models.py:make", "--input-shapes", "x:[4,784]", "-o", "mlp.graphc", cwd=path)
    assert "compiled models.py:make for llvm" in proc.stderr and (path / "mlp.graphc").stat().st_size > 0
    (path / "compile.log").write_text(proc.stderr)
    return path


def reference(path, x):
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("cli_models", path / "models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, _ = module.make()
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def test_compile_then_run_on_npz_inputs(workdir):
    """The notes' demo (load, compile, run) through the command line."""
    x = np.random.default_rng(0).standard_normal((4, 784)).astype("float32")
    np.savez(workdir / "in.npz", x=x)
    proc = graphc("run", "mlp.graphc", "--inputs", "in.npz", "--output", "out.npz", cwd=workdir)
    assert "output_0: shape (4, 10), dtype float32" in proc.stdout
    with np.load(workdir / "out.npz") as out:
        assert out.files == ["output_0"]
        np.testing.assert_allclose(out["output_0"], reference(workdir, x), rtol=1e-4, atol=1e-5)


def test_print_time_and_profile(workdir):
    out = graphc("run", "mlp.graphc", "--print-time", "--repeat", "3", "--number", "2", "--profile",
                 cwd=workdir).stdout
    assert "(random inputs, seed 0)" in out
    lines = out.splitlines()
    header = lines.index("Execution time summary:")
    assert lines[header + 1].split()[::2] == ["mean", "median", "max", "min", "std"]
    mean, median, high, low, std = map(float, lines[header + 2].split())
    assert 0 < low <= median <= high and low <= mean <= high and std >= 0
    assert any(line.startswith("fused_matmul_add_relu ") and " kernel " in line for line in lines)
    assert any(line.startswith("Total ") for line in lines)


def test_show_each_stage(workdir):
    coloured = graphc("show", "models.py:make", "--stage", "fused", "--color", "always", cwd=workdir).stdout
    fused = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert fused != coloured and "@I.ir_module" in fused and "def fused_matmul_add_relu(" in fused
    assert "# metadata: 4 tensor constants (shown with --constants)" in fused
    lowered = graphc("show", "models.py:make", "--stage", "lowered", "--function", "fused_matmul1_add1",
                     cwd=workdir).stdout
    assert "T.Buffer((T.int64(32),)" in lowered and "T.block" not in lowered  # flat (1, 32) input, no blocks
    bytecode = graphc("show", "mlp.graphc", cwd=workdir).stdout
    assert bytecode.startswith("@main(x)") and "call fused_matmul_add_relu(" in bytecode


def test_progress_is_plain_lines_off_a_terminal(workdir):
    log = (workdir / "compile.log").read_text()
    steps = [line for line in log.splitlines() if line.startswith("graphc: ")]
    assert steps[0] == "graphc: importing the model" and "\r" not in log
    assert "graphc: lowering kernels (2)" in steps and steps[-1].startswith("graphc: compiled ")


def test_python_dash_m():
    proc = subprocess.run([sys.executable, "-m", "graphc", "--version"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("graphc ")


@pytest.mark.parametrize("args, status, message", [
    (["compile", "nothere.onnx"], 1, "no model file 'nothere.onnx'"),
    (["compile", "models.py:make", "--input-shapes", "x:[4,a]"], 2, "--input-shapes: input 'x'"),
    (["compile", "models.py:make", "--target", "tpu"], 2, "unknown target kind 'tpu'"),
    (["compile", "models.txt"], 2, "is not a model graphc reads"),
    (["run", "mlp.graphc", "--inputs", "wrong.npz"], 1, "no input named 'y': the model's inputs are x"),
    (["run", "mlp.graphc", "--repeat", "0"], 2, "expected a positive integer"),
    (["run", "models.py"], 1, "is not a graphc executable"),
    (["show", "mlp.graphc", "--stage", "fused"], 2, "only its bytecode can be shown"),
    (["bogus"], 2, "invalid choice: 'bogus'"),
])
def test_errors_are_short_with_the_right_status(workdir, args, status, message):
    np.savez(workdir / "wrong.npz", y=np.zeros((4, 784), "float32"))
    proc = graphc(*args, cwd=workdir, check=False)
    assert proc.returncode == status, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("graphc: ")]
    assert message in proc.stderr and "Traceback" not in proc.stderr
    if status == 1:
        assert len(errors) <= 2, proc.stderr


def test_verbose_adds_the_traceback(workdir):
    for args in (["-v", "compile", "nothere.onnx"], ["compile", "nothere.onnx", "--verbose"]):
        proc = graphc(*args, cwd=workdir, check=False)
        assert proc.returncode == 1
        assert "Traceback (most recent call last)" in proc.stderr
        assert "no model file 'nothere.onnx'" in proc.stderr


def _onnx_model(path):
    """A small ONNX model whose batch size the file leaves open ("N"): relu(data @ W + b)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((8, 4)).astype("float32"), "W")
    b = numpy_helper.from_array(rng.standard_normal(4).astype("float32"), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["data", "W"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"]),
         helper.make_node("Relu", ["y"], ["out"])],
        "mlp", [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 4])], initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return model


def test_onnx_file_compile_run_and_show(tmp_path):
    """The notes' flow on an .onnx file: --input-shapes fixes the open batch size, the run's
    output .npz matches ONNX's reference evaluator, and show prints the imported model."""
    from onnx.reference import ReferenceEvaluator

    model = _onnx_model(tmp_path / "mlp.onnx")
    proc = graphc("compile", "mlp.onnx", "--input-shapes", "data:[3,8]", cwd=tmp_path)
    assert "compiled mlp.onnx for llvm" in proc.stderr and (tmp_path / "mlp.graphc").exists()
    x = np.random.default_rng(0).standard_normal((3, 8)).astype("float32")
    np.savez(tmp_path / "in.npz", data=x)
    graphc("run", "mlp.graphc", "--inputs", "in.npz", "--output", "out.npz", cwd=tmp_path)
    with np.load(tmp_path / "out.npz") as out:
        (got,) = [out[k] for k in out.files]
    (want,) = ReferenceEvaluator(model).run(None, {"data": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    shown = graphc("show", "mlp.onnx", "--input-shapes", "data:[3,8]", cwd=tmp_path).stdout
    assert 'data: R.Tensor((3, 8), dtype="float32")' in shown
