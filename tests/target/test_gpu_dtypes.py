"""float16 and bfloat16 kernels on the GPU back ends: loads, stores and arithmetic round like the
CPU back end; a matmul reads float16 and accumulates in float32 where the schedule says so."""

import gpu_programs as P
import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.ir.dtype import to_numpy_dtype

RNG = np.random.default_rng(3)


def _cpu(mod_unbound, arrays, out):
    lib = graphc.build(mod_unbound, target="llvm")
    arrays = [a.copy() for a in arrays]
    lib["main"](*arrays)
    return arrays[out]


def _ew(dtype, bound=True):
    A = te.placeholder((8, 37), dtype, name="A")
    B = te.placeholder((8, 37), dtype, name="B")
    C = te.compute((8, 37), lambda i, j: te.max(A[i, j] * B[i, j] - A[i, j] / tir.const(3, dtype),
                                              tir.const(-1, dtype)), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    if bound:
        P.bind_spatial(sch, sch.get_block("C"))
    return sch.mod


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_arithmetic_matches_the_cpu(dtype):
    npdt = to_numpy_dtype(dtype)
    a = RNG.standard_normal((8, 37)).astype(npdt)
    b = RNG.standard_normal((8, 37)).astype(npdt)
    arrays = [a, b, np.zeros((8, 37), npdt)]
    (out,) = P.run_opencl(_ew(dtype), arrays, [2])
    expected = _cpu(_ew(dtype, bound=False), arrays, 2)
    np.testing.assert_array_equal(out.astype("float32"), expected.astype("float32"))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_sources_store_bits_and_round_in_float(dtype):
    P.opencl_device()
    source = graphc.build(_ew(dtype), target="opencl").imported_modules[0].get_source()
    helper = "gc_rh(" if dtype == "float16" else "gc_rbf("
    assert "__global const ushort* restrict A" in source and helper in source
    P.require_nvrtc()
    cuda = graphc.build(_ew(dtype), target="cuda").imported_modules[0].get_source()
    assert "const unsigned short* __restrict__ A" in cuda and helper in cuda
    if dtype == "float16":
        assert "cvt.rn.f16.f32" in cuda  # CUDA converts with the hardware instruction


def test_half_matmul_accumulates_in_float32():
    a = RNG.standard_normal((32, 48)).astype("float16")
    b = RNG.standard_normal((48, 32)).astype("float16")
    mod = P.matmul(32, 32, 48, dtype="float16", acc="float32")
    (c,) = P.run_opencl(mod, [a, b, np.zeros((32, 32), "float32")], [2])
    np.testing.assert_allclose(c, a.astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-5)
    P.check_cubins(mod)


def test_16bit_conversion_edge_values():
    """Rounding to nearest even, overflow to inf, subnormals and NaN, as numpy converts."""
    values = np.array([0.0, -0.0, 1.0, 65504.0, 65520.0, 1e6, -1e6, 6e-8, 3e-8, 1e-10, 2.0 ** -14,
                       np.inf, -np.inf, np.nan, 1.0009765625, 1.00048828125, 3.14159, -2.71828], "float32")
    n = values.size
    for dtype in ("float16", "bfloat16"):
        A = te.placeholder((n,), "float32", name="A")
        B = te.compute((n,), lambda i: A[i].astype(dtype), name="B")
        sch = tir.Schedule(te.create_prim_func([A, B]))
        P.bind_spatial(sch, sch.get_block("B"), threads=32)
        npdt = to_numpy_dtype(dtype)
        (out,) = P.run_opencl(sch.mod, [values, np.zeros(n, npdt)], [1])
        with np.errstate(over="ignore"):
            expected = values.astype(npdt).astype("float32")
        np.testing.assert_array_equal(out.astype("float32"), expected)
