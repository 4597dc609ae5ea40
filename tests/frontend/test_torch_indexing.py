"""Advanced indexing and indexed updates (graphc/frontend/torch/converters/advanced_indexing.py) against
PyTorch, and the loud refusal of what depends on the data."""

import pytest
import torch
from torch.nn import functional as F

from graphc.errors import FrontendError
from graphc.frontend.torch import from_exported_program

torch.manual_seed(0)
X = torch.randn(2, 3, 4)


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _import(fn, *inputs):
    with torch.no_grad():
        return from_exported_program(torch.export.export(_Fn(fn).eval(), inputs))


def test_index_with_several_tensors(verify):
    rows, cols = torch.tensor([0, 1, -1]), torch.tensor([[1], [0]])
    verify(
        lambda x, r, c: (
            x[:, torch.tensor([-1, 0])],  # one index tensor, negative positions
            x[-1, :, -2],
            x[torch.tensor([0, 1]), torch.tensor([2, -3])],  # adjacent: in place of the indexed axes
            x[:, r[:2], torch.tensor([1, 3])],
            x[c, :, r[:1]],  # separated by a slice: the broadcast axes go first
            x[r[:2], 1:, c],
        ),
        [X, rows, cols],
    )


def test_index_put(verify):
    verify(
        lambda x: (
            x.index_put((torch.tensor([0, 1]), torch.tensor([2, 0])), torch.tensor(5.0)),
            x.index_put((torch.tensor([0, 0]),), torch.ones(3, 4), accumulate=True),  # duplicates add up
            x.index_put((torch.tensor([1]), torch.tensor([-1])), torch.tensor([7.0, 8.0, 9.0, 10.0])),
            x.index_add(1, torch.tensor([0, 2]), torch.ones(2, 2, 4)),
            x.index_copy(2, torch.tensor([3, 0]), torch.zeros(2, 3, 2)),
            x.index_fill(1, torch.tensor([0, 2]), -1.0),
            x.masked_fill(x > 0, 0).index_put((x > 1,), torch.tensor(3.0)),  # one mask, one value
            x.index_put((x[:, :, 0] > 0,), torch.tensor(2.0), accumulate=True),
        ),
        [X],
    )


def test_scatter_family(verify):
    verify(
        lambda x: (
            torch.slice_scatter(x, torch.zeros(2, 1, 4), 1, 1, 2),
            torch.slice_scatter(x, torch.zeros(2, 3, 2), 2, 0, 4, 2),
            torch.slice_scatter(x, torch.ones(2, 3, 1, dtype=torch.float64), 2, -1),
            torch.select_scatter(x, torch.zeros(2, 4), 1, -1),
            x.masked_scatter(x > 0, torch.arange(24.0).reshape(2, 3, 4)),
            x.masked_scatter(torch.tensor([True, False, True, True]), -torch.arange(30.0)),
        ),
        [X],
    )


def test_diagonal_strided_unfold_repeat(verify):
    verify(
        lambda x: (
            torch.diagonal(x, 1, 1, 2),
            torch.diagonal(x, -1, 2, 0),
            torch.diag(x[0]),
            torch.trace(x[0]),
            torch.as_strided(x, (2, 2), (1, 2), 1),
            x.unfold(2, 2, 1),
            x.unfold(1, 2, 2),
            F.unfold(x[None], 2),
            F.fold(x.reshape(1, 8, 3)[..., :1].expand(1, 8, 4), (3, 3), 2),
            x.repeat_interleave(torch.tensor([1, 2, 0]), dim=1, output_size=3),
        ),
        [X],
    )


def test_resizes_that_decompose_to_advanced_indexing(verify):
    # (trilinear resizing also imports, but compiling it takes seconds: left out here)
    volume = torch.randn(1, 2, 2, 3, 2)
    verify(
        lambda v: (
            F.interpolate(v, scale_factor=2),
            F.interpolate(v[:, :, 0, 0], scale_factor=2, mode="linear"),
        ),
        [volume],
    )


@pytest.mark.parametrize(
    "fn, match",
    [
        (lambda x: x[:, torch.tensor([True, False, True])], "boolean mask"),
        (lambda x: x.index_put((x[:, :, 0] > 0,), torch.arange(4.0)), "single value"),
        (lambda x: torch.nonzero(x), "depends on the data"),
        (lambda x: torch.masked_select(x, x > 0), "depends on the data"),
    ],
)
def test_data_dependent_shapes_are_refused(fn, match):
    with pytest.raises(FrontendError, match=match):
        _import(fn, X)
