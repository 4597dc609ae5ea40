"""Round-trip corpus: functions returning IRModules / PrimFuncs that cover every construct.

Each entry is a zero-argument function; `tests/script/test_roundtrip.py` checks that
printing then parsing each result gives back a structurally equal IR. Add entries freely.
"""

from __future__ import annotations

from graphc import tir
from graphc.script import from_source
from graphc.script import ir as I
from graphc.script import tir as T

N = 16


def vector_add():
    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), C: T.Buffer((N,), "float32")):
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            for i in range(N):
                with T.block("C"):
                    vi = T.axis.spatial(N, i)
                    C[vi] = A[vi] + B[vi]

    return Module


def handle_form():
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0

    return main


def matmul_symbolic():
    @T.prim_func
    def mm(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 16), "float32")
        B = T.match_buffer(b, (16, 16), "float32")
        C = T.match_buffer(c, (n, 16), "float32")
        for i, j, k in T.grid(n, 16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] += A[vi, vk] * B[vk, vj]

    return mm


def two_stage_with_alloc():
    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8, 8), "float32")
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(8, j)
                    B[vi, vj] = T.exp(A[vi, vj]) * T.float32(2)
            for i in range(8):
                for k in T.serial(8, annotations={"pragma_unroll": 1}):
                    with T.block("C"):
                        vi = T.axis.spatial(8, i)
                        vk = T.axis.reduce(8, k)
                        T.reads(B[vi, 0:8])
                        T.writes(C[vi])
                        T.block_attr({"meta": "x"})
                        with T.init():
                            C[vi] = T.float32(-3.4e38)
                        C[vi] = T.max(C[vi], B[vi, vk])

        @T.prim_func(private=True)
        def helper(x: T.int32, D: T.Buffer((4,), "int64")):
            for i in T.parallel(4):
                D[i] = T.Cast("int64", i * x) + T.int64(7)

    return Module


def gpu_threads():
    @T.prim_func
    def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i_0 in T.thread_binding(2, thread="blockIdx.x"):
            for i_1 in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(64, i_0 * 32 + i_1)
                    T.where(i_0 * 32 + i_1 < 64)
                    B[vi] = T.sigmoid(A[vi])

    return main


def block_with_match_and_local():
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for io in range(4):
            with T.block("outer"):
                vo = T.axis.spatial(4, io)
                T.reads(A[vo * 4:vo * 4 + 4])
                T.writes(B[vo * 4:vo * 4 + 4])
                A_sub = T.match_buffer(A[vo * 4:vo * 4 + 4], (4,), "float32")
                A_local = T.alloc_buffer((4,), "float32", scope="local")
                for ii in T.vectorized(4):
                    with T.block("copy"):
                        vii = T.axis.spatial(4, ii)
                        A_local[vii] = A_sub[vii]
                for ii in T.unroll(4):
                    with T.block("out"):
                        vii = T.axis.opaque((0, 4), ii)
                        B[vo * 4 + vii] = T.if_then_else(A_local[vii] > T.float32(0), A_local[vii],
                                                         T.float32(0))

    return main


def lowered_flat():
    @T.prim_func
    def main(a: T.handle, b: T.handle, n: T.int32):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        m = T.int32()
        s0 = T.int32()
        A = T.match_buffer(a, (m, 4), "float32", strides=(s0, 1), elem_offset=0)
        B = T.match_buffer(b, (m, 4), "float32")
        A_1 = T.Buffer((m * s0,), "float32", data=A.data)
        B_1 = T.Buffer((m * 4,), "float32", data=B.data)
        for i in T.parallel(m):
            tmp = T.allocate([4], "float32", "global")
            tmp_1 = T.Buffer((4,), "float32", data=tmp)
            for j in range(4):
                cse: T.int32 = i * s0 + j
                if T.likely(cse < n):
                    tmp_1[j] = A_1[cse] * T.float32(0.5)
                else:
                    tmp_1[j] = T.float32(0)
            B_1[T.Ramp(i * 4, 1, 4)] = tmp_1[T.Ramp(0, 1, 4)] + T.Broadcast(T.float32(1), 4)

    return main


def gpu_lowered():
    @T.prim_func
    def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        bx = T.launch_thread("blockIdx.x", 4)
        tx = T.launch_thread("threadIdx.x", 64)
        sh = T.allocate([64], "float32", "shared")
        sh_1 = T.Buffer((64,), "float32", data=sh, scope="shared")
        sh_1[tx] = A[bx * 64 + tx]
        T.evaluate(T.call_extern("int32", "__syncthreads"))
        with T.LetStmt(tx + 1, "int32") as t1:
            B[bx * 64 + tx] = sh_1[t1 % 64]
        B[bx * 64 + tx] = B[bx * 64 + tx] + T.float32(1)

    return main


def expressions():
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "bool")):
        for i in range(8):
            B[i] = T.truncdiv(i, 3) + T.truncmod(i, 3) + i // 3 + i % 3 - T.min(i, 4) * T.max(i, 2)
            C[i] = (i < 3 and i != 5) or not (i >= 6) or 1 <= i < 7
            A[i] = T.Select(i == 2, T.sqrt(A[i]), T.log(A[i]) / T.float32(3)) + T.Cast("float32", B[i])
            A[i] = T.tanh(A[i]) + T.pow(A[i], T.float32(2)) + T.float32("inf") - T.float32(1e-05)
            B[i] = T.shift_left(B[i], 1) + T.bitwise_and(B[i], 7)
            if i > 4:
                T.evaluate(T.call_extern("int32", "printf", "x", i))
            while B[i] > 0:
                B[i] = B[i] - 1

    return main


def assert_and_attr():
    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), n: T.int64):
        assert n > T.int64(0), "n must be positive"
        T.attr(A.data, "storage_alignment", 64)
        for i in range(T.int64(4)):
            A[i] = T.float32(1)

    return main


def empty_and_noop():
    @T.prim_func
    def main():
        T.evaluate(0)

    return main


def root_explicit():
    return from_source('''
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"x": 1})
        for i in range(4):
            with T.block("b"):
                vi = T.axis.spatial(4, i)
                T.reads()
                T.writes(A[vi])
                A[vi] = T.float32(0)
''')


def built_lowered():
    """A lowered function built directly with the IR API (not via the parser)."""
    n = tir.Var("n")
    A = tir.decl_buffer((n, 4), "float16", "A")
    A_flat = tir.decl_buffer((n * 4,), "float16", "A", data=A.data)
    a = tir.Var("a", "handle")
    i, j = tir.Var("i"), tir.Var("i")
    x = tir.Var("x", "float16")
    store = tir.BufferStore(A_flat, x * x, (i * 4 + j,))
    body = tir.For(i, tir.const(0), n, tir.ForKind.SERIAL,
                   tir.For(j, tir.const(0), tir.const(4), tir.ForKind.UNROLLED,
                           tir.LetStmt(x, A_flat[i * 4 + j], store)))
    return tir.PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "main"})


def scoped_not_last():
    """Scoping statements followed by more statements print in their `with` form."""
    A = tir.decl_buffer((8,), "float32", "A")
    a = tir.Var("a", "handle")
    tx = tir.Var("tx")
    iv = tir.IterVar(tir.Range(tir.const(0), tir.const(8)), tx, tir.IterType.THREAD_INDEX, "threadIdx.x")
    env = tir.IterVar(None, tir.Var("bx"), tir.IterType.THREAD_INDEX, "blockIdx.x")
    data = tir.Var("tmp", "handle", "float32")
    tmp = tir.decl_buffer((2,), "float32", "tmp", data=data)
    alias = tir.decl_buffer((8,), "float32", "A_alias", data=A.data)
    alias2 = tir.decl_buffer((4,), "float32", "A_alias", data=A.data)
    store = tir.BufferStore(A, tir.const(1.0), (tx,))
    body = tir.SeqStmt((
        tir.AttrStmt(iv, "thread_extent", tir.const(8), store),
        tir.AttrStmt(env, "thread_extent", tir.const(2), tir.Evaluate(env.var)),
        tir.Allocate(data, "float32", (tir.const(2),), tir.const(True),
                     tir.BufferStore(tmp, tir.const(0.0), (tir.const(0),)), "global", {"pragma": 1}),
        tir.DeclBuffer(alias, tir.BufferStore(alias, tir.const(2.0), (tir.const(1),))),
        tir.DeclBuffer(alias2, tir.BufferStore(alias2, tir.const(3.0), (tir.const(2),))),
    ))
    return tir.PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "main", "n": [1, "x"]})


CORPUS = [
    vector_add, handle_form, matmul_symbolic, two_stage_with_alloc, gpu_threads,
    block_with_match_and_local, lowered_flat, gpu_lowered, expressions, assert_and_attr,
    empty_and_noop, root_explicit, built_lowered, scoped_not_last,
]
