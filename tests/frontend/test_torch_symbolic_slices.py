"""Slices whose start, end or step is a symbolic size, on activations, parameters and constant
buffers; a symbolic size where a converter needs a constant is a FrontendError naming the node."""

import pytest
import torch

from graphc.errors import FrontendError
from graphc.frontend.torch import from_exported_program

N = torch.export.Dim("n", min=2, max=6)


class Sliced(torch.nn.Module):
    def __init__(self, how):
        super().__init__()
        self.how = how
        self.weight = torch.nn.Parameter(torch.arange(40.0).reshape(4, 10))
        self.register_buffer("positions", torch.arange(10).reshape(1, 10))

    def forward(self, x, y):
        n = y.shape[1]
        if self.how == "activation_end":
            return x[:, :n] * 2
        if self.how == "activation_start":
            return x[:, n:] + 1
        if self.how == "parameter":
            return self.weight[:, 2 : n + 2] * x[:, :n]
        if self.how == "buffer":
            return self.positions[:, :n].float() + x[:, :n]
        return torch.narrow(x, 1, 1, n)


@pytest.mark.parametrize("how", ["activation_end", "activation_start", "parameter", "buffer", "narrow"])
def test_symbolic_slices(verify, how):
    inputs = [(torch.randn(4, 10), torch.randn(2, k)) for k in (2, 3, 6)]
    verify(Sliced(how), inputs[1], dynamic_shapes=({}, {1: N}), run_inputs=inputs)


def test_a_symbolic_size_where_a_constant_is_needed_is_a_frontend_error():
    class Repeat(torch.nn.Module):
        def forward(self, x, y):
            return x.repeat(1, y.shape[1])

    ep = torch.export.export(Repeat(), (torch.randn(2, 3), torch.randn(2, 4)), dynamic_shapes=({}, {1: N}))
    with pytest.raises(FrontendError, match="aten.repeat.default \\(node 'repeat'.*symbolic size"):
        from_exported_program(ep)
