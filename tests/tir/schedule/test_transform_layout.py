"""transform_layout: exact structure, numerics (parameters in their new layout), padding, errors."""

import numpy as np
import pytest
import sched_programs as P

from graphc import te, tir
from graphc.ir import structural_equal
from graphc.script import tir as T
from graphc.tir import ScheduleError
from graphc.tir.analysis.verify_well_formed import verify_well_formed
from graphc.tir.interpreter import run_primfunc


def assert_func_equal(got, expected):
    got, expected = got.without_attr("global_symbol"), expected.without_attr("global_symbol")
    assert structural_equal(got, expected), got.script()


@T.prim_func
def two_stage(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8), "float32")
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


def _illegal(sch, fn):
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError) as info:
        fn()
    P.assert_unchanged(sch, before)
    return str(info.value)


def test_transform_layout_intermediate():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((4, 8, 4), "float32")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi // 4, vj, vi % 4])
                B[vi // 4, vj, vi % 4] = A[vi, vj] * 2.0
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi // 4, vj, vi % 4])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi // 4, vj, vi % 4] + 1.0

    sch = tir.Schedule(two_stage)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i // 4, j, i % 4))
    assert_func_equal(sch.mod["main"], expected)
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(two_stage, sch.mod["main"])
    assert 'sch.transform_layout(b0, ("write", 0), lambda i, j: (i // 4, j, i % 4))' in str(sch.trace)
    replay = tir.Schedule(two_stage)
    sch.trace.apply_to(replay)
    assert structural_equal(replay.mod["main"], sch.mod["main"])


def test_transform_layout_parameter_changes_the_signature():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((8, 16), "float32")):
        B = T.alloc_buffer((16, 8), "float32")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vj, vi])
                C[vj, vi] = B[vi, vj] + 1.0

    sch = tir.Schedule(two_stage)
    sch.transform_layout(sch.get_block("C"), "C", lambda i, j: (j, i))
    assert_func_equal(sch.mod["main"], expected)
    a = np.random.default_rng(0).standard_normal((16, 8)).astype("float32")
    c = np.zeros((8, 16), "float32")
    run_primfunc(sch.mod["main"], a, c)
    np.testing.assert_allclose(c, (a * 2 + 1).T, rtol=1e-6)


def test_transform_layout_read_parameter_tiled():
    sch = tir.Schedule(two_stage)
    sch.transform_layout(sch.get_block("B"), ("read", 0), lambda i, j: (i // 4, j // 4, i % 4, j % 4))
    f = sch.mod["main"]
    assert [int(d) for d in f.buffer_map[f.params[0]].shape] == [4, 2, 4, 4]
    a = np.random.default_rng(1).standard_normal((16, 8)).astype("float32")
    a_tiled = np.ascontiguousarray(a.reshape(4, 4, 2, 4).transpose(0, 2, 1, 3))
    c = np.zeros((16, 8), "float32")
    run_primfunc(f, a_tiled, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_transform_layout_with_padding():
    @T.prim_func
    def before(A: T.Buffer((20, 8), "float32"), C: T.Buffer((20, 8), "float32")):
        B = T.alloc_buffer((20, 8), "float32")
        for i, j in T.grid(20, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(20, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    @T.prim_func
    def expected(A: T.Buffer((20, 8), "float32"), C: T.Buffer((20, 8), "float32")):
        B = T.alloc_buffer((2, 8, 16), "float32")
        for i, j in T.grid(20, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi // 16, vj, vi % 16])
                B[vi // 16, vj, vi % 16] = A[vi, vj] * 2.0
        for ax0, ax1, ax2 in T.grid(2, 8, 16):
            with T.block("B_pad"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.where(ax0 * 16 + ax2 >= 20)
                T.reads()
                T.writes(B[v0, v1, v2])
                B[v0, v1, v2] = T.float32(0.0)
        for i, j in T.grid(20, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi // 16, vj, vi % 16])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi // 16, vj, vi % 16] + 1.0

    sch = tir.Schedule(before)
    msg = _illegal(
        sch, lambda: sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (i // 16, j, i % 16))
    )
    assert "pad_value" in msg
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (i // 16, j, i % 16), pad_value=0.0)
    assert_func_equal(sch.mod["main"], expected)
    P.assert_same_result(before, sch.mod["main"])


def test_transform_layout_symbolic_shape():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((m, n), lambda i, j: B[i, j] + 1.0, name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (j, i))
    f = sch.mod["main"]
    allocs = f.body.block.alloc_buffers
    assert [str(d) for d in allocs[0].shape] == ["n", "m"]
    a = np.random.default_rng(2).standard_normal((5, 3)).astype("float32")
    c = np.zeros((5, 3), "float32")
    run_primfunc(f, a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_transform_layout_after_blockize_relaxes_regions():
    sch = tir.Schedule(two_stage)
    _, j = sch.get_loops(sch.get_block("C"))
    outer = sch.blockize(j)
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (j // 4, i, j % 4))
    reads = [str(r) for r in sch.get(outer).reads]
    assert reads == ["B[0:2, vi_o, 0:4]"]
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(two_stage, sch.mod["main"])


def test_transform_layout_errors_leave_the_schedule_unchanged():
    sch = tir.Schedule(two_stage)
    b = sch.get_block("B")
    assert "not bijective" in _illegal(sch, lambda: sch.transform_layout(b, "B", lambda i, j: (i // 2, j)))
    assert "not bijective" in _illegal(
        sch, lambda: sch.transform_layout(b, "B", lambda i, j: ((i + j) % 4, j))
    )
    assert "range from 0" in _illegal(sch, lambda: sch.transform_layout(b, "B", lambda i, j: (i + 1, j)))
    assert "2 indices" in _illegal(sch, lambda: sch.transform_layout(b, "B", lambda i: (i,)))
    assert "out of range" in _illegal(sch, lambda: sch.transform_layout(b, ("read", 3), lambda i, j: (j, i)))
    assert "named 'Z'" in _illegal(sch, lambda: sch.transform_layout(b, "Z", lambda i, j: (j, i)))
    big = tir.Schedule(P.elementwise(512, 512))
    bb = big.get_block("B")
    msg = _illegal(big, lambda: big.transform_layout(bb, "B", lambda i, j: ((i + j) % 512, j)))
    assert "cannot prove" in msg
    assert len(sch.trace) == 1


def test_transform_layout_of_a_parameter_must_keep_size_vars_bindable():
    m = te.var("m")
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    b = sch.get_block("B")
    sch.transform_layout(b, "B", lambda i: (i // 4, i % 4), pad_value=0.0)  # A still binds m
    f = sch.mod["main"]
    assert [str(d) for d in f.buffer_map[f.params[1]].shape] == ["(m - 1) // 4 + 1", "4"]
    a = np.arange(6, dtype="float32")
    out = np.full((2, 4), np.nan, "float32")
    run_primfunc(f, a, out)
    np.testing.assert_allclose(out.reshape(-1), np.concatenate([a * 2, [0, 0]]))
    msg = _illegal(sch, lambda: sch.transform_layout(b, "A", lambda i: (i // 4, i % 4), pad_value=0.0))
    assert "size variable m" in msg and "bind" in msg


@T.prim_func
def _fill14(A: T.Buffer((14,), "int32"), F: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((14,), "int32")
    G = T.alloc_buffer((14,), "float32")
    for i in range(14):
        with T.block("B"):
            vi = T.axis.spatial(14, i)
            B[vi] = A[vi] * 3
    for i in range(14):
        with T.block("A2"):
            vi = T.axis.spatial(14, i)
            A[vi] = B[vi] + 1
    for i in range(14):
        with T.block("G"):
            vi = T.axis.spatial(14, i)
            G[vi] = F[vi] * 2.0
    for i in range(14):
        with T.block("F2"):
            vi = T.axis.spatial(14, i)
            F[vi] = G[vi] + 1.0


def _same14(f, g):
    outs = []
    for fn in (f, g):
        arrays = [np.arange(14, dtype="int32"), np.linspace(-1, 1, 14, dtype="float32")]
        run_primfunc(fn, *arrays)
        outs.append(arrays)
    for x, y in zip(*outs):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    "buffer, pad_value, words",
    [
        (
            "B",
            tir.IntImm("int8", 0),
            ["pad_value T.int8(0) has dtype int8", "int32"],
        ),  # an expression of another dtype
        ("G", 0, ["pad_value 0 (int)", "float32"]),  # an int for a float buffer
        ("B", 0.5, ["pad_value 0.5 (float)", "int32"]),  # a float for an int buffer
    ],
)
def test_transform_layout_pad_value_must_match_the_buffer_dtype(buffer, pad_value, words):
    sch = tir.Schedule(_fill14)
    block = "B" if buffer == "B" else "G"
    msg = _illegal(
        sch, lambda: sch.transform_layout(block, buffer, lambda i: (i // 4, i % 4), pad_value=pad_value)
    )
    assert f"transform the layout of {buffer}" in msg
    for word in words:
        assert word in msg, msg


def test_transform_layout_pad_value_of_the_buffer_dtype():
    sch = tir.Schedule(_fill14)
    sch.transform_layout("B", "B", lambda i: (i // 4, i % 4), pad_value=7)  # a Python int, int32 buffer
    sch.transform_layout("G", "G", lambda i: (i // 4, i % 4), pad_value=tir.FloatImm("float32", 0.0))
    _same14(_fill14, sch.mod["main"])


def test_transform_layout_assume_injective_leaves_the_padding_unwritten():
    sch = tir.Schedule(_fill14)
    before = P.snapshot(sch)
    msg = _illegal(sch, lambda: sch.transform_layout("B", "B", lambda i: (i // 4, i % 4)))
    assert "pass pad_value" in msg
    P.assert_unchanged(sch, before)
    sch.transform_layout("B", "B", lambda i: (i // 4, i % 4), assume_injective_transform=True)
    func = sch.mod["main"]
    assert not any(
        isinstance(s, tir.Block) and s.name_hint.endswith("_pad") for s in tir.schedule.state.walk(func.body)
    )
    assert [int(d) for d in func.body.block.alloc_buffers[0].shape] == [4, 4]
    _same14(_fill14, func)
