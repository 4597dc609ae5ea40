"""PromoteReductionAccumulator: which reductions get a local accumulator tile, what the
function looks like after it (Before/Expected against the same two schedule primitives), when
it declines, and that results never change (against numpy, with the pass on and off)."""

import importlib.util
import pathlib

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.errors import GraphcError
from graphc.ir.structural import structural_equal
from graphc.ir.transform import PassContext
from graphc.tir.transform import PromoteReductionAccumulator, lower_pipeline, promote_reduction_accumulators
from graphc.tir.transform.promote_accumulator import CONFIG_KEY, find_promotions

_PATH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "matmul.py"
_spec = importlib.util.spec_from_file_location("benchmarks_matmul_promote", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

OFF = {CONFIG_KEY: {"enabled": False}}


# -- programs ------------------------------------------------------------------------------------


def _matmul_te(M, N, K, relu=False):
    A, B = te.placeholder((M, K), name="A"), te.placeholder((K, N), name="B")
    k = te.reduce_axis((0, K), "k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    if not relu:
        return te.create_prim_func([A, B, C])
    D = te.compute((M, N), lambda i, j: te.max(C[i, j], tir.const(0.0, "float32")), name="D")
    return te.create_prim_func([A, B, D])


def blocked(M=64, N=64, K=64, tile=32, relu=False):
    """The notebook's blocking (yo, xo, k, yi, xi), optionally followed by a relu block."""
    sch = tir.Schedule(_matmul_te(M, N, K, relu))
    c = sch.get_block("C")
    y, x, k = sch.get_loops(c)
    yo, yi = sch.split(y, [None, tile])
    xo, xi = sch.split(x, [None, tile])
    sch.reorder(yo, xo, k, yi, xi)
    return sch


def conv2d(channels=4, size=8, kernel=3):
    """out[f, y, x] = sum_{c, r, s} data[c, y + r, x + s] * w[f, c, r, s], with the reduction
    loops moved outside the spatial y, x loops."""
    pad = size + kernel - 1
    data = te.placeholder((channels, pad, pad), name="data")
    w = te.placeholder((channels, channels, kernel, kernel), name="w")
    rc = te.reduce_axis((0, channels), "rc")
    ry = te.reduce_axis((0, kernel), "ry")
    rx = te.reduce_axis((0, kernel), "rx")
    out = te.compute(
        (channels, size, size),
        lambda f, y, x: te.sum(data[rc, y + ry, x + rx] * w[f, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    sch = tir.Schedule(te.create_prim_func([data, w, out]))
    blk = sch.get_block("conv")
    f, y, x, c, r, s = sch.get_loops(blk)
    sch.reorder(f, c, r, s, y, x)
    return sch


def row_sum(m=64, n=48, tile=16):
    """B[i] = sum_k A[i, k] with loops io, k, ii: the tile B[io*16 : +16] is updated per k."""
    A = te.placeholder((m, n), name="A")
    k = te.reduce_axis((0, n), "k")
    B = te.compute((m,), lambda i: te.sum(A[i, k], axis=k), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, kk = sch.get_loops(sch.get_block("B"))
    io, ii = sch.split(i, [None, tile])
    sch.reorder(io, kk, ii)
    return sch


def _run(mod, arrays, config=None):
    with PassContext(config=config or {}):
        lib = graphc.build(mod, target="llvm")
    args = [graphc.nd.array(a) for a in arrays]
    lib["main"](*args)
    return args[-1].numpy()


def _lowered(mod, config=None):
    with PassContext(config=config or {}):
        return graphc.lower(mod)["main"]


# -- what it does --------------------------------------------------------------------------------


def test_blocked_matmul_equals_cache_write_then_reverse_compute_at():
    sch = blocked()
    expected = sch.copy()
    write_back = expected.cache_write(expected.get_block("C"), 0, "local")
    xo = expected.get_loops(expected.get_block("C"))[1]
    expected.reverse_compute_at(write_back, xo)
    got = promote_reduction_accumulators(sch.mod["main"])
    assert structural_equal(got, expected.mod["main"])


def test_the_promotion_found_is_the_loop_outside_the_reduction_with_the_tile_size():
    sch = blocked(tile=32)
    [p] = find_promotions(sch.mod["main"])
    xo = sch.get(sch.get_loops(sch.get_block("C"))[1]).loop_var
    assert (p.block, p.loop, p.tile_bytes) == ("C", xo, 32 * 32 * 4)


def test_lowered_blocked_matmul_accumulates_in_a_compact_local_tile():
    func = _lowered(blocked().mod)
    text = func.script()
    assert 'C_local = T.allocate([1024], "float32", "local")' in text
    # C itself is stored once per element, in the write-back nest after the k loop
    stores = []
    tir.post_order_visit(func.body, lambda n: stores.append(n) if isinstance(n, tir.BufferStore) else None)
    assert [s.buffer.name for s in stores].count("C") == 1
    assert "C_local" not in _lowered(blocked().mod, OFF).script()


def test_lower_pipeline_runs_it_first():
    assert lower_pipeline().passes[0].info.name == "PromoteReductionAccumulator"


def test_running_it_twice_changes_nothing_more():
    once = promote_reduction_accumulators(blocked().mod["main"])
    assert promote_reduction_accumulators(once) is once


def test_conv_with_reduction_loops_outside_the_spatial_ones_gets_a_tile_per_filter():
    [p] = find_promotions(conv2d().mod["main"])
    assert p.tile_bytes == 8 * 8 * 4
    assert "conv_local" in _lowered(conv2d().mod).script()


def test_reduction_with_an_epilogue_promotes_the_intermediate():
    func = promote_reduction_accumulators(blocked(relu=True).mod["main"])
    text = func.script()
    assert "C_local" in text and 'with T.block("D")' in text


# -- results ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(64, 64, 64), (96, 80, 48)])
@pytest.mark.parametrize("name", list(bench.SCHEDULES))
def test_benchmark_schedules_match_numpy_with_and_without_the_pass(name, shape):
    M, N, K = shape
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    mod = bench.SCHEDULES[name](M, N, K)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    for config in (None, OFF):
        got = _run(mod, [a, b, np.zeros((M, N), np.float32)], config)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tile", [16, 32])
def test_non_dividing_tiles_match_numpy(tile):
    M, N, K = 40, 50, 36
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    sch = blocked(M, N, K, tile=tile)
    sch.parallel(sch.get_loops(sch.get_block("C"))[0])
    assert find_promotions(sch.mod["main"])
    got = _run(sch.mod, [a, b, np.zeros((M, N), np.float32)])
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_conv_matches_numpy():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((4, 10, 10)).astype(np.float32)
    w = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
    expected = np.zeros((4, 8, 8))
    for r in range(3):
        for s in range(3):
            expected += np.einsum("fc,cyx->fyx", w[:, :, r, s], data[:, r : r + 8, s : s + 8])
    got = _run(conv2d().mod, [data, w, np.zeros((4, 8, 8), np.float32)])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_reduction_with_relu_epilogue_matches_numpy():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((64, 48), dtype=np.float32), rng.standard_normal((48, 80), dtype=np.float32)
    got = _run(blocked(64, 80, 48, relu=True).mod, [a, b, np.zeros((64, 80), np.float32)])
    np.testing.assert_allclose(got, np.maximum(a.astype(np.float64) @ b, 0), rtol=1e-4, atol=1e-4)


def test_row_sum_matches_numpy():
    a = np.random.default_rng(4).standard_normal((64, 48)).astype(np.float32)
    assert find_promotions(row_sum().mod["main"])
    got = _run(row_sum().mod, [a, np.zeros(64, np.float32)])
    np.testing.assert_allclose(got, a.sum(axis=1), rtol=1e-4, atol=1e-4)


# -- when it declines ------------------------------------------------------------------------------


def _unchanged(func, **options):
    return promote_reduction_accumulators(func, **options) is func


def test_declines_when_the_reduction_loop_is_innermost():
    assert _unchanged(bench.schedule_naive(32, 32, 32)["main"])


def test_declines_when_the_reduction_loop_is_outermost():
    sch = tir.Schedule(_matmul_te(32, 32, 32))
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i, j)
    assert _unchanged(sch.mod["main"])


def test_declines_blocks_already_writing_a_local_buffer():
    assert _unchanged(bench.schedule_microkernel(64, 64, 64)["main"])


def test_declines_a_decomposed_reduction():
    sch = blocked()
    sch.decompose_reduction(sch.get_block("C"), sch.get_loops(sch.get_block("C"))[2])
    assert _unchanged(sch.mod["main"])


def test_declines_tiles_over_the_threshold():
    func = blocked(tile=32).mod["main"]
    assert _unchanged(func, max_bytes=32 * 32 * 4 - 1)
    assert not _unchanged(func, max_bytes=32 * 32 * 4)


def test_declines_a_parallel_loop_inside_the_tile():
    sch = blocked()
    sch.parallel(sch.get_loops(sch.get_block("C"))[3])  # yi, inside k
    assert _unchanged(sch.mod["main"])


def test_declines_gpu_thread_bindings():
    sch = blocked()
    sch.bind(sch.get_loops(sch.get_block("C"))[0], "blockIdx.x")
    assert _unchanged(sch.mod["main"])


def test_declines_symbolic_tiles():
    n = tir.Var("n")
    A, B = te.placeholder((n, 16), name="A"), te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), "k")
    C = te.compute((n, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    sch.reorder(j, kk, i)  # the tile under j is C[0:n, j]
    assert _unchanged(sch.mod["main"])


def test_declines_when_a_primitive_refuses():
    """The relu block moved into the tile loop shares C's nest: cache_write raises, so the
    function stays as it was (and still computes the right thing)."""
    sch = blocked(relu=True)
    sch.reverse_compute_at(sch.get_block("D"), sch.get_loops(sch.get_block("C"))[1])
    assert find_promotions(sch.mod["main"])  # it qualifies by shape ...
    assert _unchanged(sch.mod["main"])  # ... but the primitive refuses
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    got = _run(sch.mod, [a, b, np.zeros((64, 64), np.float32)])
    np.testing.assert_allclose(got, np.maximum(a.astype(np.float64) @ b, 0), rtol=1e-4, atol=1e-4)


def test_switched_off_by_config_and_by_disabled_pass():
    mod = blocked().mod
    assert "C_local" not in _lowered(mod, OFF).script()
    assert "C_local" not in _lowered(mod, {CONFIG_KEY: {"max_bytes": 1024}}).script()
    with PassContext(disabled_pass=["PromoteReductionAccumulator"]):
        assert "C_local" not in graphc.lower(mod)["main"].script()


def test_unknown_options_are_reported():
    with pytest.raises(GraphcError, match="max_bytes"):
        PromoteReductionAccumulator(max_kb=4)


def test_vectorized_column_sum_in_a_parallel_loop_matches_numpy():
    """S[j] = sum_k A[k, j] as j_0 (parallel), k, j_1 (vectorized): the 64-float tile of S
    accumulates locally in each thread's iteration of j_0."""
    A = te.placeholder((32, 256), name="A")
    k = te.reduce_axis((0, 32), "k")
    S = te.compute((256,), lambda j: te.sum(A[k, j], axis=k), name="S")
    sch = tir.Schedule(te.create_prim_func([A, S]))
    j, kk = sch.get_loops(sch.get_block("S"))
    jo, ji = sch.split(j, [None, 64])
    sch.reorder(jo, kk, ji)
    sch.parallel(jo)
    sch.vectorize(ji)
    [p] = find_promotions(sch.mod["main"])
    assert p.tile_bytes == 64 * 4
    a = np.random.default_rng(7).standard_normal((32, 256)).astype(np.float32)
    got = _run(sch.mod, [a, np.zeros(256, np.float32)])
    np.testing.assert_allclose(got, a.sum(axis=0), rtol=1e-4, atol=1e-4)


def test_symbolic_outer_extent_matches_numpy():
    n = tir.Var("n")
    A, B = te.placeholder((n, 24), name="A"), te.placeholder((24, 40), name="B")
    k = te.reduce_axis((0, 24), "k")
    C = te.compute((n, 40), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    y, x, kk = sch.get_loops(sch.get_block("C"))
    yo, yi = sch.split(y, [None, 16])
    xo, xi = sch.split(x, [None, 16])
    sch.reorder(yo, xo, kk, yi, xi)
    [p] = find_promotions(sch.mod["main"])
    assert p.tile_bytes == 16 * 16 * 4
    lib = graphc.build(sch.mod, target="llvm")
    rng = np.random.default_rng(8)
    for m in (1, 37):
        a, b = rng.standard_normal((m, 24), dtype=np.float32), rng.standard_normal((24, 40), dtype=np.float32)
        c = np.zeros((m, 40), np.float32)
        lib["main"](a, b, c)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
