"""graphc.driver.load (graphc/loader.py): model files to Relax modules, and what it refuses."""

import numpy as np
import pytest
import torch

import graphc
from graphc.loader import ModelFileError, load, model_kind

FACTORY = '''
import torch
from torch import nn


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(10, 4)

    def forward(self, ids, scale):
        return self.table(ids) * scale


def bare():
    return nn.Linear(3, 2)


def with_inputs():
    torch.manual_seed(0)
    return Embed().eval(), (torch.zeros(2, 5, dtype=torch.int64), torch.ones(1))


def dynamic():
    batch = torch.export.Dim("batch", min=1, max=8)
    return nn.Linear(3, 2), (torch.ones(2, 3),), ({0: batch},)
'''


@pytest.fixture
def factory(tmp_path):
    (tmp_path / "models.py").write_text(FACTORY)
    return tmp_path / "models.py"


def _sinfo(mod, i=0):
    return mod["main"].params[i].struct_info


def test_factories(factory):
    mod = load(f"{factory}:with_inputs")
    assert str(_sinfo(mod)) == 'R.Tensor((2, 5), dtype="int64")'
    mod = load(f"{factory}:with_inputs", shape_dict={"ids": [3, 7]})  # dtype kept from the example
    assert str(_sinfo(mod)) == 'R.Tensor((3, 7), dtype="int64")'
    assert str(_sinfo(mod, 1)).startswith("R.Tensor((1,)")
    mod = load(f"{factory}:bare", shape_dict={"input": [4, 3]})  # no example: shapes make one
    assert str(_sinfo(mod)) == 'R.Tensor((4, 3), dtype="float32")'
    mod = load(f"{factory}:with_inputs", shape_dict={"ids": [2, 5]}, dtype_dict={"ids": "int32"})
    assert _sinfo(mod).dtype == "int32"
    mod = load(f"{factory}:dynamic")
    assert "tir_var_upper_bound" in mod["main"].attrs


def test_pt2_files(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    path = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(model, (torch.ones(1, 3),)), str(path))
    exe = graphc.compile(load(path))
    x = np.ones((1, 3), "float32")
    np.testing.assert_allclose(exe(x).numpy(), model(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)
    assert isinstance(graphc.compile(str(path)), graphc.vm.Executable)  # compile takes the path too


def test_kinds():
    assert [model_kind(p) for p in ("a.onnx", "b.PT2", "dir/m.py:make")] == ["onnx", "pt2", "factory"]
    with pytest.raises(ModelFileError, match="is not a model graphc reads"):
        model_kind("m.py")


@pytest.mark.parametrize("path, kwargs, message", [
    ("missing.onnx", {}, "no model file 'missing.onnx'"),
    ("{factory}:nothing", {}, "defines no function 'nothing'"),
    ("nowhere.py:make", {}, "no Python file"),
    ("{factory}:bare", {}, "needs example_inputs"),
    ("{factory}:bare", {"shape_dict": {"x": [1, 3]}}, "no input named 'x'; its inputs are input"),
    ("{pt2}", {"shape_dict": {"x": [1, 3]}}, "keeps the shapes it was exported with"),
    ("{bad}", {}, "not a program saved by torch.export.save"),
])
def test_refusals(factory, path, kwargs, message):
    pt2, bad = factory.parent / "ok.pt2", factory.parent / "bad.pt2"
    torch.export.save(torch.export.export(torch.nn.ReLU(), (torch.ones(2),)), str(pt2))
    bad.write_bytes(b"not a zip archive")
    with pytest.raises((ModelFileError, TypeError), match=message):
        load(path.format(factory=factory, pt2=pt2, bad=bad), **kwargs)
