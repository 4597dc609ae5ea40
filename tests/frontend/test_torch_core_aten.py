"""The Core ATen additions outside elementwise math and indexing: reductions, creation and
copies, linear-algebra forms, batch statistics, distances, pooling and sampling; the loud
refusal of unsupported argument values; and docs/torch_frontend.md being up to date."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

from graphc.errors import FrontendError
from graphc.frontend.torch import from_exported_program

torch.manual_seed(0)
X = torch.randn(2, 3, 4)
Y = torch.randn(2, 3, 4)
ROOT = Path(__file__).resolve().parents[2]


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _import(fn, *inputs):
    with torch.no_grad():
        return from_exported_program(torch.export.export(_Fn(fn).eval(), inputs))


def test_logical_reductions(verify):
    b = X > 0
    verify(
        lambda x, b: (
            b.any(),
            b.any(1),
            b.all(),
            b.all(2, keepdim=True),
            x.any(),
            x.all(1),
            torch.any(b, (0, 2)),
            (x > 5).to(torch.uint8).any(0),  # uint8 in, uint8 out
        ),
        [X, b],
    )


def test_statistics_and_norms(verify):
    verify(
        lambda x: (
            torch.std_mean(x, dim=1),
            torch.var_mean(x, dim=(0, 2), correction=0),
            x.norm(),
            x.norm(dim=1),
            x.norm(p=1, dim=2),
            torch.linalg.vector_norm(x, ord=float("inf"), dim=0),
            torch.linalg.vector_norm(x, ord=-float("inf"), dim=0),
            torch.linalg.vector_norm(x, ord=0, dim=2),
            torch.linalg.vector_norm(x, ord=3, dim=1, keepdim=True),
            torch.linalg.vector_norm(x.double(), dtype=torch.float64),
            F.normalize(x, dim=1),
            torch.logsumexp(x, 1),
            x.median(dim=1),
            x[0, 0].median(),
            x.kthvalue(2, dim=2, keepdim=True),
        ),
        [X],
        rtol=1e-5,
        atol=1e-5,
    )


def test_creation_fill_and_copy(verify):
    verify(
        lambda x: (
            torch.empty_strided((2, 3), (3, 1)).fill_(1.0) + x[0, :, 0],
            torch.full_like(x, 3),
            x.clone().fill_(2),
            torch.zeros(2, 3, 4, dtype=torch.int32).copy_(x * 10),
            torch.zeros(2, 3, 4).copy_(x[0]),  # src broadcasts
            torch.fill(x, torch.tensor(7)),
        ),
        [X],
    )


def test_linear_algebra_forms(verify):
    verify(
        lambda x, y: (
            torch.baddbmm(torch.ones(2, 3, 3), x, y.transpose(1, 2), beta=0.5, alpha=2),
            torch.baddbmm(torch.ones(3, 3), x, y.transpose(1, 2), beta=0),
            torch.addbmm(torch.zeros(3, 3), x, y.transpose(1, 2)),
            torch.addmv(x[0, 0, :3], x[0], y[1, 0], alpha=3),
            torch.addr(x[0], x[1, :, 0], y[1, 0], beta=2),
        ),
        [X, Y],
        rtol=1e-5,
        atol=1e-5,
    )


def test_batch_statistics_dropout_and_distances(verify):
    image = torch.randn(2, 3, 2, 2)
    verify(
        lambda m, x, y: (
            F.batch_norm(m, None, None, training=True),
            F.batch_norm(m, None, None, torch.ones(3) * 0.5, torch.arange(3.0), training=True, eps=1e-3),
            F.instance_norm(m),
            torch.ops.aten.native_dropout(x, 0.5, False),
            torch.cdist(x, y),
            torch.cdist(x, y, p=1),
            torch.cdist(x, y, p=float("inf")),
            F.pdist(x[0]),
            F.pdist(x[0], p=3),
            F.pairwise_distance(x, y),
            F.cosine_similarity(x, y, 1),
        ),
        [image, X, Y],
        rtol=1e-4,
        atol=1e-5,
    )


def test_pooling_and_sampling(verify):
    image = torch.randn(1, 2, 4, 4)
    grid = torch.rand(1, 2, 3, 2) * 2.4 - 1.2  # some points outside [-1, 1]
    verify(
        lambda m, g: (
            F.avg_pool2d(m, 2, divisor_override=3),
            F.avg_pool2d(m, 3, 1, 1, divisor_override=4),
            F.grid_sample(m, g, align_corners=False),
            F.grid_sample(m, g, mode="nearest", padding_mode="border", align_corners=True),
        ),
        [image, grid],
        rtol=1e-5,
        atol=1e-5,
    )


def test_scans_and_searches(verify):
    ties = torch.tensor([[1.0, 3.0, 3.0, 2.0], [0.0, -1.0, 5.0, 5.0]])
    verify(
        lambda x, t: (
            torch.cummax(x, 1),
            torch.cummin(x, -1),
            torch.cummax(t, 1),  # ties: the last index
            torch.cummax(t.int(), 0),
            torch.logcumsumexp(x * 30, 2),  # large spreads stay finite
            torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0])),
            torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0]), right=True, out_int32=True),
            torch.searchsorted(torch.tensor([-1.0, 0.0, 1.0]), x),
            torch.searchsorted(torch.tensor([-1.0, 0.0, 1.0]), x, side="right"),
            torch.searchsorted(t.sort(1).values, torch.tensor([[1.5, 3.0], [5.0, -2.0]])),  # one row each
        ),
        [X, ties],
        rtol=1e-5,
        atol=1e-5,
    )


def test_scatter_reduce_without_self_and_rrelu(verify):
    index = torch.tensor([[0, 0, 1], [2, 2, 2]])
    verify(
        lambda x, i: (
            x[0].scatter_reduce(1, i, x[1, :2, :3], "amax", include_self=False),
            x[0].scatter_reduce(1, i, x[1, :2, :3], "amin", include_self=False),
            x[0].scatter_reduce(1, i, x[1, :2, :3], "sum", include_self=False),
            x[0].scatter_reduce(1, i, x[1, :2, :3], "prod", include_self=False),
            F.rrelu(x, training=False),
            F.rrelu(x, 0.1, 0.5, training=False),
        ),
        [X, index],
    )


def test_adaptive_max_pool_and_embedding_bags(verify):
    weight = torch.randn(10, 3)
    index = torch.tensor([1, 2, 4, 5, 2])
    verify(
        lambda m, w, i: (
            F.adaptive_max_pool2d(m, 2),
            F.adaptive_max_pool1d(m[:, :, 0], 1),
            F.embedding_bag(i, w, torch.tensor([0, 2]), mode="sum"),
            F.embedding_bag(
                i, w, torch.tensor([0, 1, 1, 5]), mode="mean", include_last_offset=True, padding_idx=2
            ),
            F.embedding_bag(i, w, torch.tensor([0, 0, 3]), mode="max"),  # an empty bag gives zeros
            F.embedding_bag(i, w, torch.tensor([0, 2]), per_sample_weights=torch.arange(5.0), mode="sum"),
        ),
        [torch.randn(1, 2, 4, 4), weight, index],
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "fn, inputs, match",
    [
        (
            lambda m: F.avg_pool2d(m, 3, 2, ceil_mode=True, divisor_override=3),
            [torch.randn(1, 1, 5, 5)],
            "divisor_override=3 is not supported together with ceil_mode",
        ),
        (lambda x: torch.ops.aten.native_dropout(x, 0.5, True), [X], "train=True"),
        (lambda x: torch.as_strided(x.transpose(0, 2), (2, 2), (1, 2)), [X], "contiguous"),
        (lambda x: torch.round(x, decimals=1), [torch.tensor([1, 2])], "float tensor"),
        (lambda m: F.adaptive_max_pool2d(m, 3), [torch.randn(1, 1, 4, 4)], "uneven adaptive windows"),
        (lambda m: F.adaptive_max_pool2d(m, 2, return_indices=True)[1], [torch.randn(1, 1, 4, 4)], "indices"),
        (
            lambda x: x.scatter_reduce(0, torch.tensor([[0, 1, 0, 1]]), x, "mean", include_self=False),
            [torch.randn(2, 4)],
            "reduce='mean'",
        ),
        (
            lambda x: torch.searchsorted(torch.tensor([3.0, 1.0]), x, sorter=torch.tensor([1, 0])),
            [torch.randn(3)],
            "sorter",
        ),
        (lambda x: F.rrelu(x, training=True), [torch.randn(3)], "training=True"),
    ],
)
def test_unsupported_values_are_refused(fn, inputs, match):
    with pytest.raises(FrontendError, match=match):
        _import(fn, *inputs)


def test_the_coverage_doc_is_up_to_date():
    """docs/torch_frontend.md is what scripts/torch_coverage.py generates from the converters."""
    script = ROOT / "scripts" / "torch_coverage.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
