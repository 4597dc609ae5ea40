"""Tensor programs the dlight tests schedule, each with a numpy reference.

Every entry returns (PrimFunc, inputs, reference function of the inputs giving the outputs).
"""

from __future__ import annotations

import numpy as np

import graphc
from graphc import te
from graphc.script import tir as T
from graphc.target import Target

AVX2 = Target("llvm -mcpu=x86-64 -mattr=+avx2")  # 8 float32 lanes, whatever the host
AVX512 = Target("llvm -mcpu=x86-64 -mattr=+avx2,+avx512f")  # 16 lanes
RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def elementwise(n=64, m=512):
    A, B = te.placeholder((n, m), name="A"), te.placeholder((n, m), name="B")
    C = te.compute((n, m), lambda i, j: A[i, j] + B[i, j], name="C")
    return te.create_prim_func([A, B, C]), [rand(n, m), rand(n, m)], lambda a, b: [a + b]


def broadcast(n=64, m=512):
    A, B = te.placeholder((n, m), name="A"), te.placeholder((1, m), name="B")
    C = te.compute((n, m), lambda i, j: A[i, j] + B[0, j], name="C")
    return te.create_prim_func([A, B, C]), [rand(n, m), rand(1, m)], lambda a, b: [a + b]


def injective_chain(n=64, m=256):
    """relu(transpose(A) + B): transpose and add write intermediates Fallback must inline."""
    A, B = te.placeholder((m, n), name="A"), te.placeholder((n, m), name="B")
    Tr = te.compute((n, m), lambda i, j: A[j, i], name="T")
    S = te.compute((n, m), lambda i, j: Tr[i, j] + B[i, j], name="S")
    R = te.compute((n, m), lambda i, j: te.max(S[i, j], 0.0), name="R")
    ref = lambda a, b: [np.maximum(a.T + b, 0)]  # noqa: E731
    return te.create_prim_func([A, B, R]), [rand(m, n), rand(n, m)], ref


def row_reduce(n=128, m=256, kind="sum"):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    op = te.sum if kind == "sum" else te.max
    S = te.compute((n,), lambda i: op(A[i, k], axis=k), name="S")
    ref = (lambda a: [a.sum(1)]) if kind == "sum" else (lambda a: [a.max(1)])
    return te.create_prim_func([A, S]), [rand(n, m)], ref


def col_sum(n=64, m=512):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, n), "k")
    S = te.compute((m,), lambda j: te.sum(A[k, j], axis=k), name="S")
    return te.create_prim_func([A, S]), [rand(n, m)], lambda a: [a.sum(0)]


def middle_sum(b=8, n=32, m=128):
    """Sum over the middle axis: loops S R S."""
    A = te.placeholder((b, n, m), name="A")
    k = te.reduce_axis((0, n), "k")
    S = te.compute((b, m), lambda i, j: te.sum(A[i, k, j], axis=k), name="S")
    return te.create_prim_func([A, S]), [rand(b, n, m)], lambda a: [a.sum(1)]


def softmax(n=64, m=256):
    A = te.placeholder((n, m), name="A")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    M = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="M")
    E = te.compute((n, m), lambda i, j: te.exp(A[i, j] - M[i]), name="E")
    Z = te.compute((n,), lambda i: te.sum(E[i, k2], axis=k2), name="Z")
    out = te.compute((n, m), lambda i, j: E[i, j] / Z[i], name="O")

    def ref(a):
        e = np.exp(a - a.max(1, keepdims=True))
        return [e / e.sum(1, keepdims=True)]

    return te.create_prim_func([A, out]), [rand(n, m)], ref


def symbolic_add(n=300):
    """A (n, 64) add written in script syntax, n symbolic."""

    @T.prim_func
    def main(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        n = T.int32()
        A = T.match_buffer(a, (n, 64), "float32")
        B = T.match_buffer(b, (n, 64), "float32")
        C = T.match_buffer(c, (n, 64), "float32")
        for i, j in T.grid(n, 64):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * T.float32(2) + B[vi, vj]

    return main, [rand(n, 64), rand(n, 64)], lambda a, b: [2 * a + b]


def symbolic_row_sum(n=40):
    @T.prim_func
    def main(a: T.handle, s: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        n = T.int32()
        A = T.match_buffer(a, (n, 96), "float32")
        S = T.match_buffer(s, (n,), "float32")
        for i, k in T.grid(n, 96):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]

    return main, [rand(n, 96)], lambda a: [a.sum(1)]


def tiny(n=4, m=8):
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 3.0, name="B")
    return te.create_prim_func([A, B]), [rand(n, m)], lambda a: [3 * a]


def odd_tail(n=128, m=100):
    """An innermost extent the vector lanes do not divide: a predicated tail."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] - 1.0, name="B")
    return te.create_prim_func([A, B]), [rand(n, m)], lambda a: [a - 1]


ALL = {
    "elementwise": elementwise,
    "broadcast": broadcast,
    "injective_chain": injective_chain,
    "row_sum": row_reduce,
    "row_max": lambda: row_reduce(kind="max"),
    "col_sum": col_sum,
    "middle_sum": middle_sum,
    "softmax": softmax,
    "symbolic_add": symbolic_add,
    "symbolic_row_sum": symbolic_row_sum,
    "tiny": tiny,
    "odd_tail": odd_tail,
}


def check_against_unscheduled(func, mod, atol=1e-4):
    """Run `mod` (the scheduled `func`) and the unscheduled `func` on the same random float32
    inputs (the last parameter is the output) and compare."""
    arrays = [RNG.standard_normal([int(d) for d in func.buffer_map[p].shape]).astype("float32")
              for p in func.params[:-1]]  # fmt: skip
    out = func.buffer_map[func.params[-1]]
    want = np.empty([int(d) for d in out.shape], "float32")
    got = np.empty_like(want)
    graphc.build(func)["main"](*arrays, want)
    graphc.build(mod)["main"](*arrays, got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)


def check_numerics(mod_or_func, inputs, ref, rtol=1e-4, atol=1e-5):
    """Build for the host, run, compare every output with numpy."""
    expected = ref(*inputs)
    outs = [np.empty(e.shape, "float32") for e in expected]
    graphc.build(mod_or_func, target="llvm")["main"](*inputs, *outs)
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def loop_kinds(sch, block: str) -> list[str]:
    """The kinds of the loops around `block`, outermost first ("serial", "parallel", ...)."""
    return [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block(block))]


def loop_extents(sch, block: str) -> list:
    return [sch.get(lp).extent for lp in sch.get_loops(sch.get_block(block))]


def middle_sum_srs(b=8, n=16, m=64):
    """Sum over the middle axis with the loops in memory order: S R S (the reduce loop is not innermost)."""

    @T.prim_func
    def main(A: T.Buffer((b, n, m), "float32"), S: T.Buffer((b, m), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, k, j in T.grid(b, n, m):
            with T.block("S"):
                vi, vk, vj = T.axis.remap("SRS", [i, k, j])
                with T.init():
                    S[vi, vj] = T.float32(0)
                S[vi, vj] = S[vi, vj] + A[vi, vk, vj]

    return main, [rand(b, n, m)], lambda a: [a.sum(1)]


def transpose(n=128, m=256):
    """B[j, i] = A[i, j] with loops (i, j): the innermost loop strides through the output."""

    @T.prim_func
    def main(A: T.Buffer((n, m), "float32"), B: T.Buffer((m, n), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = A[vi, vj]

    return main, [rand(n, m)], lambda a: [a.T]


ALL["middle_sum_srs"] = middle_sum_srs
ALL["transpose"] = transpose


def matmul(n=64, k=64, m=128):
    A, B = te.placeholder((n, k), name="A"), te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C]), [rand(n, k), rand(k, m)], lambda a, b: [a @ b]


def gemv(n=256, k=128):
    A, x = te.placeholder((n, k), name="A"), te.placeholder((k,), name="x")
    r = te.reduce_axis((0, k), "r")
    y = te.compute((n,), lambda i: te.sum(A[i, r] * x[r], axis=r), name="y")
    return te.create_prim_func([A, x, y]), [rand(n, k), rand(k)], lambda a, b: [a @ b]


ALL["matmul"] = matmul
ALL["gemv"] = gemv


def layer_norm(n=64, m=256):
    """Row mean, row variance around it, then the normalised rows: two reductions, one epilogue."""
    A = te.placeholder((n, m), name="A")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    S = te.compute((n,), lambda i: te.sum(A[i, k1], axis=k1), name="S")
    mean = te.compute((n,), lambda i: S[i] / float(m), name="mean")
    D = te.compute((n, m), lambda i, j: A[i, j] - mean[i], name="D")
    V = te.compute((n,), lambda i: te.sum(D[i, k2] * D[i, k2], axis=k2), name="V")
    out = te.compute((n, m), lambda i, j: D[i, j] / te.sqrt(V[i] / float(m) + 1e-5), name="O")

    def ref(a):
        d = a - a.mean(1, keepdims=True)
        return [d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5)]

    return te.create_prim_func([A, out]), [rand(n, m)], ref


ALL["layer_norm"] = layer_norm
