"""Every schedule of benchmarks/matmul.py computes A @ B (checked against numpy at 128^3).

The benchmark times them at 1024^3; here only the numbers matter, on sizes small enough for
the test suite, including sizes the tiles do not divide (the split loops get guards).
"""

import importlib.util
import pathlib

import numpy as np
import pytest

import graphc

_PATH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "matmul.py"
_spec = importlib.util.spec_from_file_location("benchmarks_matmul", _PATH)
matmul = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(matmul)


def _run(mod, M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    c = graphc.nd.empty((M, N), "float32")
    graphc.build(mod, target="llvm")["main"](graphc.nd.array(a), graphc.nd.array(b), c)
    return c.numpy(), a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("name", list(matmul.SCHEDULES))
def test_schedule_matches_numpy_128(name):
    got, expected = _run(matmul.SCHEDULES[name](128, 128, 128), 128, 128, 128)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape", [(64, 192, 32), (100, 80, 33)])
@pytest.mark.parametrize("name", list(matmul.SCHEDULES))
def test_schedule_matches_numpy_other_shapes(name, shape):
    M, N, K = shape
    got, expected = _run(matmul.SCHEDULES[name](M, N, K), M, N, K, seed=1)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


def test_microkernel_inner_loop_is_zmm_fma():
    """The micro-kernel's k loop is AVX-512 FMAs (skipped on CPUs without AVX-512)."""
    from graphc.target.target import host_cpu

    if "+avx512f" not in host_cpu()[1]:
        pytest.skip("the host CPU has no AVX-512")
    asm = graphc.build(matmul.schedule_microkernel(128, 128, 128), target="llvm").get_source("asm")
    fmas = [line for line in asm.splitlines() if "vfmadd231ps" in line and "zmm" in line]
    assert len(fmas) >= matmul.MR * matmul.NR // matmul.VEC


def test_blocked_schedule_is_not_vectorized_with_gathers():
    # LLVM's cost model for znver4 once vectorized the 32-row loop with gathers/scatters,
    # making the notebook's blocked schedule slower than the naive one.
    asm = graphc.build(matmul.schedule_blocked(128, 128, 128), target="llvm").get_source("asm")
    assert "vgather" not in asm and "vscatter" not in asm
