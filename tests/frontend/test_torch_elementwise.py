"""Elementwise ATen conversions against PyTorch: arithmetic with type promotion, comparisons,
unary math, activations, where/masked_fill/clamp."""

import pytest
import torch

torch.manual_seed(0)


X = torch.randn(2, 3)
Y = torch.randn(2, 3)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: x + y,
        lambda x, y: x - 2 * y,
        lambda x, y: x * y,
        lambda x, y: x / (y.abs() + 1),
        lambda x, y: torch.maximum(x, y),
        lambda x, y: torch.minimum(x, y),
        lambda x, y: x.pow(2) + y,
        lambda x, y: torch.add(x, y, alpha=3.0),
        lambda x, y: torch.sub(x, y, alpha=0.5),
        lambda x, y: 1 - x,
        lambda x, y: torch.where(x > y, x, y),
        lambda x, y: x.masked_fill(y < 0, -1.0),
        lambda x, y: torch.clamp(x, -0.5, 0.5) + torch.clamp(y, min=0.0),
        lambda x, y: (x > y, x >= y, x < y, x <= y, x == y, x != y),
        lambda x, y: torch.floor_divide(x, y.abs() + 1),
        lambda x, y: torch.remainder(x, 0.7),
        lambda x, y: torch.div(x, y.abs() + 0.5, rounding_mode="floor"),
        lambda x, y: torch.div(x, y.abs() + 0.5, rounding_mode="trunc"),
    ],
)
def test_binary(verify, fn):
    verify((fn), [X, Y])


@pytest.mark.parametrize(
    "name",
    [
        "abs",
        "neg",
        "exp",
        "sigmoid",
        "tanh",
        "sin",
        "cos",
        "floor",
        "ceil",
        "round",
        "sign",
        "erf",
        "relu",
        "square",
    ],
)
def test_unary(verify, name):
    verify((getattr(torch, name)), [X])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: torch.sqrt(x.abs()),
        lambda x: torch.rsqrt(x.abs() + 1),
        lambda x: torch.log(x.abs() + 1),
        lambda x: torch.nn.functional.gelu(x),
        lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
        lambda x: torch.nn.functional.silu(x),
        lambda x: torch.nn.functional.leaky_relu(x, 0.2),
        lambda x: torch.nn.functional.elu(x),
        lambda x: torch.nn.functional.hardswish(x),
        lambda x: torch.nn.functional.hardsigmoid(x),
        lambda x: torch.nn.functional.softplus(x),
        lambda x: torch.nn.functional.relu6(x * 4),
        lambda x: torch.nn.functional.hardtanh(x, -0.3, 0.3),
        lambda x: torch.nn.functional.selu(x),
        lambda x: x.reciprocal(),
    ],
)
def test_activation(verify, fn):
    verify((fn), [X], rtol=1e-5, atol=1e-6)


def test_type_promotion(verify):
    i = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32)
    verify((lambda a, x: (a + x, a * 2, a / 2, a + 1.5, a > 2, torch.exp(a))), [i, X])


def test_int64_and_bool_logic(verify):
    a = torch.tensor([[1, 0, 3]])
    verify((lambda a: (torch.logical_not(a > 0), (a > 0) & (a < 3), a // 2, a % 2)), [a])


def test_float_only_ops_compute_integers_in_float(verify):
    # the float-only flag comes from the operator registry; torch computes these in float32
    i = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int64)
    fn = lambda a: (torch.sqrt(a), torch.rsqrt(a), torch.log(a), torch.sigmoid(a), torch.erf(a), a.abs())
    verify(fn, [i], rtol=1e-5, atol=1e-6)
