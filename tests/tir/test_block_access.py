"""get_block_access_region: T.reads / T.writes detection for blocks."""

from graphc import tir
from graphc.ir import structural_equal
from graphc.tir import (
    Block,
    BlockRealize,
    BufferRegion,
    For,
    ForKind,
    IterType,
    IterVar,
    LetStmt,
    Range,
    SeqStmt,
    Var,
    const,
    decl_buffer,
)  # fmt: skip
from graphc.tir.analysis.block_access import (
    bounds,
    get_block_access_region,
    get_block_read_write_region,
    same_expr,
    to_affine,
)  # fmt: skip


def _iv(var, extent, kind=IterType.DATA_PAR):
    return IterVar(Range.make(extent), var, kind)


def _block(name, iter_vars, body, init=None, alloc=()):
    return Block(tuple(iter_vars), (), (), name, body, init, tuple(alloc))


def _check_region(region: BufferRegion, buffer, ranges):
    """`ranges` holds (min, extent) pairs; mins/extents compared exactly (same Vars)."""
    assert region.buffer is buffer
    assert len(region.region) == len(ranges)
    for r, (lo, ext) in zip(region.region, ranges):
        lo, ext = tir.convert(lo), tir.convert(ext)
        assert same_expr(r.min, lo), (r.min, lo)
        assert same_expr(r.extent, ext), (r.extent, ext)


def test_elementwise():
    A = decl_buffer((8, 8), "float32", "A")
    B = decl_buffer((8, 8), "float32", "B")
    vi, vj = Var("vi"), Var("vj")
    blk = _block("B", [_iv(vi, 8), _iv(vj, 8)], B.vstore([vi, vj], A[vi, vj] * 2.0))
    reads, writes = get_block_access_region(blk)
    assert len(reads) == 1 and len(writes) == 1
    _check_region(reads[0], A, [(vi, 1), (vj, 1)])
    _check_region(writes[0], B, [(vi, 1), (vj, 1)])


def test_broadcast_and_order_of_first_appearance():
    A = decl_buffer((4, 8), "float32", "A")
    bias = decl_buffer((8,), "float32", "bias")
    C = decl_buffer((4, 8), "float32", "C")
    vi, vj = Var("vi"), Var("vj")
    blk = _block("C", [_iv(vi, 4), _iv(vj, 8)], C.vstore([vi, vj], A[vi, vj] + bias[vj] + A[vi, vj]))
    reads, writes = get_block_access_region(blk)
    assert [r.buffer for r in reads] == [A, bias]
    _check_region(reads[1], bias, [(vj, 1)])


def _matmul_block():
    A = decl_buffer((16, 16), "float32", "A")
    B = decl_buffer((16, 16), "float32", "B")
    C = decl_buffer((16, 16), "float32", "C")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    body = C.vstore([vi, vj], C[vi, vj] + A[vi, vk] * B[vk, vj])
    init = C.vstore([vi, vj], const(0.0))
    ivs = [_iv(vi, 16), _iv(vj, 16), _iv(vk, 16, IterType.COMM_REDUCE)]
    return _block("C", ivs, body, init), (A, B, C), (vi, vj, vk)


def test_matmul_reduction_keeps_output_in_reads():
    blk, (A, B, C), (vi, vj, vk) = _matmul_block()
    reads, writes = get_block_access_region(blk)
    assert [r.buffer for r in reads] == [C, A, B]
    _check_region(reads[0], C, [(vi, 1), (vj, 1)])
    _check_region(reads[1], A, [(vi, 1), (vk, 1)])
    _check_region(reads[2], B, [(vk, 1), (vj, 1)])
    assert [w.buffer for w in writes] == [C]


def test_read_write_region_variant_drops_output_from_reads():
    blk, (A, B, C), _ = _matmul_block()
    reads, writes = get_block_read_write_region(blk)
    assert [r.buffer for r in reads] == [A, B] and [w.buffer for w in writes] == [C]


def test_conv_like_index_is_a_point():
    A = decl_buffer((18,), "float32", "A")
    B = decl_buffer((8,), "float32", "B")
    vi, vk = Var("vi"), Var("vk")
    index = vi * 2 + vk
    blk = _block("B", [_iv(vi, 8), _iv(vk, 3, IterType.COMM_REDUCE)], B.vstore([vi], B[vi] + A[index]))
    reads, _ = get_block_access_region(blk)
    assert reads[1].region[0].min is index
    assert reads[1].region[0].extent.value == 1


def test_inner_loop_is_relaxed():
    A = decl_buffer((18,), "float32", "A")
    B = decl_buffer((8,), "float32", "B")
    vi, k = Var("vi"), Var("k")
    loop = For(k, const(0), const(3), ForKind.SERIAL, B.vstore([vi], B[vi] + A[vi * 2 + k]))
    blk = _block("B", [_iv(vi, 8)], loop)
    reads, writes = get_block_access_region(blk)
    _check_region(reads[1], A, [(vi * 2, 3)])
    _check_region(writes[0], B, [(vi, 1)])


def test_symbolic_inner_loop_extent():
    n = Var("n")
    A = decl_buffer((4, n), "float32", "A")
    B = decl_buffer((4,), "float32", "B")
    vi, k = Var("vi"), Var("k")
    loop = For(k, const(0), n, ForKind.SERIAL, B.vstore([vi], B[vi] + A[vi, k]))
    reads, _ = get_block_access_region(_block("B", [_iv(vi, 4)], loop))
    _check_region(reads[1], A, [(vi, 1), (0, n)])


def test_union_of_neighbouring_points():
    A = decl_buffer((10,), "float32", "A")
    B = decl_buffer((8,), "float32", "B")
    vi = Var("vi")
    blk = _block("B", [_iv(vi, 8)], B.vstore([vi], A[vi] + A[vi + 2] + A[vi + 1]))
    reads, _ = get_block_access_region(blk)
    _check_region(reads[0], A, [(vi, 3)])


def test_let_var_is_substituted():
    A = decl_buffer((16,), "float32", "A")
    B = decl_buffer((8,), "float32", "B")
    vi, t = Var("vi"), Var("t")
    blk = _block("B", [_iv(vi, 8)], LetStmt(t, vi * 2, B.vstore([vi], A[t])))
    reads, _ = get_block_access_region(blk)
    assert isinstance(reads[0].region[0].min, tir.Mul)
    assert reads[0].region[0].min.a is vi


def test_alloc_buffer_excluded_and_children_use_declared_regions():
    A = decl_buffer((8,), "float32", "A")
    T = decl_buffer((8,), "float32", "T")
    B = decl_buffer((8,), "float32", "B")
    i, vi, vj = Var("i"), Var("vi"), Var("vj")
    child1 = Block(
        (_iv(vi, 8),),
        (BufferRegion.from_point(A, [vi]),),
        (BufferRegion.from_point(T, [vi]),),
        "T",
        T.vstore([vi], A[vi]),
    )
    child2 = Block(
        (_iv(vj, 8),),
        (BufferRegion.from_point(T, [vj]),),
        (BufferRegion.from_point(B, [vj]),),
        "B",
        B.vstore([vj], T[vj]),
    )
    body = For(
        i,
        const(0),
        const(8),
        ForKind.SERIAL,
        SeqStmt((BlockRealize((i,), const(True), child1), BlockRealize((i,), const(True), child2))),
    )
    root = _block("root", [], body, alloc=[T])
    reads, writes = get_block_access_region(root)
    assert [r.buffer for r in reads] == [A] and [w.buffer for w in writes] == [B]
    _check_region(reads[0], A, [(0, 8)])
    _check_region(writes[0], B, [(0, 8)])


def test_child_block_binding_substituted_without_relaxation():
    A = decl_buffer((8, 4), "float32", "A")
    B = decl_buffer((8, 4), "float32", "B")
    vo, vi = Var("vo"), Var("vi")
    child = Block(
        (_iv(vi, 4),),
        (BufferRegion.from_point(A, [vo, vi]),),
        (BufferRegion.from_point(B, [vo, vi]),),
        "inner",
        B.vstore([vo, vi], A[vo, vi]),
    )
    j = Var("j")
    outer = _block(
        "outer",
        [_iv(vo, 8)],
        For(j, const(0), const(4), ForKind.SERIAL, BlockRealize((j,), const(True), child)),
    )
    reads, writes = get_block_access_region(outer)
    _check_region(reads[0], A, [(vo, 1), (0, 4)])


def test_buffer_vars_in_scope_filters():
    blk, (A, B, C), _ = _matmul_block()
    reads, writes = get_block_access_region(blk, {A.data: A, C.data: C})
    assert [r.buffer for r in reads] == [C, A]


def test_block_realize_accepted():
    blk, (A, B, C), _ = _matmul_block()
    reads, _ = get_block_access_region(BlockRealize((), const(True), blk))
    assert len(reads) == 3


def test_relaxed_region_clipped_to_buffer():
    A = decl_buffer((8, 8), "float32", "A")
    B = decl_buffer((8,), "float32", "B")
    vi, k = Var("vi"), Var("k")
    loop = For(k, const(0), const(8), ForKind.SERIAL, B.vstore([vi], A[vi, k * k]))
    reads, _ = get_block_access_region(_block("B", [_iv(vi, 8)], loop))
    _check_region(reads[0], A, [(vi, 1), (0, 8)])


def test_data_dependent_index_covers_whole_dimension():
    n = Var("n")
    A = decl_buffer((8, n), "float32", "A")
    Idx = decl_buffer((8,), "int32", "Idx")
    B = decl_buffer((8,), "float32", "B")
    vi, k = Var("vi"), Var("k")
    loop = For(k, const(0), const(8), ForKind.SERIAL, B.vstore([vi], A[vi, Idx[k]]))
    reads, _ = get_block_access_region(_block("B", [_iv(vi, 8)], loop))
    _check_region(reads[0], A, [(vi, 1), (0, n)])
    _check_region(reads[1], Idx, [(0, 8)])


def test_floordiv_floormod_bounds():
    i, k = Var("i"), Var("k")
    lo, hi = bounds(tir.floordiv(i * 8 + k, 4), {k: Range.make(8)})
    assert structural_equal(lo, tir.floordiv(i * 8, 4))
    lo, hi = bounds(tir.floormod(k, 4), {k: Range.make(8)})
    assert lo.value == 0 and hi.value == 3


def test_to_affine_rejects_nonlinear():
    i = Var("i")
    assert to_affine(i * i) is None
    assert to_affine(i * 3 - 2)[1] == -2


def test_match_buffer_accesses_map_to_source_region():
    A = decl_buffer((8, 8), "float32", "A")
    B = decl_buffer((8, 8), "float32", "B")
    sub_a = decl_buffer((4,), "float32", "sub_a")
    sub_b = decl_buffer((4,), "float32", "sub_b")
    vi, k = Var("vi"), Var("k")
    a_region = BufferRegion(A, (Range(vi, const(1)), Range(const(0), const(4))))
    b_region = BufferRegion(B, (Range(vi, const(1)), Range(const(4), const(4))))
    body = For(k, const(0), const(4), ForKind.SERIAL, sub_b.vstore([k], sub_a[k]))
    blk = Block(
        (_iv(vi, 8),),
        (),
        (),
        "copy",
        body,
        match_buffers=(tir.MatchBufferRegion(sub_a, a_region), tir.MatchBufferRegion(sub_b, b_region)),
    )
    reads, writes = get_block_access_region(blk)
    _check_region(reads[0], A, [(vi, 1), (0, 4)])
    _check_region(writes[0], B, [(vi, 1), (4, 4)])


def test_stencil_reads_merge_into_window():
    A = decl_buffer((10,), "float32", "A")
    B = decl_buffer((8,), "float32", "B")
    vi = Var("vi")
    value = A[vi - 1 + 1] + A[vi + 2] + tir.if_then_else(vi > 0, A[vi], const(0.0))
    reads, _ = get_block_access_region(_block("B", [_iv(vi, 8)], B.vstore([vi], value)))
    assert reads[0].region[0].extent.value == 3


def test_launched_thread_var_is_relaxed_over_its_extent():
    A = decl_buffer((4, 32), "float32", "A")
    tx = Var("tx")
    launch = tir.AttrStmt(
        IterVar(Range.make(32), tx, IterType.THREAD_INDEX, "threadIdx.x"),
        "thread_extent",
        const(32),
        tir.BufferStore(A, A[0, tx] + 1.0, (const(0), tx)),
    )
    reads, writes = get_block_access_region(Block((), (), (), "b", launch))
    assert [(r.min.value, r.extent.value) for r in reads[0].region] == [(0, 1), (0, 32)]
    assert [(r.min.value, r.extent.value) for r in writes[0].region] == [(0, 1), (0, 32)]
