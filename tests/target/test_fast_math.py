"""The float32 exp / tanh formulas of the LLVM back end and topi's fast_erf: accuracy, special
values, and that vectorized loops of them call no libm function."""

import math

import numpy as np
import pytest

import graphc
from graphc import te, tir, topi

REFERENCE = {
    "exp": np.exp,
    "tanh": np.tanh,
    "fast_erf": np.vectorize(math.erf),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
}
# max relative error allowed (the formulas' measured worst case, with a margin)
TOLERANCE = {"exp": 2e-7, "tanh": 5e-7, "fast_erf": 5e-7, "sigmoid": 3e-7}


def _build(name: str, n: int, lanes: int | None):
    A = te.placeholder((n,), name="A")
    fn = topi.fast_erf_value if name == "fast_erf" else getattr(tir, name)
    B = te.compute((n,), lambda i: fn(A[i]), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    if lanes:
        (i,) = sch.get_loops(sch.get_block("B"))
        _, inner = sch.split(i, [None, lanes])
        sch.vectorize(inner)
    return graphc.build(sch.mod)


def _inputs(n: int) -> np.ndarray:
    x = np.concatenate([np.linspace(-110, 95, n // 2), np.linspace(-4.5, 4.5, n - n // 2)])
    return x.astype("float32")


@pytest.mark.parametrize("lanes", [None, 16])
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_accuracy_over_the_float32_range(name, lanes):
    n = 1 << 16
    lib = _build(name, n, lanes)
    x = _inputs(n)
    y = np.empty_like(x)
    lib["main"](x, y)
    want = REFERENCE[name](x.astype("float64"))
    with np.errstate(over="ignore"):
        want32 = want.astype("float32")  # what a correctly rounded float32 result would be
    normal = np.isfinite(want32) & (np.abs(want32) > 1.2e-38)
    rel = np.abs(y[normal] - want[normal]) / np.abs(want[normal])
    assert rel.max() < TOLERANCE[name]
    # results below the smallest normal float go gradually to zero; overflow is inf
    np.testing.assert_allclose(y[~normal], want32[~normal], atol=2e-38)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_special_values(name):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 8.0, -8.0, 20.0, -20.0] * 2, "float32")
    y = np.empty_like(x)
    _build(name, x.size, 16 if x.size % 16 == 0 else None)["main"](x, y)
    want = REFERENCE[name](x.astype("float64")).astype("float32")
    np.testing.assert_allclose(y, want, rtol=5e-7, atol=0)
    assert np.isnan(y[0])


def test_vectorized_loops_call_no_libm_function():
    for name in ("exp", "tanh", "fast_erf"):
        asm = _build(name, 1024, 16).get_source("asm")
        calls = [line for line in asm.splitlines() if line.strip().startswith("call")]
        assert calls == [], (name, calls)


def test_erf_and_float64_keep_the_library_lowering():
    asm = _build("erf", 64, 16).get_source("asm")
    assert "erff" in asm
    A = te.placeholder((64,), "float64", name="A")
    B = te.compute((64,), lambda i: tir.erf(A[i]), name="B")
    lib = graphc.build(te.create_prim_func([A, B]))
    x = np.linspace(-3, 3, 64)
    y = np.empty_like(x)
    lib["main"](x, y)
    np.testing.assert_allclose(y, [math.erf(v) for v in x], rtol=1e-15)
