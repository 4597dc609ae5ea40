"""graphc.driver.run (graphc/runner.py), and the compiler-workflow notes' tvmc demo as its graphc
twin: load a model file with a shape dict, compile it, run it, print the result."""

import numpy as np
import pytest
import torch

import graphc
from graphc import driver
from graphc.runner import InputError, input_signature, parse_shapes, random_inputs, read_inputs

FACTORY = '''
import torch
from torch import nn


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 5))
    return model.eval(), (torch.randn(1, 3, 8, 8),)
'''


def test_the_notes_demo(tmp_path, capsys):
    (tmp_path / "resnet.py").write_text(FACTORY)
    # tvmc.load / tvmc.compile / tvmc.run, renamed
    model = driver.load(f"{tmp_path / 'resnet.py'}:make", shape_dict={"input": [2, 3, 8, 8]})
    package = driver.compile(model, target="llvm")
    result = driver.run(package, device="cpu", benchmark=True, repeat=2)
    print(result)
    out = capsys.readouterr().out
    assert "output_0: shape (2, 5), dtype float32" in out and "Execution time summary:" in out
    assert result.times.min > 0 and len(result.times.results) == 2
    x = random_inputs(package)["input"]
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("demo_models", tmp_path / "resnet.py")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    with torch.no_grad():
        want = module.make()[0](torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(result.named_outputs()["output_0"], want, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def exe():
    class Two(torch.nn.Module):
        def forward(self, ids, x):
            return {"sum": x.sum(-1), "rows": [x * 2]}

    batch = torch.export.Dim("batch", min=3, max=16)
    return graphc.compile(Two(), example_inputs=(torch.zeros(4, 2, dtype=torch.int64), torch.ones(4, 6)),
                          dynamic_shapes=({0: batch}, {0: batch}))


def test_signature_and_random_inputs(exe):
    (ids_name, ids_shape, ids_dtype), (x_name, x_shape, x_dtype) = input_signature(exe)
    assert (ids_name, ids_dtype, x_name, x_dtype) == ("ids", "int64", "x", "float32")
    assert ids_shape[0] == x_shape[0] and isinstance(ids_shape[0], str) and x_shape[1] == 6
    inputs = random_inputs(exe, seed=1)
    assert inputs["ids"].shape == (3, 2) and inputs["x"].shape == (3, 6)  # the smallest size in range
    result = driver.run(exe, inputs=inputs, profile=True)
    assert sorted(result.named_outputs()) == ["rows.0", "sum"]
    assert result.profile is not None and "Total" in str(result.profile)


def test_inputs_by_name_in_order_and_from_npz(exe, tmp_path):
    ids, x = np.zeros((5, 2), "int64"), np.ones((5, 6), "float32")
    assert [a is b for a, b in zip(read_inputs(exe, {"x": x, "ids": ids}), (ids, x))] == [True, True]
    np.savez(tmp_path / "named.npz", ids=ids, x=x)
    np.savez(tmp_path / "positional.npz", ids, x)
    for source in ("named.npz", "positional.npz"):
        result = driver.run(exe, inputs=tmp_path / source)
        np.testing.assert_allclose(result.outputs["sum"].numpy(), np.full(5, 6.0))
    result.save(tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz") as saved:
        np.testing.assert_allclose(saved["rows.0"], x * 2)
    with pytest.raises(InputError, match="input 'x' missing: the model's inputs are ids, x"):
        read_inputs(exe, {"ids": ids})
    with pytest.raises(InputError, match="takes 2 inputs"):
        read_inputs(exe, [ids])


def test_parse_shapes():
    assert parse_shapes("input:0:[1,2] b:[3]") == {"input:0": [1, 2], "b": [3]}
    assert parse_shapes("a:[1, 2], b:[]") == {"a": [1, 2], "b": []}
    for bad in ("a[1,2]", "a:[1,x]", "a:[1,2] junk"):
        with pytest.raises(ValueError):
            parse_shapes(bad)
