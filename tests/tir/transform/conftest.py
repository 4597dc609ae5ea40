"""Small PrimFuncs in block form, built with the tir constructors, shared by the pass tests."""

from types import SimpleNamespace

import numpy as np
import pytest

from graphc import tir
from graphc.tir import (
    Block,
    BlockRealize,
    BufferStore,
    For,
    ForKind,
    IterType,
    IterVar,
    PrimFunc,
    Range,
    Var,
    const,
)  # fmt: skip

SERIAL = ForKind.SERIAL


def loops(specs, body):
    """Nest `body` in serial loops: specs is [(var, extent), ...] outermost first."""
    for var, extent in reversed(specs):
        body = For(var, const(0), const(extent) if isinstance(extent, int) else extent, SERIAL, body)
    return body


def block(name, iters, values, body, init=None, predicate=True, alloc=()):
    """A BlockRealize of a block with `iters` = [(Var, extent, IterType)] bound to `values`."""
    iter_vars = tuple(
        IterVar(Range(const(0), const(e) if isinstance(e, int) else e), v, kind) for v, e, kind in iters
    )
    blk = Block(iter_vars, (), (), name, body, init, tuple(alloc))
    return BlockRealize(tuple(values), const(predicate) if isinstance(predicate, bool) else predicate, blk)


def func(buffers, body, alloc=(), scalars=()):
    """A PrimFunc with a handle param per buffer and the body in a root block."""
    params = [Var(b.name.lower(), "handle") for b in buffers]
    root = BlockRealize((), const(True), Block((), (), (), "root", body, None, tuple(alloc)))
    return PrimFunc(params + list(scalars), root, buffer_map=dict(zip(params, buffers)))


SP, RD = IterType.DATA_PAR, IterType.COMM_REDUCE


def vector_add(n=16):
    A, B, C = (tir.decl_buffer((n,), "float32", name) for name in "ABC")
    i, vi = Var("i"), Var("v_i")
    body = loops([(i, n)], block("C", [(vi, n, SP)], [i], BufferStore(C, A[vi] + B[vi], (vi,))))
    return func([A, B, C], body)


def reduce_sum(m=4, n=6):
    A, B = tir.decl_buffer((m, n), "float32", "A"), tir.decl_buffer((m,), "float32", "B")
    i, k, vi, vk = Var("i"), Var("k"), Var("v_i"), Var("v_k")
    init = BufferStore(B, const(0.0), (vi,))
    update = BufferStore(B, B[vi] + A[vi, vk], (vi,))
    body = loops([(i, m), (k, n)], block("B", [(vi, m, SP), (vk, n, RD)], [i, k], update, init))
    return func([A, B], body)


def matmul(m=4, n=5, k=6):
    A = tir.decl_buffer((m, k), "float32", "A")
    B = tir.decl_buffer((k, n), "float32", "B")
    C = tir.decl_buffer((m, n), "float32", "C")
    i, j, r = Var("i"), Var("j"), Var("k")
    vi, vj, vk = Var("v_i"), Var("v_j"), Var("v_k")
    init = BufferStore(C, const(0.0), (vi, vj))
    update = BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj))
    blk = block("C", [(vi, m, SP), (vj, n, SP), (vk, k, RD)], [i, j, r], update, init)
    return func([A, B, C], loops([(i, m), (j, n), (r, k)], blk))


def two_stage(m=4, n=5):
    A, C = tir.decl_buffer((m, n), "float32", "A"), tir.decl_buffer((m, n), "float32", "C")
    B = tir.decl_buffer((m, n), "float32", "B")
    i, j, vi, vj = Var("i"), Var("j"), Var("v_i"), Var("v_j")
    i2, j2, vi2, vj2 = Var("i"), Var("j"), Var("v_i"), Var("v_j")
    s1 = loops(
        [(i, m), (j, n)],
        block("B", [(vi, m, SP), (vj, n, SP)], [i, j], BufferStore(B, A[vi, vj] * 2.0, (vi, vj))),
    )
    s2 = loops(
        [(i2, m), (j2, n)],
        block("C", [(vi2, m, SP), (vj2, n, SP)], [i2, j2], BufferStore(C, B[vi2, vj2] + 1.0, (vi2, vj2))),
    )
    return func([A, C], tir.SeqStmt((s1, s2)), alloc=[B])


def guarded(n=10, factor=4):
    """A hand-written non-dividing split: i = io * factor + ii guarded by i < n."""
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    io, ii, vi = Var("i_0"), Var("i_1"), Var("v_i")
    outer = (n + factor - 1) // factor
    blk = block(
        "B",
        [(vi, n, SP)],
        [io * factor + ii],
        BufferStore(B, A[vi] * 3.0, (vi,)),
        predicate=tir.convert(io * factor + ii < n),
    )
    return func([A, B], loops([(io, outer), (ii, factor)], blk))


def symbolic():
    """B[i] = A[i] * 2 + 1 for i < n, with n bound from A's shape."""
    n = Var("n")
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i, vi = Var("i"), Var("v_i")
    body = loops([(i, n)], block("B", [(vi, n, SP)], [i], BufferStore(B, A[vi] * 2.0 + 1.0, (vi,))))
    return func([A, B], body)


def random_inputs(f, seed=0, **dims):
    """Random arrays for `f`'s buffers (symbolic dims taken from `dims` by name)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for buf in f.buffers:
        shape = [d.value if isinstance(d, tir.IntImm) else dims[d.name] for d in buf.shape]
        arrays.append(rng.standard_normal(shape).astype(buf.dtype))
    return arrays


@pytest.fixture
def programs():
    return SimpleNamespace(
        vector_add=vector_add,
        reduce_sum=reduce_sum,
        matmul=matmul,
        two_stage=two_stage,
        guarded=guarded,
        symbolic=symbolic,
        random_inputs=random_inputs,
        block=block,
        loops=loops,
        func=func,
        SP=SP,
        RD=RD,
    )
