"""Elementwise math conversions (graphc/frontend/torch/converters/math.py, NaN propagation,
logical ops, integer powers) against PyTorch."""

import math

import torch
from torch.nn import functional as F

torch.manual_seed(0)
X = torch.randn(2, 3)
Y = torch.randn(2, 3)
P = torch.rand(2, 3) + 0.1  # positive
U = torch.rand(2, 3) * 1.8 - 0.9  # inside (-1, 1)
I = torch.tensor([[-5, -2, 0], [1, 3, 7]])  # noqa: E741


def test_inverse_trigonometric_and_hyperbolic(verify):
    verify(
        lambda x, u, p: (
            torch.asin(u),
            torch.acos(u),
            torch.atan(x),
            torch.arctan(x) + torch.arcsinh(x),
            torch.sinh(x),
            torch.cosh(x),
            torch.asinh(x),
            torch.acosh(p + 1),
            torch.atanh(u),
        ),
        [X, U, P],
        rtol=1e-5,
        atol=1e-6,
    )


def test_exp_log_variants_and_rounding(verify):
    verify(
        lambda x, p: (
            torch.expm1(x),
            torch.log1p(p),
            torch.log2(p),
            torch.log10(p),
            torch.exp2(x),
            torch.trunc(x * 3),
            torch.frac(x * 3),
            torch.erfc(x),
            torch.round(x * 10, decimals=1),
            torch.round(x * 100, decimals=-1),
            torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5])),
        ),
        [X, P],
        rtol=1e-5,
        atol=1e-6,
    )


def test_binary_math(verify):
    verify(
        lambda x, y: (
            torch.atan2(x, y),
            torch.hypot(x, y),
            torch.copysign(x, y),
            torch.copysign(x, -1.0),
            torch.logaddexp(x, y),
            torch.lerp(x, y, 0.3),
            torch.lerp(x, y, y),
            torch.addcmul(x, x, y, value=0.5),
            torch.addcdiv(x, x, y.abs() + 1, value=2),
        ),
        [X, Y],
        rtol=1e-5,
        atol=1e-6,
    )


def test_composite_activations(verify):
    verify(
        lambda x, p: (
            F.logsigmoid(x),
            F.celu(x),
            F.mish(x),
            F.hardshrink(x, 0.5),
            F.softshrink(x, 0.5),
            torch.logit(p.clamp(0.1, 0.9)),
            torch.sgn(x),
        ),
        [X, P],
        rtol=1e-5,
        atol=1e-6,
    )


def test_sign_bit_and_angle(verify):
    special = torch.tensor([[math.nan, -0.0, 0.0], [-math.inf, math.inf, -1.0]])
    verify(lambda x: (torch.angle(x), torch.signbit(x)), [special])


def test_precise_near_zero(verify):
    tiny = torch.tensor([1e-10, -3e-8, 2e-6, 0.0])
    verify(lambda x: (torch.expm1(x), torch.log1p(x)), [tiny], rtol=1e-6, atol=0)


def test_erfinv(verify):
    edges = torch.tensor([-1.0, -0.999999, -0.5, 0.0, 1e-8, 0.9999, 1.0, 1.5])
    verify(lambda e, u: (torch.erfinv(e), torch.erfinv(u)), [edges, U], rtol=2e-6, atol=0)
    verify(torch.erfinv, [edges.double()], rtol=1e-12, atol=0)


def test_integer_math(verify):
    verify(
        lambda i: (
            torch.atan(i),
            torch.log2(i.abs() + 1),  # integers compute in float32
            torch.trunc(i),
            torch.signbit(i),
            torch.fmax(i, torch.tensor(1)),
            torch.atan2(i, i + 10),
            i << 2,
            i >> 1,
            torch.bitwise_left_shift(i, i.abs() % 4),
            torch.bitwise_right_shift(i.int(), 1),
            i**2,
            torch.pow(i, 3),
            2 ** i.abs(),
            torch.logical_and(i, i > 0),
            torch.logical_or(i, i * 0),
            torch.logical_xor(i, i),
            torch.logical_not(i),
        ),
        [I],
    )


NAN = torch.tensor([[math.nan, 1.0, -2.0], [3.0, math.nan, math.inf]])


def test_nan_semantics(verify):
    verify(
        lambda a, b: (
            torch.maximum(a, b),
            torch.minimum(a, b),  # NaN wins
            torch.clamp(a, -1, 1),  # NaN stays NaN
            F.hardtanh(a),
            torch.fmax(a, b),
            torch.fmin(a, b),  # NaN loses
        ),
        [NAN, NAN.flip(1)],
    )


def test_promotion_and_bool_bitwise_not(verify):
    double = torch.randn(2, 3).to(torch.float64)
    verify(
        lambda x, d: (
            torch.atan2(x, d),
            torch.hypot(d, x),
            torch.copysign(x, 2),
            ~(x > 0),
            torch.bitwise_not(x > 0),
        ),
        [X, double],
    )
