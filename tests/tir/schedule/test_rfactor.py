"""rfactor of tuple reducers (argmax / argmin), let-bound updates, zero-dim outputs, and the
write-back block left in the loop nest (TVM's placement), each against the unscheduled build."""

import numpy as np
import pytest
import sched_programs as P

import graphc
from graphc import tir
from graphc.ir import structural_equal
from graphc.script import from_source
from graphc.script import tir as T
from graphc.tir import ScheduleError


def _build_run(f, arrays):
    arrays = [a.copy() for a in arrays]
    graphc.build(f, target="llvm")["main"](*arrays)
    return arrays


def _assert_same_built(before, after, arrays):
    for x, y in zip(_build_run(before, arrays), _build_run(after, arrays)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def _same(got, expected):
    got, expected = got.without_attr("global_symbol"), expected.without_attr("global_symbol")
    assert structural_equal(got, expected), got.script()


def _argmax_src(init: str, body: str, cmp: str = ">=", v0_shape: int = 16) -> str:
    return f"""
@T.prim_func
def main(idx: T.Buffer((16, 16), "int32"), val: T.Buffer((16, 16), "float32"),
         out_i: T.Buffer(({v0_shape},), "int32"), out_v: T.Buffer((16,), "float32")):
    for i0, k0, k1 in T.grid(16, 4, 4):
        with T.block("argmax"):
            i = T.axis.spatial(16, i0)
            k = T.axis.reduce(16, k0 * 4 + k1)
            T.reads(idx[i, k], val[i, k])
            T.writes(out_i[i], out_v[i])
            with T.init():
{init}
{body.replace(">=", cmp)}
"""


_INIT_MAX = '                out_i[i] = -1\n                out_v[i] = T.min_value("float32")'
_INIT_MIN = '                out_i[i] = -1\n                out_v[i] = T.max_value("float32")'
_LET_I = "            v_i: T.int32 = T.Select(out_v[i] >= val[i, k], out_i[i], idx[i, k])"
_LET_V = "            v_v: T.float32 = T.Select(out_v[i] >= val[i, k], out_v[i], val[i, k])"
_BODY = f"{_LET_I}\n{_LET_V}\n            out_i[i] = v_i\n            out_v[i] = v_v"


def _argmax_inputs(rng):
    idx = np.tile(np.arange(16, dtype="int32"), (16, 1))
    val = rng.permutation(256).reshape(16, 16).astype("float32")  # distinct: no ties
    return [idx, val, np.zeros(16, "int32"), np.zeros(16, "float32")]


@T.prim_func
def _argmax_expected(
    idx: T.Buffer((16, 16), "int32"),
    val: T.Buffer((16, 16), "float32"),
    out_i: T.Buffer((16,), "int32"),
    out_v: T.Buffer((16,), "float32"),
):
    out_i_rf = T.alloc_buffer((16, 4), "int32")
    out_v_rf = T.alloc_buffer((16, 4), "float32")
    for i0, k0, k1 in T.grid(16, 4, 4):
        with T.block("argmax_rf"):
            vk1, i, vk0 = T.axis.remap("SSR", [k1, i0, k0])
            T.reads(idx[i, vk0 * 4 + vk1], val[i, vk0 * 4 + vk1])
            T.writes(out_i_rf[i, vk1], out_v_rf[i, vk1])
            with T.init():
                out_i_rf[i, vk1] = -1
                out_v_rf[i, vk1] = T.min_value("float32")
            v_out_i_rf: T.int32 = T.Select(
                out_v_rf[i, vk1] >= val[i, vk0 * 4 + vk1], out_i_rf[i, vk1], idx[i, vk0 * 4 + vk1]
            )
            v_out_v_rf: T.float32 = T.Select(
                out_v_rf[i, vk1] >= val[i, vk0 * 4 + vk1], out_v_rf[i, vk1], val[i, vk0 * 4 + vk1]
            )
            out_i_rf[i, vk1] = v_out_i_rf
            out_v_rf[i, vk1] = v_out_v_rf
    for i0, k1 in T.grid(16, 4):
        with T.block("argmax"):
            vk1, i = T.axis.remap("RS", [k1, i0])
            T.reads(out_i_rf[i, vk1], out_v_rf[i, vk1])
            T.writes(out_i[i], out_v[i])
            with T.init():
                out_i[i] = -1
                out_v[i] = T.min_value("float32")
            v_out_i: T.int32 = T.Select(out_v[i] >= out_v_rf[i, vk1], out_i[i], out_i_rf[i, vk1])
            v_out_v: T.float32 = T.Select(out_v[i] >= out_v_rf[i, vk1], out_v[i], out_v_rf[i, vk1])
            out_i[i] = v_out_i
            out_v[i] = v_out_v


def test_rfactor_argmax_structure_and_values():
    before = from_source(_argmax_src(_INIT_MAX, _BODY))
    sch = tir.Schedule(before)
    _, _, k1 = sch.get_loops(sch.get_block("argmax"))
    rf = sch.rfactor(k1, 1)
    assert rf.name == "argmax_rf"
    _same(sch.mod["main"], _argmax_expected)
    rng = np.random.default_rng(0)
    _assert_same_built(before, sch.mod["main"], _argmax_inputs(rng))
    sch.parallel(sch.get_loops(rf)[0])
    _assert_same_built(before, sch.mod["main"], _argmax_inputs(rng))


def test_rfactor_argmin_values():
    before = from_source(_argmax_src(_INIT_MIN, _BODY, cmp="<="))
    sch = tir.Schedule(before)
    _, k0, _ = sch.get_loops(sch.get_block("argmax"))
    sch.rfactor(k0, 0)
    _assert_same_built(before, sch.mod["main"], _argmax_inputs(np.random.default_rng(1)))


def test_rfactor_argmax_topi_tie_break_values():
    """topi's argmax keeps the smaller index on ties: associative, so ties give the same index."""
    tie_i = (
        "            v_i: T.int32 = T.Select(out_v[i] > val[i, k] or out_v[i] == val[i, k] and "
        "out_i[i] < idx[i, k], out_i[i], idx[i, k])"
    )
    tie_v = "            v_v: T.float32 = T.Select(out_v[i] > val[i, k], out_v[i], val[i, k])"
    before = from_source(
        _argmax_src(_INIT_MAX, f"{tie_i}\n{tie_v}\n            out_i[i] = v_i\n            out_v[i] = v_v")
    )
    sch = tir.Schedule(before)
    _, _, k1 = sch.get_loops(sch.get_block("argmax"))
    sch.rfactor(k1, 0)
    arrays = _argmax_inputs(np.random.default_rng(2))
    arrays[1] = np.random.default_rng(3).integers(0, 3, (16, 16)).astype("float32")  # many ties
    _assert_same_built(before, sch.mod["main"], arrays)


_FEWER_LETS = (
    f"{_LET_I}\n            out_i[i] = v_i\n"
    "            out_v[i] = T.Select(out_v[i] >= val[i, k], out_v[i], val[i, k])"
)


@pytest.mark.parametrize(
    "init, body, shape, match",
    [
        (_INIT_MAX, _BODY, 32, "differ in shape"),
        ("                out_i[i] = -1\n                out_i[i] = -1", _BODY, 16, "one to one"),
        ("                out_i[i] = -1", _BODY, 16, "init writes 1 value"),
        (_INIT_MAX, _FEWER_LETS, 16, "bind each new value with a let"),
        (
            '                out_i[i] = 0\n                out_v[i] = T.min_value("float32")',
            _BODY,
            16,
            "not a recognised commutative reducer",
        ),
        (_INIT_MIN, _BODY, 16, "not a recognised commutative reducer"),
    ],
    ids=[
        "different_shape",
        "init_duplicate",
        "fewer_inits",
        "fewer_lets",
        "index_identity",
        "value_identity",
    ],
)
def test_rfactor_argmax_refusals(init, body, shape, match):
    sch = tir.Schedule(from_source(_argmax_src(init, body, v0_shape=shape)))
    _, _, k1 = sch.get_loops(sch.get_block("argmax"))
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match=match) as err:
        sch.rfactor(k1, 0)
    assert "rfactor block 'argmax' over loop k1" in str(err.value)
    P.assert_unchanged(sch, before)


def test_rfactor_argmax_select_without_equal_is_refused():
    """`>` without topi's tie rule is not one of the recognised reducers (TVM refuses it too)."""
    sch = tir.Schedule(from_source(_argmax_src(_INIT_MAX, _BODY, cmp=">")))
    _, _, k1 = sch.get_loops(sch.get_block("argmax"))
    with pytest.raises(ScheduleError, match="argmax, argmin"):
        sch.rfactor(k1, 0)


@T.prim_func
def _matmul_let(
    A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")
):
    for i, j, k0, k1 in T.grid(8, 8, 2, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            vk = T.axis.reduce(8, k0 * 4 + k1)
            with T.init():
                C[vi, vj] = 0.0
            v_c: T.float32 = C[vi, vj] + A[vi, vk] * B[vk, vj]
            C[vi, vj] = v_c


@T.prim_func
def _matmul_plain(
    A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")
):
    for i, j, k0, k1 in T.grid(8, 8, 2, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            vk = T.axis.reduce(8, k0 * 4 + k1)
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_rfactor_let_bound_update_reads_through_the_let():
    got = []
    for f in (_matmul_let, _matmul_plain):
        sch = tir.Schedule(f)
        sch.rfactor(sch.get_loops(sch.get_block("C"))[3], 0)
        got.append(sch.mod["main"])
    _same(got[0], got[1])
    P.assert_same_result(_matmul_let, got[0])


@T.prim_func
def _zero_dim(A: T.Buffer((16,), "float32"), B: T.Buffer((), "float32")):
    for k in range(16):
        with T.block("B"):
            vk = T.axis.reduce(16, k)
            with T.init():
                B[()] = 0.0
            B[()] = B[()] + A[vk]


@T.prim_func
def _zero_dim_rf(A: T.Buffer((16,), "float32"), B: T.Buffer((), "float32")):
    B_rf = T.alloc_buffer((16,))
    for k in range(16):
        with T.block("B_rf"):
            vk = T.axis.spatial(16, k)
            T.reads(A[vk])
            T.writes(B_rf[vk])
            B_rf[vk] = A[vk]  # no reduce iter left: the identity folded with one value is the value
    for k in range(16):
        with T.block("B"):
            vk = T.axis.reduce(16, k)
            T.reads(B_rf[vk])
            T.writes(B[()])
            with T.init():
                B[()] = 0.0
            B[()] = B[()] + B_rf[vk]


def test_rfactor_zero_dim_output():
    sch = tir.Schedule(_zero_dim)
    sch.rfactor(sch.get_loops(sch.get_block("B"))[0], 0)
    _same(sch.mod["main"], _zero_dim_rf)
    P.assert_same_result(_zero_dim, sch.mod["main"])


@T.prim_func
def _two_reductions(A: T.Buffer((4, 8, 8), "float32"), D: T.Buffer((4, 8), "float32")):
    C = T.alloc_buffer((4, 8))
    for i, j in T.grid(4, 8):
        for k0, k1 in T.grid(2, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                vk = T.axis.reduce(8, k0 * 4 + k1)
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vj, vk]
        for k in range(8):
            with T.block("D"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    D[vi, vj] = 0.0
                D[vi, vj] = D[vi, vj] + A[vi, vj, vk] * C[vi, vj]


@T.prim_func
def _two_reductions_rf(A: T.Buffer((4, 8, 8), "float32"), D: T.Buffer((4, 8), "float32")):
    C = T.alloc_buffer((4, 8))
    C_rf = T.alloc_buffer((4, 8, 2))
    for i, j, k0, k1 in T.grid(4, 8, 2, 4):
        with T.block("C_rf"):
            vk0, vi, vj, vk1 = T.axis.remap("SSSR", [k0, i, j, k1])
            T.reads(A[vi, vj, vk0 * 4 + vk1])
            T.writes(C_rf[vi, vj, vk0])
            with T.init():
                C_rf[vi, vj, vk0] = 0.0
            C_rf[vi, vj, vk0] = C_rf[vi, vj, vk0] + A[vi, vj, vk0 * 4 + vk1]
    for i, j in T.grid(4, 8):
        for k0 in range(2):
            with T.block("C"):
                vk0, vi, vj = T.axis.remap("RSS", [k0, i, j])
                T.reads(C_rf[vi, vj, vk0])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + C_rf[vi, vj, vk0]
        for k in range(8):
            with T.block("D"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    D[vi, vj] = 0.0
                D[vi, vj] = D[vi, vj] + A[vi, vj, vk] * C[vi, vj]


def test_rfactor_write_back_stays_in_the_loop_nest():
    """The write-back block takes the block's place, so D (same nest) reads finished sums."""
    sch = tir.Schedule(_two_reductions)
    _, _, k0, _ = sch.get_loops(sch.get_block("C"))
    rf = sch.rfactor(k0, 2)
    _same(sch.mod["main"], _two_reductions_rf)
    P.assert_same_result(_two_reductions, sch.mod["main"])
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(rf)] == ["i", "j", "k0", "k1"]
    assert len(sch.get_loops(sch.get_block("D"))) == 3


@T.prim_func
def _reads_rewritten(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    X = T.alloc_buffer((8,))
    for i in range(4):
        for k in range(8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0.0
                B[vi] = B[vi] + X[vk]
        for k in range(8):
            with T.block("X"):
                vi, vk = T.axis.remap("SS", [i, k])
                X[vk] = A[vi, vk]


def test_rfactor_refuses_when_the_nest_rewrites_what_the_block_reads():
    sch = tir.Schedule(_reads_rewritten)
    _, k = sch.get_loops(sch.get_block("B"))
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError, match="(writes X|stage pipeline|producer)"):
        sch.rfactor(k, 0)
    P.assert_unchanged(sch, before)
