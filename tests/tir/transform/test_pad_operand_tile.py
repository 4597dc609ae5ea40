"""PadConflictingOperandTile: which operand tiles of reductions get a padded copy, what the
function looks like after it (Before/Expected against the same schedule primitives), when it
declines, and that results never change (against numpy, with the pass on and off)."""

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.errors import GraphcError
from graphc.ir.structural import structural_equal
from graphc.ir.transform import PassContext
from graphc.tir.transform import PadConflictingOperandTile, lower_pipeline, pad_conflicting_operand_tiles
from graphc.tir.transform.pad_operand_tile import CONFIG_KEY, find_stagings

OFF = {CONFIG_KEY: {"enabled": False}}
BOTH_OFF = {**OFF, "tir.PromoteReductionAccumulator": {"enabled": False}}


def blocked(M=64, N=32, K=1024, tile=32, producer=False, batch=None):
    """The notebook's blocking (yo, xo, k, yi, xi); `producer` computes A in the function,
    `batch` adds a leading batch dimension (outermost loop)."""
    lead = (batch,) if batch else ()
    A0 = te.placeholder(lead + (M, K), name="A0" if producer else "A")
    A = te.compute(A0.shape, lambda *ix: A0[ix] * 2.0, name="A") if producer else A0
    B = te.placeholder((K, N), name="B")
    k = te.reduce_axis((0, K), "k")
    C = te.compute(lead + (M, N), lambda *ix: te.sum(A[ix[:-1] + (k,)] * B[k, ix[-1]], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A0, B, C]))
    c = sch.get_block("C")
    *outer, y, x, kk = sch.get_loops(c)
    yo, yi = sch.split(y, [None, tile])
    xo, xi = sch.split(x, [None, tile])
    sch.reorder(*outer, yo, xo, kk, yi, xi)
    return sch


def _inputs(sch, seed=0):
    rng = np.random.default_rng(seed)
    func = sch.mod["main"]
    return [rng.standard_normal([int(d) for d in func.buffer_map[p].shape]).astype(np.float32)
            for p in func.params]


def _run(mod, arrays, config=None):
    with PassContext(config=config or {}):
        lib = graphc.build(mod, target="llvm")
    args = [graphc.nd.array(a) for a in arrays]
    lib["main"](*args)
    return args[-1].numpy()


def _check(sch, expected_fn, seed=0):
    arrays = _inputs(sch, seed)
    expected = expected_fn(*[a.astype(np.float64) for a in arrays[:-1]])
    for config in (None, OFF, BOTH_OFF):
        got = _run(sch.mod, arrays, config)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


# -- what it does --------------------------------------------------------------------------------


def test_blocked_matmul_equals_cache_read_compute_at_storage_align():
    sch = blocked()
    expected = sch.copy()
    c = expected.get_block("C")
    yo = expected.get_loops(c)[0]
    copy = expected.cache_read(c, 0, "global", consumer_blocks=[c])
    expected.compute_at(copy, yo)
    expected.storage_align(copy, 0, 0, 1024, 16)
    got = pad_conflicting_operand_tiles(sch.mod["main"])
    assert structural_equal(got, expected.mod["main"])


def test_the_staging_found_is_a_at_the_outer_row_loop():
    sch = blocked()
    [s] = find_stagings(sch.mod["main"])
    yo = sch.get(sch.get_loops(sch.get_block("C"))[0]).loop_var
    assert (s.block, s.buffer, s.loop, s.tile_bytes) == ("C", "A", yo, 32 * 1024 * 4)


def test_lowered_copy_has_rows_one_line_past_4_kib():
    text = graphc.lower(blocked().mod)["main"].script()
    assert 'A_global = T.allocate([33264], "float32", "global")' in text  # 31 * 1040 + 1024
    assert "A_global_1[ax0 * 1040 + ax1] = A_1[" in text  # the copy, once per row tile
    assert "A_global_1[i0_1 * 1040 + k]" in text  # the reduction reads the padded copy


def test_lower_pipeline_runs_it_after_the_accumulator_promotion():
    names = [p.info.name for p in lower_pipeline().passes]
    assert names[:2] == ["PromoteReductionAccumulator", "PadConflictingOperandTile"]


def test_running_it_twice_changes_nothing_more():
    once = pad_conflicting_operand_tiles(blocked().mod["main"])
    assert pad_conflicting_operand_tiles(once) is once


# -- results ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("tile", [16, 32])
def test_non_dividing_tiles_match_numpy(tile):
    sch = blocked(M=40, N=24, K=1024, tile=tile)
    sch.parallel(sch.get_loops(sch.get_block("C"))[0])
    assert find_stagings(sch.mod["main"])
    _check(sch, lambda a, b: a @ b)


def test_batched_operand_matches_numpy():
    sch = blocked(M=24, N=16, K=1024, tile=16, batch=2)
    assert find_stagings(sch.mod["main"])
    _check(sch, lambda a, b: a @ b, seed=1)


# -- when it declines ------------------------------------------------------------------------------


def _unchanged(func, **options):
    return pad_conflicting_operand_tiles(func, **options) is func


def test_declines_when_one_step_reads_few_rows():
    assert _unchanged(blocked(tile=8).mod["main"])


def test_declines_rows_not_a_multiple_of_4_kib_apart():
    assert _unchanged(blocked(K=1000).mod["main"])


def test_declines_an_operand_the_function_writes():
    assert _unchanged(blocked(producer=True).mod["main"])


def test_declines_tiles_over_the_threshold():
    func = blocked().mod["main"]
    assert _unchanged(func, max_bytes=32 * 1024 * 4 - 1)
    assert not _unchanged(func, max_bytes=32 * 1024 * 4)


def test_a_parallel_loop_inside_moves_the_copy_into_its_body():
    """The copy is never shared by the threads of a parallel loop: with xo parallel it is made
    per iteration of xo (by each thread), not once per yo before the parallel loop."""
    sch = blocked()
    xo = sch.get_loops(sch.get_block("C"))[1]
    sch.parallel(xo)
    [s] = find_stagings(sch.mod["main"])
    assert s.loop is sch.get(xo).loop_var


def test_declines_when_the_reduction_loop_is_innermost():
    sch = blocked()
    yo, xo, k, yi, xi = sch.get_loops(sch.get_block("C"))
    sch.reorder(yo, xo, yi, xi, k)
    assert _unchanged(sch.mod["main"])


def test_declines_gpu_thread_bindings():
    sch = blocked()
    sch.bind(sch.get_loops(sch.get_block("C"))[0], "blockIdx.x")
    assert _unchanged(sch.mod["main"])


def test_switched_off_by_config_and_by_disabled_pass():
    mod = blocked().mod
    with PassContext(config=OFF):
        assert "A_global" not in graphc.lower(mod)["main"].script()
    with PassContext(disabled_pass=["PadConflictingOperandTile"]):
        assert "A_global" not in graphc.lower(mod)["main"].script()


def test_unknown_options_are_reported():
    with pytest.raises(GraphcError, match="max_bytes"):
        PadConflictingOperandTile(rows=8)


def test_symbolic_rows_are_staged_with_guards_and_match_numpy():
    n = tir.Var("n")
    A, B = te.placeholder((n, 1024), name="A"), te.placeholder((1024, 40), name="B")
    k = te.reduce_axis((0, 1024), "k")
    C = te.compute((n, 40), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    y, x, kk = sch.get_loops(sch.get_block("C"))
    yo, yi = sch.split(y, [None, 16])
    xo, xi = sch.split(x, [None, 16])
    sch.reorder(yo, xo, kk, yi, xi)
    sch.parallel(yo)
    [s] = find_stagings(sch.mod["main"])
    assert (s.buffer, s.tile_bytes) == ("A", 16 * 1024 * 4)
    lib = graphc.build(sch.mod, target="llvm")
    rng = np.random.default_rng(6)
    for m in (1, 37):
        a = rng.standard_normal((m, 1024), dtype=np.float32)
        b = rng.standard_normal((1024, 40), dtype=np.float32)
        c = np.zeros((m, 40), np.float32)
        lib["main"](a, b, c)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
