"""graphc.compile end to end: the IRModule tutorial's MLP, compiled and run by the VM."""

from pathlib import Path

import numpy as np
import pytest

import graphc
from graphc import relax
from graphc.script import from_source

# the tutorial's script-defined MLP ("Create via TVMScript"), as the tutorial prints it
TutorialMLP = from_source(
    (Path(__file__).parent / "data" / "ir_module_tutorial" / "from_script.txt").read_text()
)


def mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * 0.1).astype("float32")
            for shape in ((256, 784), (256,), (10, 256), (10,))]


def mlp_reference(x, w1, b1, w2, b2):
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


@pytest.fixture(scope="module")
def mlp_exe():
    return graphc.compile(TutorialMLP, target="llvm")


def test_tutorial_mlp_matches_numpy(mlp_exe):
    vm = relax.VirtualMachine(mlp_exe, graphc.cpu())
    params = mlp_params()
    raw = np.random.default_rng(1).random((1, 784)).astype("float32")
    data = graphc.runtime.tensor(raw, graphc.cpu())
    out = vm["main"](data, *params)
    assert isinstance(out, graphc.runtime.Tensor)
    assert out.shape == (1, 10) and out.dtype == "float32"
    np.testing.assert_allclose(out.numpy(), mlp_reference(raw, *params), rtol=1e-4, atol=1e-4)


def test_tutorial_mlp_matches_torch(mlp_exe):
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).eval()
    params = [p.detach() for p in (model[0].weight, model[0].bias, model[2].weight, model[2].bias)]
    x = torch.rand(1, 784)
    vm = relax.VirtualMachine(mlp_exe, graphc.cpu())
    out = vm["main"](x, *params)  # torch tensors in, through DLPack
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_compile_binds_params_as_constants():
    params = mlp_params(2)
    names = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    exe = graphc.compile(TutorialMLP, target="llvm", params=dict(zip(names, params)))
    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = np.random.default_rng(3).random((1, 784)).astype("float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), mlp_reference(x, *params), rtol=1e-4, atol=1e-4)
    # the weights' transposes were folded at compile time: no transpose kernel remains
    assert not any("transpose" in f.name for f in exe.functions if f.kind == "kernel")


def test_compile_is_reachable_from_graphc_and_relax():
    assert graphc.compile is graphc.driver.compile
    assert relax.VirtualMachine is graphc.vm.VirtualMachine
    assert relax.Executable is graphc.vm.Executable


def test_compile_rejects_unsupported_models():
    with pytest.raises(TypeError, match="expects a Relax IRModule, a torch ExportedProgram or a torch"):
        graphc.compile(object())
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="needs example_inputs"):
        graphc.compile(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="example_inputs and dynamic_shapes are for torch modules"):
        graphc.compile(TutorialMLP, example_inputs=(1,))


def test_compile_takes_torch_models_directly():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    batch = torch.export.Dim("batch", min=1, max=16)
    exe = graphc.compile(model, example_inputs=(torch.randn(2, 4),), dynamic_shapes=({0: batch},))
    vm = relax.VirtualMachine(exe, graphc.cpu())
    for n in (1, 5):
        x = torch.randn(n, 4)
        out = vm["main"](x)  # the model returns one tensor: so does the VM
        np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    ep = torch.export.export(model, (torch.randn(3, 4),))
    out = relax.VirtualMachine(graphc.compile(ep), graphc.cpu())["main"](torch.ones(3, 4))
    np.testing.assert_allclose(out.numpy(), model(torch.ones(3, 4)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_wrong_weights_raise_value_errors_before_anything_runs(mlp_exe):
    # weights past num_input are checked on entry like the user inputs
    vm = relax.VirtualMachine(mlp_exe, graphc.cpu())
    w1, b1, w2, b2 = mlp_params()
    x = np.zeros((1, 784), "float32")
    with pytest.raises(ValueError, match=r"parameter 'fc1_weight'.*dimension 1 must be 784, got 783"):
        vm["main"](x, w1[:, :783], b1, w2, b2)
    with pytest.raises(ValueError, match="parameter 'fc2_bias'.*float"):
        vm["main"](x, w1, b1, w2, b2.astype("float64"))
    with pytest.raises(ValueError, match=r"parameter 'x'.*dimension 1 must be 784, got 783"):
        vm["main"](x[:, :783], w1, b1, w2, b2)

