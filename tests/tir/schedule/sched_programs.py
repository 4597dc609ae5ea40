"""Small block-form tensor programs built with the tir constructors, shared by the schedule tests."""

from __future__ import annotations

import numpy as np

from graphc import tir
from graphc.tir.interpreter import run_primfunc

TRUE = tir.const(True)


def loop(var, extent, body, kind=tir.ForKind.SERIAL):
    return tir.For(var, tir.const(0), tir.const(extent) if isinstance(extent, int) else extent, kind, body)


def spatial(var, extent):
    return tir.IterVar(tir.Range.make(extent), var, tir.IterType.DATA_PAR)


def reduce_iv(var, extent):
    return tir.IterVar(tir.Range.make(extent), var, tir.IterType.COMM_REDUCE)


def point(buf, *idx):
    return tir.BufferRegion.from_point(buf, idx)


def func(params, body, allocs=()):
    """A PrimFunc over `params` (Buffers) with `body` under the root block."""
    handles = [tir.Var(b.name.lower(), "handle") for b in params]
    root = tir.BlockRealize((), TRUE, tir.Block((), (), (), "root", body, alloc_buffers=tuple(allocs)))
    return tir.PrimFunc(handles, root, buffer_map=dict(zip(handles, params)))


def elementwise(n=8, m=8):
    """B[i, j] = A[i, j] * 2."""
    A, B = tir.decl_buffer((n, m), "float32", "A"), tir.decl_buffer((n, m), "float32", "B")
    i, j, vi, vj = tir.Var("i"), tir.Var("j"), tir.Var("vi"), tir.Var("vj")
    blk = tir.Block(
        (spatial(vi, n), spatial(vj, m)),
        (point(A, vi, vj),),
        (point(B, vi, vj),),
        "B",
        B.vstore([vi, vj], A[vi, vj] * 2.0),
    )
    return func([A, B], loop(i, n, loop(j, m, tir.BlockRealize((i, j), TRUE, blk))))


def two_stage(n=8, m=8):
    """B = A * 2 (an intermediate), C = B + 1."""
    A, C = tir.decl_buffer((n, m), "float32", "A"), tir.decl_buffer((n, m), "float32", "C")
    B = tir.decl_buffer((n, m), "float32", "B")
    i, j, vi, vj = tir.Var("i"), tir.Var("j"), tir.Var("vi"), tir.Var("vj")
    b = tir.Block(
        (spatial(vi, n), spatial(vj, m)),
        (point(A, vi, vj),),
        (point(B, vi, vj),),
        "B",
        B.vstore([vi, vj], A[vi, vj] * 2.0),
    )
    i2, j2, wi, wj = tir.Var("i"), tir.Var("j"), tir.Var("vi"), tir.Var("vj")
    c = tir.Block(
        (spatial(wi, n), spatial(wj, m)),
        (point(B, wi, wj),),
        (point(C, wi, wj),),
        "C",
        C.vstore([wi, wj], B[wi, wj] + 1.0),
    )
    body = tir.SeqStmt(
        (
            loop(i, n, loop(j, m, tir.BlockRealize((i, j), TRUE, b))),
            loop(i2, n, loop(j2, m, tir.BlockRealize((i2, j2), TRUE, c))),
        )
    )
    return func([A, C], body, allocs=[B])


def row_sum(n=8, m=8):
    """B[i] = sum_k A[i, k]."""
    A, B = tir.decl_buffer((n, m), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i, k, vi, vk = tir.Var("i"), tir.Var("k"), tir.Var("vi"), tir.Var("vk")
    blk = tir.Block(
        (spatial(vi, n), reduce_iv(vk, m)),
        (point(A, vi, vk),),
        (point(B, vi),),
        "B",
        B.vstore([vi], B[vi] + A[vi, vk]),
        init=B.vstore([vi], tir.const(0.0)),
    )
    return func([A, B], loop(i, n, loop(k, m, tir.BlockRealize((i, k), TRUE, blk))))


def matmul(n=16, m=16, k=16):
    """C[i, j] = sum_k A[i, k] * B[j, k]... (B indexed [k, j])."""
    A = tir.decl_buffer((n, k), "float32", "A")
    B = tir.decl_buffer((k, m), "float32", "B")
    C = tir.decl_buffer((n, m), "float32", "C")
    i, j, r = tir.Var("i"), tir.Var("j"), tir.Var("k")
    vi, vj, vk = tir.Var("vi"), tir.Var("vj"), tir.Var("vk")
    blk = tir.Block(
        (spatial(vi, n), spatial(vj, m), reduce_iv(vk, k)),
        (point(A, vi, vk), point(B, vk, vj)),
        (point(C, vi, vj),),
        "C",
        C.vstore([vi, vj], C[vi, vj] + A[vi, vk] * B[vk, vj]),
        init=C.vstore([vi, vj], tir.const(0.0)),
    )
    return func([A, B, C], loop(i, n, loop(j, m, loop(r, k, tir.BlockRealize((i, j, r), TRUE, blk)))))


def mm_relu(n=8):
    """Y = A @ B (intermediate), C = max(Y, 0): the MLC notebook's mm_relu."""
    A, B = tir.decl_buffer((n, n), "float32", "A"), tir.decl_buffer((n, n), "float32", "B")
    C, Y = tir.decl_buffer((n, n), "float32", "C"), tir.decl_buffer((n, n), "float32", "Y")
    i, j, r = tir.Var("i"), tir.Var("j"), tir.Var("k")
    vi, vj, vk = tir.Var("vi"), tir.Var("vj"), tir.Var("vk")
    y = tir.Block(
        (spatial(vi, n), spatial(vj, n), reduce_iv(vk, n)),
        (point(A, vi, vk), point(B, vk, vj)),
        (point(Y, vi, vj),),
        "Y",
        Y.vstore([vi, vj], Y[vi, vj] + A[vi, vk] * B[vk, vj]),
        init=Y.vstore([vi, vj], tir.const(0.0)),
    )
    i2, j2, wi, wj = tir.Var("i"), tir.Var("j"), tir.Var("vi"), tir.Var("vj")
    c = tir.Block(
        (spatial(wi, n), spatial(wj, n)),
        (point(Y, wi, wj),),
        (point(C, wi, wj),),
        "C",
        C.vstore([wi, wj], tir.max(Y[wi, wj], tir.const(0.0))),
    )
    body = tir.SeqStmt(
        (
            loop(i, n, loop(j, n, loop(r, n, tir.BlockRealize((i, j, r), TRUE, y)))),
            loop(i2, n, loop(j2, n, tir.BlockRealize((i2, j2), TRUE, c))),
        )
    )
    return func([A, B, C], body, allocs=[Y])


def run(f, seed=0):
    """Run `f` on random inputs (every parameter buffer filled); returns the output arrays."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal([int(d) for d in b.shape]).astype("float32") for b in f.buffers]
    run_primfunc(f, *arrays)
    return arrays


def assert_same_result(f, g, seed=0):
    for x, y in zip(run(f, seed), run(g, seed)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def with_root_body(f, body):
    """`f` with the root block's body replaced (for building expected functions)."""
    root = f.body.block
    return f.with_body(f.body.replace(block=root.replace(body=body)))


def snapshot(sch):
    """What a failed primitive must leave untouched: the module's function objects and structure."""
    return {gv.name_hint: fn for gv, fn in sch.mod.items()}


def assert_unchanged(sch, before):
    from graphc.ir import structural_equal

    for name, fn in before.items():
        assert sch.mod[name] is fn
        assert structural_equal(sch.mod[name], fn)


def find_and_replace(body, old, new):
    from graphc.tir.schedule.state import replace_stmts

    return replace_stmts(body, {old: new})


def scale_then_sum(n=4, m=4):
    """S = A * 2 (intermediate), B[i] = sum_k S[i, k]: an elementwise stage feeding a reduction."""
    A, B = tir.decl_buffer((n, m), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    S = tir.decl_buffer((n, m), "float32", "S")
    i, j, vi, vj = tir.Var("i"), tir.Var("j"), tir.Var("vi"), tir.Var("vj")
    s = tir.Block(
        (spatial(vi, n), spatial(vj, m)),
        (point(A, vi, vj),),
        (point(S, vi, vj),),
        "S",
        S.vstore([vi, vj], A[vi, vj] * 2.0),
    )
    i2, k, wi, wk = tir.Var("i"), tir.Var("k"), tir.Var("vi"), tir.Var("vk")
    b = tir.Block(
        (spatial(wi, n), reduce_iv(wk, m)),
        (point(S, wi, wk),),
        (point(B, wi),),
        "B",
        B.vstore([wi], B[wi] + S[wi, wk]),
        init=B.vstore([wi], tir.const(0.0)),
    )
    body = tir.SeqStmt(
        (
            loop(i, n, loop(j, m, tir.BlockRealize((i, j), TRUE, s))),
            loop(i2, n, loop(k, m, tir.BlockRealize((i2, k), TRUE, b))),
        )
    )
    return func([A, B], body, allocs=[S])


def vector_add(n=8, with_b=True):
    """C[i] = A[i] + B[i] (or B[i] = A[i] + 1 when with_b is False: the blitz course's add-one)."""
    A = tir.decl_buffer((n,), "float32", "A")
    out = tir.decl_buffer((n,), "float32", "C" if with_b else "B")
    B = tir.decl_buffer((n,), "float32", "B")
    i, vi = tir.Var("i"), tir.Var("vi")
    value = A[vi] + B[vi] if with_b else A[vi] + 1.0
    reads = (point(A, vi), point(B, vi)) if with_b else (point(A, vi),)
    blk = tir.Block((spatial(vi, n),), reads, (point(out, vi),), out.name, out.vstore([vi], value))
    params = [A, B, out] if with_b else [A, out]
    return func(params, loop(i, n, tir.BlockRealize((i,), TRUE, blk)))


def assert_same_result_built(f, g, seed=0):
    """Like `assert_same_result`, but compiled with graphc.build (for shapes too big to interpret)."""
    import graphc

    rng = np.random.default_rng(seed)
    outs = []
    for fn in (f, g):
        arrays = [rng.standard_normal([int(d) for d in b.shape]).astype("float32") for b in fn.buffers]
        rng = np.random.default_rng(seed)
        graphc.build(fn, target="llvm")["main"](*arrays)
        outs.append(arrays)
    for x, y in zip(*outs):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)
