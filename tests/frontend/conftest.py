"""`verify_model`: export a torch module, import it, compile it with `graphc.compile` (the
zero pipeline, default schedules, the VM) and compare the VM's results with PyTorch's."""

import numpy as np
import pytest
import torch

import graphc
from graphc import relax
from graphc.frontend.torch import from_exported_program


def _flatten(out):
    if isinstance(out, list | tuple):
        return [a for o in out for a in _flatten(o)]
    return [out]


class Lambda(torch.nn.Module):
    """A module whose forward is the given function."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def verify_model(
    model, example_inputs, dynamic_shapes=None, run_inputs=None, rtol=1e-5, atol=1e-5, **import_kwargs
):
    """Import `model` (a module or a function of tensors) and check the import against PyTorch
    on each of `run_inputs` (default: the example inputs)."""
    model = (model if isinstance(model, torch.nn.Module) else Lambda(model)).eval()
    with torch.no_grad():
        ep = torch.export.export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
        mod = from_exported_program(ep, **import_kwargs)
    assert relax.analysis.well_formed(mod)
    vm = relax.VirtualMachine(graphc.compile(mod, target="llvm"), graphc.cpu())
    for inputs in run_inputs or [example_inputs]:
        with torch.no_grad():
            expected = _flatten(model(*inputs))
        got = [t.numpy() for t in _flatten(vm["main"](*[t.numpy() for t in inputs]))]
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            e = e.detach().numpy()
            assert g.shape == e.shape, (g.shape, e.shape)
            assert g.dtype == e.dtype, (g.dtype, e.dtype)
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return mod


@pytest.fixture
def verify():
    return verify_model
