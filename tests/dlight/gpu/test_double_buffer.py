"""Matmul's double-buffered shared tiles (InjectDoubleBuffer): the SIMT and tensor-core schedules
run on PoCL against the unscheduled CPU build (static, odd and symbolic sizes), their kernels
wait once per k step, and they compile to sm_80/sm_90 cubins without spills."""

import re

import numpy as np
import pytest
from gpu_check import check_cubins, run_both, schedule

import graphc
from graphc import IRModule, te, tir
from graphc.dlight import gpu
from graphc.dlight.gpu.matmul import MatmulConfig

SIMT = gpu.Matmul(MatmulConfig(tensor_cores="never"))
SINGLE = gpu.Matmul(MatmulConfig(tensor_cores="never", double_buffer=False))
TENSOR = gpu.Matmul(MatmulConfig(tensor_cores="always", frags_i=1, frags_j=1))  # fits PoCL's 16 KiB


def _matmul(m, n, k, dtype="float32"):
    A = te.placeholder((m, k), dtype, name="A")
    B = te.placeholder((k, n), dtype, name="B")
    r = te.reduce_axis((0, k), "r")
    acc = "float32"
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r].astype(acc) * B[r, j].astype(acc), axis=r), name="C")
    return te.create_prim_func([A, B, C])


def _source(func, rule, target):
    sch = schedule(func, [rule], target)
    lib = graphc.build(IRModule({"main": sch.with_attr("global_symbol", "main")}), target=target)
    return lib.imported_modules[0].get_source()


def _k_loop(source: str) -> str:
    """The text of the k-step loop (`for (int k_0 ...) { ... }`) of the generated kernel."""
    start = source.index("for (int r_0 = 0;")
    depth, n = 0, source.index("{", start)
    for n in range(n, len(source)):  # noqa: B020 (n starts at the loop's opening brace)
        depth += {"{": 1, "}": -1}.get(source[n], 0)
        if depth == 0:
            return source[start:n + 1]
    raise AssertionError("unbalanced braces")


def _double_buffered(func, rule=SIMT) -> bool:
    return '"double_buffer"' in schedule(func, [rule]).script()


@pytest.mark.parametrize("m, n, k", [(64, 48, 32), (37, 29, 48), (128, 96, 16)])
def test_double_buffered_matmul_matches_the_cpu(m, n, k):
    assert _double_buffered(_matmul(m, n, k))
    (cpu,), (dev,) = run_both(_matmul(m, n, k), [SIMT], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)


def test_double_buffered_matmul_with_symbolic_rows_and_reduction():
    m, k = tir.Var("m", "int32"), tir.Var("k", "int32")
    func = _matmul(m, 40, 64)
    assert _double_buffered(func)
    for rows in (5, 70):
        (cpu,), (dev,) = run_both(func, [SIMT], [2], shapes={0: (rows, 64), 2: (rows, 40)})
        np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)
    func = _matmul(48, 40, k)  # a symbolic k: bound checks in the prologue and the fetch ahead
    assert _double_buffered(func)
    for depth in (7, 16, 53):
        (cpu,), (dev,) = run_both(func, [SIMT], [2], shapes={0: (48, depth), 1: (depth, 40)})
        np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)


def test_a_partial_last_step_keeps_one_copy():
    func = _matmul(37, 29, 53)
    assert not _double_buffered(func)
    (cpu,), (dev,) = run_both(func, [SIMT], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)


def test_double_buffered_tensor_cores_match_the_cpu():
    func = _matmul(64, 96, 80, "float16")
    (cpu,), (dev,) = run_both(func, [TENSOR], [2])
    assert "tir.wmma_mma" in schedule(func, [TENSOR]).script()
    np.testing.assert_allclose(dev, cpu, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("rule", [SIMT, TENSOR])
def test_one_barrier_per_k_step(rule):
    func = _matmul(128, 128, 96, "float16" if rule is TENSOR else "float32")
    source = _source(func, rule, "opencl")
    loop = _k_loop(source)
    assert loop.count("barrier(") == 1  # at the end of the step: no barrier between fetch and multiply
    assert re.search(r"if \(\(r_0 \+ 1\) < 6\)", loop)  # the next step's tiles are fetched first
    assert "(r_0 + 1) % 2" in loop and "r_0 % 2" in loop
    single = _k_loop(_source(func, SINGLE, "opencl"))
    assert single.count("barrier(") == 2  # the single-buffered loop waits twice


def test_double_buffering_doubles_the_staged_tiles_only():
    func = _matmul(128, 128, 96)
    double = _source(func, SIMT, "opencl")
    single = _source(func, SINGLE, "opencl")
    sizes = {name: int(n) for name, n in re.findall(r"__local float (\w+)\[(\d+)\]", single)}
    assert {name: int(n) for name, n in re.findall(r"__local float (\w+)\[(\d+)\]", double)} == {
        name: 2 * n for name, n in sizes.items()}


def test_double_buffered_kernels_compile_to_cubins_without_spills():
    mod = IRModule({
        "simt": schedule(_matmul(256, 256, 256), [SIMT], "cuda").with_attr("global_symbol", "simt"),
        "wmma": schedule(_matmul(256, 256, 256, "float16"), [gpu.Matmul()], "cuda -arch=sm_80")
        .with_attr("global_symbol", "wmma"),
    })
    usage = check_cubins(mod)
    for arch, info in usage.items():
        assert info["simt_kernel"]["smem"] == 2 * 4 * 16 * 64, (arch, info)  # two copies of the 32-row tiles
        assert info["wmma_kernel"]["smem"] == 2 * 2 * 16 * 64 + 4 * 32 * 32, (arch, info)  # 32 x 32 tiles
