"""create_prim_func output against script text, and printer/parser round trips."""

from graphc import te
from graphc.ir import assert_structural_equal
from graphc.script import from_source

ADD_ONE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i0 in range(8):
        with T.block("B"):
            v_i0 = T.axis.spatial(8, i0)
            T.reads(A[v_i0])
            T.writes(B[v_i0])
            B[v_i0] = A[v_i0] + T.float32(1.0)
"""

MATMUL = """
@T.prim_func
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
         C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for m, n, k in T.grid(1024, 1024, 1024):
        with T.block("C"):
            v_m, v_n, v_k = T.axis.remap("SSR", [m, n, k])
            with T.init():
                C[v_m, v_n] = T.float32(0.0)
            C[v_m, v_n] = C[v_m, v_n] + A[v_m, v_k] * B[v_k, v_n]
"""

ROW_SUM = """
@T.prim_func
def main(var_A: T.handle, var_B: T.handle):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(var_A, (n, m), "float32")
    B = T.match_buffer(var_B, (n,), "float32")
    for i, k in T.grid(n, m):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0.0)
            B[v_i] = B[v_i] + A[v_i, v_k]
"""


def _parse(text):
    return from_source(text)


def test_add_one_matches_script():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    assert_structural_equal(te.create_prim_func([A, B]), _parse(ADD_ONE))


def test_matmul_matches_script_with_completed_reads():
    A = te.placeholder((1024, 1024), name="A")
    B = te.placeholder((1024, 1024), name="B")
    k = te.reduce_axis((0, 1024), name="k")
    C = te.compute((1024, 1024), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    assert_structural_equal(te.create_prim_func([A, B, C]), _parse(MATMUL))


def test_symbolic_row_sum_matches_script():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    assert_structural_equal(te.create_prim_func([A, B]), _parse(ROW_SUM))


def _round_trip(func):
    assert_structural_equal(func, from_source(func.script()))


def test_round_trip_argmax_and_intermediates():
    X = te.placeholder((4, 8), name="X")
    k = te.reduce_axis((0, 8), "k")
    idx = te.compute((4,), lambda i: te.argmax(X[i, k], axis=k), name="idx")
    _round_trip(te.create_prim_func([X, idx]))
    A = te.placeholder((8,), name="A")
    T1 = te.compute((8,), lambda i: A[i] * 2.0, name="T1")
    B, C = te.compute((8,), lambda i: (T1[i] + 1.0, T1[i] - 1.0), name="BC")
    _round_trip(te.create_prim_func([A, B, C]))


def test_round_trip_where_and_conv_like():
    A = te.placeholder((18,), name="A")
    k = te.reduce_axis((0, 3), "k")
    B = te.compute((8,), lambda i: te.sum(A[i * 2 + k], axis=k, where=k < 2), name="B")
    _round_trip(te.create_prim_func([A, B]))
