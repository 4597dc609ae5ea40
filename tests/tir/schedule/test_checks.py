"""Every primitive refuses what TVM refuses: each error names the primitive, the block or loop,
and the condition that failed, and leaves the schedule exactly as it was."""

import pytest
import sched_programs as P

from graphc import tir
from graphc.script import tir as T
from graphc.tir import ScheduleError


def refused(sch, call, *words):
    """Run `call`; it must raise ScheduleError mentioning every word, leaving `sch` untouched."""
    before = P.snapshot(sch)
    trace = len(sch.trace)
    with pytest.raises(ScheduleError) as info:
        call()
    P.assert_unchanged(sch, before)
    recorded = [inst.name for inst in sch.trace.insts[trace:]]
    assert all(name.startswith("get_") for name in recorded), recorded  # only look-ups
    text = str(info.value)
    for word in words:
        assert word in text, f"{word!r} not in: {text}"
    return text


@T.prim_func
def annotated(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in T.serial(8, annotations={"pragma_x": 1}):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0


@T.prim_func
def two_stage(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def rowsum(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = 0.0
            B[vi] = B[vi] + A[vi, vk]


# -- split, fuse, reorder -------------------------------------------------------------------


def test_split_and_fuse_refuse_annotated_loops():
    sch = tir.Schedule(annotated)
    i, j = sch.get_loops("B")
    refused(sch, lambda: sch.split(j, [None, 4]), "split", "loop j", "annotations", "pragma_x")
    refused(sch, lambda: sch.fuse(i, j), "fuse", "loop j", "annotations")
    sch.unannotate(j, "pragma_x")
    sch.fuse(i, j)


def test_split_refuses_a_symbolic_extent_its_factors_may_not_cover():
    n = tir.Var("n")
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i, vi = tir.Var("i"), tir.Var("vi")
    blk = tir.Block((tir.IterVar(tir.Range.make(n), vi, tir.IterType.DATA_PAR),), (), (), "B",
                    B.vstore([vi], A[vi] * 2.0))  # fmt: skip
    f = P.func([A, B], tir.For(i, tir.const(0), n, tir.ForKind.SERIAL, tir.BlockRealize((i,), P.TRUE, blk)))
    sch = tir.Schedule(f)
    (loop,) = sch.get_loops("B")
    refused(sch, lambda: sch.split(loop, [2, 3]), "split", "loop i", "not provably at least", "extent n")
    sch.split(loop, [None, 3])  # the inferred factor covers it


def test_split_disable_predication():
    sch = tir.Schedule(P.elementwise(10, 4))
    i, _ = sch.get_loops("B")
    refused(sch, lambda: sch.split(i, [None, 4], disable_predication=True), "disable_predication", "loop i")
    io, ii = sch.split(i, [5, 2], disable_predication=True)  # exact: the same as without it
    assert isinstance(sch.get(ii).body.body.predicate, tir.IntImm)


def test_reorder_refuses_non_affine_bindings():
    @T.prim_func
    def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(4, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i * i)
                vj = T.axis.spatial(16, j)
                B[vi, vj] = A[vi, vj] * 2.0

    sch = tir.Schedule(f)
    i, j = sch.get_loops("B")
    refused(sch, lambda: sch.reorder(j, i), "reorder", "block 'B'", "affine binding", "i * i")


def test_reorder_refuses_non_spatial_non_reduction_iters():
    @T.prim_func
    def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.scan(8, j)
                B[vi, vj] = A[vi, vj] * 2.0

    sch = tir.Schedule(f)
    i, j = sch.get_loops("B")
    refused(sch, lambda: sch.reorder(j, i), "reorder", "block 'B'", "neither spatial nor a reduction")


# -- compute_at -----------------------------------------------------------------------------


def test_compute_at_refuses_an_output_block_whose_consumers_read_part_of_it():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((4,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = B[vi] + 1.0

    sch = tir.Schedule(f)
    (loop,) = sch.get_loops("C")
    refused(sch, lambda: sch.compute_at("B", loop), "compute_at", "block 'B'", "output block")


def test_compute_at_of_an_output_block_its_consumers_read_whole():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] + 1.0

    sch = tir.Schedule(f)
    sch.compute_at("B", sch.get_loops("C")[0])
    P.assert_same_result(f, sch.mod["main"])


def test_compute_at_refuses_a_block_that_is_neither_complete_nor_a_reduction():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = B[vi] + A[vi]
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] + 1.0

    sch = tir.Schedule(f)
    (loop,) = sch.get_loops("C")
    refused(sch, lambda: sch.compute_at("B", loop), "compute_at", "block 'B'", "complete block",
            "reduction block", "reads and writes B")  # fmt: skip


def test_compute_at_refuses_a_scope_that_is_not_a_stage_pipeline():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] + 1.0
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = A[vi]
        for i in range(8):
            with T.block("E"):
                vi = T.axis.spatial(8, i)
                B[vi] = D[vi]

    sch = tir.Schedule(f)
    (loop,) = sch.get_loops("C")
    refused(sch, lambda: sch.compute_at("B", loop), "compute_at", "stage pipeline", "write-after-read")


def test_stage_pipeline_lets_disjoint_parts_of_a_partitioned_reduction_pass():
    # the parts' inits write rows the earlier parts' updates never read: no real write-after-read
    @T.prim_func
    def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
        D = T.alloc_buffer((8,), "float32")
        for i, k in T.grid(8, 8):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = A[vi, 0] * 2.0
        for i in range(8):
            with T.block("E"):
                vi = T.axis.spatial(8, i)
                E[vi] = D[vi] + 1.0

    sch = tir.Schedule(f)
    i, k = sch.get_loops("C")
    sch.loop_partition(i, [3, None])
    for part in ("C_i0", "C_i1"):
        sch.decompose_reduction(part, sch.get_loops(part)[-1])
    sch.compute_at("D", sch.get_loops("E")[0])
    P.assert_same_result(f, sch.mod["main"])


def test_compute_at_index():
    @T.prim_func
    def f(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8), "float32")
        C = T.alloc_buffer((8, 8), "float32")
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i in range(8):
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj] + 1.0
            for j in range(8):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    D[vi, vj] = B[vi, vj] + C[vi, vj]

    for index, names in (
        (-1, ["C", "B", "D"]),
        (-2, ["B", "C", "D"]),
        (0, ["B", "C", "D"]),
        (1, ["C", "B", "D"]),
    ):
        sch = tir.Schedule(f)
        (loop,) = sch.get_loops("D")[:1]
        sch.compute_at("B", loop, index=index)
        assert [b.name for b in sch.get_child_blocks(loop)] == names
        P.assert_same_result(f, sch.mod["main"])
    sch = tir.Schedule(f)
    refused(
        sch, lambda: sch.compute_at("B", sch.get_loops("D")[0], index=2), "compute_at", "index 2", "[0, 1]"
    )


# -- inlining -------------------------------------------------------------------------------


def test_compute_inline_refuses_an_output_block_and_an_init():
    sch = tir.Schedule(two_stage)
    refused(sch, lambda: sch.compute_inline("C"), "inline block 'C'", "output of the function")
    sch = tir.Schedule(P.mm_relu(4))
    refused(sch, lambda: sch.compute_inline("Y"), "compute_inline block 'Y'", "init")


def test_compute_inline_refuses_a_matched_buffer():
    @T.prim_func
    def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8), "float32")
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                Bb = T.match_buffer(B[vi : vi + 1, vj], (1, 1))
                C[vi, vj] = Bb[0, 0] + 1.0

    sch = tir.Schedule(f)
    refused(sch, lambda: sch.compute_inline("B"), "inline block 'B'", "matched by block 'C'")


def test_reverse_compute_inline_refusals():
    @T.prim_func
    def two_producers(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        C = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = A[vi] + 1.0
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = B[vi] + C[vi]

    sch = tir.Schedule(two_producers)
    refused(
        sch, lambda: sch.reverse_compute_inline("D"), "reverse-inline block 'D'", "exactly one intermediate"
    )

    @T.prim_func
    def not_affine(A: T.Buffer((8, 8), "float32"), C: T.Buffer((4, 4), "float32")):
        B = T.alloc_buffer((8, 8), "float32")
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi + vj, vi + vj]

    sch = tir.Schedule(not_affine)
    refused(
        sch, lambda: sch.reverse_compute_inline("C"), "reverse_compute_inline block 'C'", "bijective affine"
    )

    @T.prim_func
    def different_loads(A: T.Buffer((8,), "float32"), C: T.Buffer((6,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(6):
            with T.block("C"):
                vi = T.axis.spatial(6, i)
                C[vi] = B[vi] + B[vi + 1]

    sch = tir.Schedule(different_loads)
    refused(
        sch, lambda: sch.reverse_compute_inline("C"), "reverse_compute_inline block 'C'", "different indices"
    )

    @T.prim_func
    def not_covered(A: T.Buffer((8,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = T.if_then_else(vi >= 8, B[vi - 8], T.float32(0))

    sch = tir.Schedule(not_covered)
    refused(
        sch, lambda: sch.reverse_compute_inline("C"), "reverse_compute_inline block 'C'", "does not cover"
    )


def test_reverse_compute_inline_refuses_a_producer_that_writes_an_output():
    """Found with TVM's test_output_block: B is a parameter; inlining C into B's block would make
    that block write C only, and B would be left unwritten."""

    @T.prim_func
    def output_producer(
        A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")
    ):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] + 1.0

    sch = tir.Schedule(output_producer)
    refused(
        sch,
        lambda: sch.reverse_compute_inline("C"),
        "reverse_compute_inline block 'C'",
        "B, is an output of the function",
    )


# -- caching --------------------------------------------------------------------------------


def test_cache_read_and_write_refuse_unknown_storage_scopes():
    sch = tir.Schedule(two_stage)
    refused(sch, lambda: sch.cache_read("C", 0, "test_scope"), "cache_read", "block 'C'", "'test_scope'",
            "not a storage scope")  # fmt: skip
    refused(sch, lambda: sch.cache_write("B", 0, "test_scope"), "cache_write", "block 'B'", "'test_scope'")
    refused(sch, lambda: sch.set_scope("B", 0, "test_scope"), "set_scope", "block 'B'", "'test_scope'")
    for scope in ("shared.dyn", "wmma.accumulator", "global.texture", "local"):
        tir.Schedule(two_stage).cache_read("C", 0, scope)


def test_cache_write_refuses_a_buffer_several_blocks_write():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(4):
            with T.block("B0"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi]
        for i in range(4):
            with T.block("B1"):
                vi = T.axis.spatial(4, i)
                B[vi + 4] = A[vi + 4]

    sch = tir.Schedule(f)
    refused(sch, lambda: sch.cache_write("B0", 0, "local"), "cache_write", "block 'B0'", "several blocks")


def test_cache_write_consumer_blocks_read_the_cache():
    sch = tir.Schedule(two_stage)
    sch.cache_write("B", 0, "local", consumer_blocks=["C"])
    assert [r.buffer.name for r in sch.get(sch.get_block("C")).reads] == ["B_local"]
    P.assert_same_result(two_stage, sch.mod["main"])


def test_storage_align_refusals():
    sch = tir.Schedule(two_stage)
    refused(sch, lambda: sch.storage_align("B", 0, 2, 8, 0), "storage_align", "block 'B'", "axis 2")
    refused(sch, lambda: sch.storage_align("B", 0, 0, 0, 0), "storage_align", "factor must be positive")
    refused(sch, lambda: sch.storage_align("C", 0, 0, 8, 0), "storage_align", "not allocated by a block")
    sch.storage_align("B", 0, -1, 8, 1)  # a negative axis counts from the end
    assert sch.get(sch.get_block("B")).annotations["buffer_dim_align"] == [[0, 1, 8, 1]]


# -- reductions -----------------------------------------------------------------------------


def test_rfactor_refusals():
    sch = tir.Schedule(two_stage)
    refused(sch, lambda: sch.rfactor(sch.get_loops("B")[0], 0), "rfactor", "loop i", "reduction block")

    @T.prim_func
    def init_one(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 1.0
                B[vi] = B[vi] + A[vi, vk]

    sch = tir.Schedule(init_one)
    _, k = sch.get_loops("B")
    refused(sch, lambda: sch.rfactor(k, 0), "rfactor block 'B'", "loop k", "commutative reducer", "identity")

    @T.prim_func
    def minus(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0.0
                B[vi] = B[vi] - A[vi, vk]

    sch = tir.Schedule(minus)
    refused(sch, lambda: sch.rfactor(sch.get_loops("B")[1], 0), "rfactor block 'B'", "+, *, max or min")

    sch = tir.Schedule(rowsum)
    _, k = sch.get_loops("B")
    sch.unroll(k)
    refused(sch, lambda: sch.rfactor(k, 0), "rfactor block 'B'", "loop k", "serial")

    @T.prim_func
    def not_affine(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(64, k * k)
                with T.init():
                    B[vi] = 0.0
                B[vi] = B[vi] + A[vi, vk]

    sch = tir.Schedule(not_affine)
    refused(sch, lambda: sch.rfactor(sch.get_loops("B")[1], 0), "rfactor block 'B'", "not a reduction block",
            "not affine")  # fmt: skip


def test_rfactor_negative_factor_axis():
    sch = tir.Schedule(rowsum)
    rf = sch.rfactor(sch.get_loops("B")[1], -1)
    assert [int(d) for d in sch.get(rf).writes[0].buffer.shape] == [8, 8]
    P.assert_same_result(rowsum, sch.mod["main"])
    sch = tir.Schedule(rowsum)
    refused(sch, lambda: sch.rfactor(sch.get_loops("B")[1], -3), "rfactor", "factor_axis -3", "[-2, 1]")


def test_decompose_reduction_needs_a_reduction_block_with_affine_bindings():
    @T.prim_func
    def f(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(64, k * k)
                with T.init():
                    B[vi] = 0.0
                B[vi] = B[vi] + A[vi, vk]

    sch = tir.Schedule(f)
    i, _ = sch.get_loops("B")
    refused(sch, lambda: sch.decompose_reduction("B", i), "decompose_reduction of block 'B'", "not affine")


# -- loop kinds -----------------------------------------------------------------------------


def test_parallel_and_vectorize_refuse_blocks_that_are_not_compact():
    @T.prim_func
    def scan(A: T.Buffer((16,), "float32")):
        for i in range(15):
            with T.block("scan"):
                vi = T.axis.spatial(15, i)
                A[vi + 1] = A[vi + 1] + A[vi]

    sch = tir.Schedule(scan)
    (i,) = sch.get_loops("scan")
    refused(
        sch, lambda: sch.vectorize(i), "vectorize loop i", "block 'scan'", "complete block", "reduction block"
    )
    refused(sch, lambda: sch.parallel(i), "parallelize loop i", "block 'scan'")

    @T.prim_func
    def reduce_index(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vk] = 0.0
                B[vk] = B[vk] + A[vi, vk]

    sch = tir.Schedule(reduce_index)
    i, _ = sch.get_loops("B")
    refused(
        sch, lambda: sch.parallel(i), "parallelize loop i", "block 'B'", "reduction iter indexes its output"
    )


def test_unroll_drops_a_thread_binding():
    sch = tir.Schedule(rowsum)
    i, _ = sch.get_loops("B")
    sch.bind(i, "blockIdx.x")
    sch.unroll(i)
    assert sch.get(i).kind == tir.ForKind.UNROLLED and sch.get(i).thread_binding is None


# -- block names ----------------------------------------------------------------------------


def test_block_names_are_accepted_wherever_a_block_is_taken():
    sch = tir.Schedule(two_stage)
    (ci, cj) = sch.get_loops("C")
    sch.compute_at("B", ci)
    assert [b.name for b in sch.get_child_blocks(ci)] == ["B", "C"]
    sch = tir.Schedule(two_stage)
    assert [b.name for b in sch.get_producers("C")] == ["B"]
    assert [b.name for b in sch.get_consumers("B")] == ["C"]
    sch.annotate("B", "k", 1)
    sch.unannotate("B", "k")
    cache = sch.cache_read("C", 0, "local", consumer_blocks=["C"])
    assert sch.get(cache).name_hint == "B_local"
    sch.reverse_compute_inline("C")
    refused(sch, lambda: sch.compute_inline("nope"), "no block named 'nope'")
    P.assert_same_result(two_stage, sch.mod["main"])


def test_reindex_needs_a_stage_pipeline():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] + 1.0
        for i in range(8):
            with T.block("E"):
                vi = T.axis.spatial(8, i)
                B[vi] = D[vi]

    sch = tir.Schedule(f)
    refused(
        sch, lambda: sch.reindex("C", ("read", 0)), "reindex read buffer 0 of block 'C'", "stage pipeline"
    )


def test_bind_accepts_a_fused_loop_split_by_more_than_its_extent():
    """fuse(4, 8) split by 64 leaves an outer loop of one iteration, which the simplifier drops
    from the bindings but not from the predicate: the binding is still affine (TVM binds it)."""
    from graphc import te

    A = te.placeholder((4, 8, 32), name="A")
    k = te.reduce_axis((0, 32), "k")
    C = te.compute((4, 8), lambda i, j: te.sum(A[i, j, k], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    i, j, _ = sch.get_loops(sch.get_block("C"))
    bx, tx = sch.split(sch.fuse(i, j), [None, 64])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    assert [sch.get(loop).kind for loop in (bx, tx)] == [tir.ForKind.THREAD_BINDING] * 2


def test_cache_index_is_refused_clearly():
    sch = tir.Schedule(two_stage)
    text = refused(
        sch, lambda: sch.cache_index("C", "global"), "cache_index", "'C'", "not supported by graphc"
    )
    assert "global" in text
