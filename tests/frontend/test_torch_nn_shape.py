"""Linear algebra, normalization, shape, reduction and creation conversions against PyTorch."""

import pytest
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(2, 3, 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.view(6, 4),
        lambda x: x.reshape(-1, 2),
        lambda x: x.permute(2, 0, 1),
        lambda x: x.transpose(0, 2),
        lambda x: x.flatten(1),
        lambda x: x.unsqueeze(1).squeeze(1),
        lambda x: x[:, 1:3],
        lambda x: x[:, ::2, 1],
        lambda x: x[1],
        lambda x: torch.cat([x, x * 2], dim=1),
        lambda x: torch.stack([x, x], dim=-1),
        lambda x: x.split(2, dim=2),
        lambda x: x.chunk(3, dim=1),
        lambda x: x[:, :1].expand(2, 5, 4),
        lambda x: x.unbind(1),
        lambda x: x.contiguous().clone().detach(),
        lambda x: x.flip(0, 2),
        lambda x: x.repeat(1, 2, 1),
        lambda x: x.unflatten(2, (2, 2)),
        lambda x: x.t() if x.dim() == 2 else x.mT,
        lambda x: x.index_select(1, torch.tensor([2, 0])),
        lambda x: x[:, torch.tensor([1, 1, 0])],
        lambda x: torch.tril(x[0]) + torch.triu(x[1], 1),
    ],
)
def test_shape_ops(verify, fn):
    verify((fn), [X])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(),
        lambda x: x.sum(dim=1, keepdim=True),
        lambda x: x.mean(dim=(0, 2)),
        lambda x: x.amax(dim=-1),
        lambda x: x.amin(dim=0),
        lambda x: x.max(dim=1),
        lambda x: x.min(dim=2, keepdim=True),
        lambda x: x.argmax(dim=1),
        lambda x: x.argmin(),
        lambda x: x.var(dim=1),
        lambda x: x.std(dim=-1, unbiased=False),
        lambda x: x.prod(dim=2),
        lambda x: torch.max(x),
        lambda x: x.to(torch.int32).sum(dim=0),
    ],
)
def test_reductions(verify, fn):
    verify((fn), [X], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x + torch.arange(4),
        lambda x: x * torch.ones(3, 4) + torch.zeros_like(x),
        lambda x: torch.full((2, 1, 4), 2.5) + x,
        lambda x: x.new_ones((4,)) + x,
        lambda x: x.to(torch.float64),
        lambda x: torch.arange(1, 7, 2) * 1.0,
        lambda x: x.type_as(torch.ones(1, dtype=torch.int64)),
    ],
)
def test_creation_and_casts(verify, fn):
    verify((fn), [X])


def test_linear_layers(verify):
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3, bias=False), nn.Softmax(dim=-1))
    verify(model, [X])


def test_matmul_family(verify):
    a, b = torch.randn(2, 3), torch.randn(3, 5)
    verify(
        (lambda a, b: (a @ b, torch.mm(a, b), torch.addmm(torch.ones(5), a, b, beta=0.5, alpha=2.0))), [a, b]
    )
    verify((lambda x, y: (torch.bmm(x, y), x @ y[0])), [torch.randn(2, 3, 4), torch.randn(2, 4, 5)])


def test_normalizations(verify):
    class Norms(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(4)
            self.bn = nn.BatchNorm1d(3)
            self.rms = nn.RMSNorm(4, eps=1e-6)

        def forward(self, x):
            return self.ln(x), self.bn(x), self.rms(x), torch.log_softmax(x, dim=1)

    model = Norms()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
        model.ln.weight.uniform_(0.5, 1.5)
    verify(model, [X], rtol=1e-4, atol=1e-5)


def test_embedding_and_dropout(verify):
    class Emb(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.drop = nn.Dropout(0.3)

        def forward(self, ids):
            return self.drop(self.emb(ids))

    verify(Emb(), [torch.tensor([[1, 5, 9], [0, 2, 2]])])


IMG = torch.randn(2, 4, 8, 8)
W1D = torch.randn(2, 4, 3)
W3DT = torch.randn(4, 2, 2, 3, 2)


@pytest.mark.parametrize(
    "layer",
    [
        nn.Conv2d(4, 6, 3),
        nn.Conv2d(4, 8, 3, stride=2, padding=1, dilation=2, groups=2),
        nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False),
        nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
        nn.MaxPool2d(2),
        nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        nn.AvgPool2d(3, stride=2, padding=1),
        nn.AvgPool2d(2, count_include_pad=False, padding=1),
        nn.AdaptiveAvgPool2d((3, 1)),
        nn.GroupNorm(2, 4),
        nn.InstanceNorm2d(4, affine=True),
        nn.PixelShuffle(2),
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Upsample(size=(5, 7), mode="bilinear"),
        nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
    ],
)
def test_spatial_layers(verify, layer):
    with torch.no_grad():
        for p in layer.parameters():
            p.uniform_(-1, 1)
    verify(layer, [IMG], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: torch.nn.functional.pad(x, (1, 2)),
        lambda x: torch.nn.functional.pad(x, (1, 1, 2, 0), value=3.0),
        lambda x: torch.nn.functional.pad(x, (1, 1, 2, 1), mode="reflect"),
        lambda x: torch.nn.functional.pad(x, (2, 1, 1, 1), mode="replicate"),
        lambda x: torch.nn.functional.conv1d(x[:, :, 0], W1D, torch.ones(2), padding=1, stride=2),
        lambda x: torch.nn.functional.max_pool1d(x[:, :, 0], 2),
        lambda x: torch.nn.functional.adaptive_avg_pool1d(x[:, :, 0], 3),
        lambda x: torch.nn.functional.conv_transpose3d(x[:, :, None, :3, :3], W3DT, stride=2,
                                                       padding=(0, 1, 1)),
    ],
)
def test_padding_and_1d(verify, fn):
    torch.manual_seed(1)
    verify(fn, [IMG], rtol=1e-4, atol=1e-5)


def test_attention(verify):
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4), torch.randn(2, 3, 6, 4)
    mask = torch.rand(5, 6) > 0.3
    sdpa = torch.nn.functional.scaled_dot_product_attention
    verify(lambda q, k, v: sdpa(q, k, v), [q, k, v], rtol=1e-4, atol=1e-5)
    verify(lambda q, k, v: sdpa(q, k, v, attn_mask=mask, scale=0.3), [q, k, v], rtol=1e-4, atol=1e-5)
    verify(lambda q, k: sdpa(q, k, k, is_causal=True), [q, q], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, i: torch.gather(x, 1, i),
        lambda x, i: torch.scatter(x, 1, i, x[:, :2] * 2),
        lambda x, i: torch.scatter_add(x, 1, i, torch.ones(3, 2)),
        lambda x, i: torch.sort(x, dim=1),
        lambda x, i: torch.sort(x, dim=0, descending=True)[0],
        lambda x, i: torch.argsort(x, dim=-1),
        lambda x, i: torch.topk(x, 2),
        lambda x, i: torch.topk(x, 2, dim=0, largest=False),
        lambda x, i: torch.cumsum(x, 1),
        lambda x, i: torch.cumprod(x, 0),
        lambda x, i: torch.nn.functional.one_hot(i, 4),
        lambda x, i: torch.einsum("ij,kj->ik", x, x),
        lambda x, i: torch.outer(x[0], x[1]),
    ],
)
def test_index_sort_scan(verify, fn):
    x = torch.randn(3, 4)
    i = torch.tensor([[0, 3], [1, 1], [2, 0]])
    verify(fn, [x, i], rtol=1e-5, atol=1e-5)
