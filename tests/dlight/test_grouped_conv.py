"""cpu.GroupedConv: grouped 1x1 convolutions as per-group GEMMs over the pixels, against the
unscheduled build over random groups, channel counts (odd, prime) and map sizes; the tile; the
weight packing; what it leaves to cpu.Conv2d."""

import dlight_programs as P
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphc import dlight, te, tir, topi
from graphc.dlight.cpu.grouped_conv import GroupedConv, PixelTile, pixel_tile
from graphc.dlight.cpu.matmul import PREPROC_ANNOTATION

RULE = GroupedConv()


def grouped_program(groups, c_per_group, o_per_group, h, w, k=1, stride=1, pad=0, epilogue=False):
    x = te.placeholder((1, groups * c_per_group, h, w), name="x")
    wt = te.placeholder((groups * o_per_group, c_per_group, k, k), name="w")
    y = topi.nn.conv2d(x, wt, strides=stride, padding=pad, groups=groups)
    args = [x, wt]
    if epilogue:  # ShuffleNet's: batch norm as subtract/multiply/add, residual add, ReLU
        o = groups * o_per_group
        mean, scale = te.placeholder((o, 1, 1), name="mean"), te.placeholder((o, 1, 1), name="scale")
        res = te.placeholder(y.shape, name="res")
        bn = te.compute(y.shape, lambda n, q, i, j: (y(n, q, i, j) - mean(q, 0, 0)) * scale(q, 0, 0),
                        name="bn")
        y = te.compute(y.shape, lambda *i: te.max(bn(*i) + res(*i), 0.0), name="out")
        args += [mean, scale, res]
    return te.create_prim_func([*args, y])



@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    groups=st.sampled_from([2, 3, 4]),
    c_per_group=st.integers(1, 13),
    o_per_group=st.sampled_from([5, 6, 7, 12, 17, 28, 34]),
    h=st.integers(1, 15),
    w=st.integers(1, 15),
    epilogue=st.booleans(),
    avx2=st.booleans(),
)
def test_random_grouped_pointwise_convolutions_match_the_unscheduled_build(
    groups, c_per_group, o_per_group, h, w, epilogue, avx2
):
    func = grouped_program(groups, c_per_group, o_per_group, h, w, epilogue=epilogue)
    sch = RULE.apply(func, P.AVX2 if avx2 else P.AVX512, False)
    if sch is None:  # no tile of 4-pixel vectors, or channel vectors as good
        return
    P.check_against_unscheduled(func, sch.mod)


def test_shufflenet_layers_vectorize_the_pixels():
    for shape in [(4, 34, 34, 28, 28), (4, 68, 68, 14, 14), (4, 6, 28, 56, 56), (3, 60, 60, 14, 14),
                  (4, 136, 136, 7, 7)]:
        func = grouped_program(*shape, epilogue=True)
        for target in (P.AVX2, P.AVX512):
            sch = RULE.apply(func, target, False)
            if target is P.AVX2 and shape[2] % 8 == 0:
                assert sch is None  # 136 channels are whole 8-lane vectors: cpu.Conv2d's
                continue
            assert isinstance(sch, tir.Schedule), (shape, target)
            assert P.loop_kinds(sch, "conv2d_update")[-2:] == ["unroll", "vectorized"]
            assert P.loop_kinds(sch, "conv2d_update")[0] == "parallel"
            # the epilogue runs on each tile from the accumulators
            assert any(r.buffer.scope == "local" for r in sch.get(sch.get_block("out")).reads)
            P.check_against_unscheduled(func, sch.mod)


def test_the_tile_minimises_vector_operations_per_multiply_add():
    # many channels a tile: the input's rows, streamed from L2, are re-read once per MR channels
    assert pixel_tile(68, 14, 14, 16, 32) == PixelTile(mr=4, rows=2, cols=14, v=14)
    assert pixel_tile(34, 28, 28, 16, 32) == PixelTile(mr=17, rows=1, cols=14, v=14)
    assert PixelTile(4, 2, 14, 14).cost() == 1 / 14  # FMA-bound: one vector op per 14 pixels
    tile = pixel_tile(28, 56, 56, 8, 16)  # AVX2: 12 accumulators at most, 8 lanes
    assert tile.mr * tile.vectors <= 12 and tile.cost() <= 1 / 7
    # a small plane is one flat vector loop: 7x7 = 3 x 16 + 1, 3x3 one 9-lane vector
    assert pixel_tile(136, 7, 7, 16, 32) == PixelTile(4, 7, 7, 49, 16)
    assert pixel_tile(7, 3, 3, 16, 32) == PixelTile(7, 3, 3, 9, 16)


def test_weight_packing_is_marked_for_the_layout_rewrite_when_layout_free():
    func = grouped_program(4, 34, 34, 28, 28)
    sch = RULE.apply(func.with_attr("layout_free_buffers", [1]), P.AVX512, False)
    block = sch.get(sch.get_block("w_global"))
    assert block.annotations.get(PREPROC_ANNOTATION)
    assert [int(d) for d in block.writes[0].buffer.shape] == [8, 34, 1, 1, 17]  # [O/MR, C, 1, 1, MR]
    plain = RULE.apply(func, P.AVX512, False)
    assert PREPROC_ANNOTATION not in plain.get(plain.get_block("w_global")).annotations


def test_leaves_strided_padded_dense_and_whole_vector_convolutions_to_conv2d():
    assert RULE.apply(grouped_program(4, 34, 34, 28, 28, k=3, pad=1), P.AVX512, False) is None
    assert RULE.apply(grouped_program(4, 34, 34, 28, 28, stride=2), P.AVX512, False) is None
    assert RULE.apply(grouped_program(1, 34, 34, 28, 28), P.AVX512, False) is None  # not grouped
    assert RULE.apply(grouped_program(4, 16, 32, 28, 28), P.AVX512, False) is None  # whole vectors
    assert RULE.apply(grouped_program(34, 1, 1, 28, 28), P.AVX512, False) is None  # depthwise
    # cpu.Conv2d hands the grouped pointwise ones over
    func = grouped_program(4, 68, 68, 14, 14, epilogue=True)
    sch = dlight.cpu.Conv2d().apply(func, P.AVX512, False)
    assert int(P.loop_extents(sch, "conv2d_update")[-1]) == 14  # a row of pixels, not channel lanes
    P.check_against_unscheduled(func, sch.mod)
