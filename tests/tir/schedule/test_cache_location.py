"""cache_read / cache_write placement and cache shape as TVM chooses them: a copy inside the loop
nest a producer shares with a consumer, a cache compacted to the region a non-root scope block
uses, and buffers named by name. Every result is checked against the original numerically."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.script import tir as T
from graphc.tir import ScheduleError
from graphc.tir.schedule.testing import assert_structural_equal_ignore_global_symbol


def _same(before, sch):
    P.assert_same_result(before, sch.mod["main"])


# A is produced and read (by B) in one loop nest; C reads it after the nest.
@T.prim_func
def shared_nest(X: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    A = T.alloc_buffer((32,))
    for i in range(4):
        for j in range(8):
            with T.block("A"):
                vi = T.axis.spatial(32, i * 8 + j)
                A[vi] = X[vi] * 2.0
        for j in range(8):
            with T.block("B"):
                vi = T.axis.spatial(32, i * 8 + j)
                B[vi] = A[vi] + 1.0
    for i in range(32):
        with T.block("C"):
            vi = T.axis.spatial(32, i)
            C[vi] = A[vi] * 3.0


@T.prim_func
def shared_nest_cache_read(
    X: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")
):
    A = T.alloc_buffer((32,))
    A_shared = T.alloc_buffer((32,), scope="shared")
    for i in range(4):
        for j in range(8):
            with T.block("A"):
                vi = T.axis.spatial(32, i * 8 + j)
                A[vi] = X[vi] * 2.0
        for ax0 in range(8):
            with T.block("A_shared"):
                v0 = T.axis.spatial(32, i * 8 + ax0)
                A_shared[v0] = A[v0]
        for j in range(8):
            with T.block("B"):
                vi = T.axis.spatial(32, i * 8 + j)
                B[vi] = A_shared[vi] + 1.0
    for i in range(32):
        with T.block("C"):
            vi = T.axis.spatial(32, i)
            C[vi] = A_shared[vi] * 3.0


def test_cache_read_goes_inside_the_nest_it_shares_with_the_producer():
    sch = tir.Schedule(shared_nest)
    block = sch.cache_read("B", 0, "shared")
    assert sch.get(block).name_hint == "A_shared"
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], shared_nest_cache_read)
    _same(shared_nest, sch)


def test_cache_read_for_a_consumer_after_the_nest_goes_before_it():
    sch = tir.Schedule(shared_nest)
    sch.cache_read("C", "A", "global", consumer_blocks=["C"])  # the buffer by name
    body = sch.mod["main"].body.block.body
    assert [s.body.block.name_hint for s in body.seq[1:]] == ["A_global", "C"]
    _same(shared_nest, sch)


@pytest.mark.parametrize("consumers", [None, ["B"], ["C"], ["B", "C"]])
def test_cache_write_in_a_shared_nest(consumers):
    sch = tir.Schedule(shared_nest)
    sch.cache_write("A", 0, "local", consumer_blocks=consumers)
    func = sch.mod["main"]
    readers = {
        x.name_hint: [r.buffer.name for r in x.reads]
        for x in tir.schedule.state.walk(func.body)
        if isinstance(x, tir.Block) and x.name_hint in ("B", "C")
    }
    for name in consumers or []:
        assert readers[name] == ["A_local"]
    _same(shared_nest, sch)


@T.prim_func
def under_scope(X: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    A = T.alloc_buffer((64,))
    for io in range(4):
        with T.block("scope"):
            vo = T.axis.spatial(4, io)
            for j in range(16):
                with T.block("A"):
                    vi = T.axis.spatial(64, vo * 16 + j)
                    A[vi] = X[vi] + 1.0
            for j in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(64, vo * 16 + j)
                    B[vi] = A[vi] * 2.0


def test_cache_in_a_block_scope_holds_only_the_region_the_scope_uses():
    sch = tir.Schedule(under_scope)
    sch.cache_read("B", 0, "local")
    sch.cache_write("A", 0, "local")
    func = sch.mod["main"]
    scope = next(
        x for x in tir.schedule.state.walk(func.body) if isinstance(x, tir.Block) and x.name_hint == "scope"
    )
    assert [[int(d) for d in b.shape] for b in scope.alloc_buffers] == [[16], [16]]
    text = func.script()
    assert "vi - vo * 16" in text
    _same(under_scope, sch)


@T.prim_func
def producer_after_consumer(X: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    A = T.alloc_buffer((16,))
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = X[vi]
        with T.block("A"):
            vi = T.axis.spatial(16, i)
            A[vi] = B[vi] + 1.0
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * 2.0


def test_cache_read_buffer_name_not_read_is_refused():
    sch = tir.Schedule(shared_nest)
    with pytest.raises(ScheduleError, match="block 'B' reads no buffer 'Q'"):
        sch.cache_read("B", "Q", "shared")
    with pytest.raises(ScheduleError, match="block 'A' writes no buffer 'X'"):
        sch.cache_write("A", "X", "shared")


@T.prim_func
def two_writers_in_nest(X: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    A = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("A0"):
            vi = T.axis.spatial(16, i)
            A[vi] = X[vi]
        with T.block("A1"):
            vi = T.axis.spatial(16, i)
            A[vi] = A[vi] + 1.0
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * 2.0


def test_cache_write_refuses_a_second_writer_in_the_nest():
    sch = tir.Schedule(two_writers_in_nest)
    with pytest.raises(ScheduleError, match="cache_write buffer 0 of block 'A0'.*several blocks"):
        sch.cache_write("A0", 0, "local")


@T.prim_func
def consumer_before_writer(
    X: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")
):
    A = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[15 - vi]
        with T.block("A"):
            vi = T.axis.spatial(16, i)
            A[vi] = X[vi]
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi]


def test_cache_write_refuses_a_given_consumer_that_runs_before_the_block():
    sch = tir.Schedule(consumer_before_writer)
    with pytest.raises(ScheduleError, match="cache_write buffer 0 of block 'A'.*comes before the block"):
        sch.cache_write("A", 0, "local", consumer_blocks=["B"])


def test_cache_read_refuses_a_consumer_before_the_copy_point():
    sch = tir.Schedule(consumer_before_writer)
    with pytest.raises(ScheduleError, match="cache_read buffer 0 of block 'C'"):
        sch.cache_read("C", 0, "local")


def test_results_unchanged_by_placement_numerically():
    for sched in (
        lambda s: s.cache_read("B", 0, "shared"),
        lambda s: s.cache_write("A", 0, "local"),
        lambda s: s.cache_write("A", 0, "local", consumer_blocks=["C"]),
    ):
        sch = tir.Schedule(shared_nest)
        sched(sch)
        _same(shared_nest, sch)
