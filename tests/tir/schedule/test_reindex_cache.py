"""reindex_cache_read / reindex_cache_write: structure, numerics, and what they refuse."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.script import tir as T
from graphc.tir import ScheduleError
from graphc.tir.schedule.testing import assert_structural_equal_ignore_global_symbol, verify_trace_roundtrip


@T.prim_func
def elementwise(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0


@T.prim_func
def cached_read(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    A_local = T.alloc_buffer((8, 4), scope="local")
    for i, j in T.grid(4, 8):
        with T.block("A_local"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(A_local[vj, vi])
            A_local[vj, vi] = A[vi, vj]
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A_local[vj, vi])
            T.writes(B[vi, vj])
            B[vi, vj] = A_local[vj, vi] * T.float32(2.0)


@T.prim_func
def matmul(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_reindex_cache_read_structure():
    sch = tir.Schedule(elementwise)
    block = sch.reindex_cache_read("B", 0, "local", lambda vi, vj: (vj, vi))
    assert sch.get(block).name_hint == "A_local"
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], cached_read)
    verify_trace_roundtrip(sch, elementwise)
    P.assert_same_result(elementwise, sch.mod["main"])


def test_reindex_cache_write_of_a_reduction():
    sch = tir.Schedule(matmul)
    block = sch.reindex_cache_write("C", 0, "local", lambda i, j, k: (j, i))
    assert sch.get(block).name_hint == "C_local"
    buf = sch.get(sch.get_block("C")).writes[0].buffer
    assert buf.name == "C_local" and buf.scope == "local"
    assert [b.name for b in sch.get_child_blocks(sch.get_block("root"))] == ["C", "C_local"]
    P.assert_same_result(matmul, sch.mod["main"])
    k_block = sch.reindex_cache_read("C", 0, "shared", lambda i, j, k: (i, k))
    assert sch.get(k_block).name_hint == "A_shared"
    P.assert_same_result(matmul, sch.mod["main"])


def _refused(sch, call, *words):
    before = P.snapshot(sch)
    with pytest.raises(ScheduleError) as info:
        call()
    P.assert_unchanged(sch, before)
    for word in words:
        assert word in str(info.value), str(info.value)


def test_reindex_cache_refusals():
    sch = tir.Schedule(elementwise)
    _refused(sch, lambda: sch.reindex_cache_read("B", 0, "test_scope", lambda i, j: (i, j)),
             "reindex_cache_read", "block 'B'", "not a storage scope")  # fmt: skip
    _refused(sch, lambda: sch.reindex_cache_read("B", 0, "local", lambda i, j: (i + j,)),
             "reindex_cache_read", "not injective")  # fmt: skip
    _refused(sch, lambda: sch.reindex_cache_read("B", 0, "local", lambda i, j: (i,)),
             "reindex_cache_read", "iter var vj appears in the access but not in the index map")  # fmt: skip
    _refused(sch, lambda: sch.reindex_cache_read("B", 3, "local", lambda i, j: (i, j)),
             "reindex_cache_read", "not index 3")  # fmt: skip

    @T.prim_func
    def region(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi, 0:8])
                B[vi] = A[vi, 0] + A[vi, 7]

    sch = tir.Schedule(region)
    _refused(sch, lambda: sch.reindex_cache_read("B", 0, "local", lambda i: (i,)), "reindex_cache_read",
             "not a single point")  # fmt: skip
