"""cpu.Conv2d: convolutions against the unscheduled build over random shapes, strides, padding
and dilation; the register tile; epilogues; weight packing; grouped convolutions; depthwise
ones left to the other rules (and still right)."""

import dlight_programs as P
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc import dlight, te, tir, topi
from graphc.dlight.cpu.conv import ConvTile, conv_lanes, conv_tile, padded_channels
from graphc.dlight.cpu.matmul import PREPROC_ANNOTATION

RULE = dlight.cpu.Conv2d()


def conv_program(c, o, h, w, k, stride=1, pad=0, dilation=1, groups=1, epilogue=False):
    x = te.placeholder((1, c, h, w), name="x")
    wt = te.placeholder((o, c // groups, k, k), name="w")
    y = topi.nn.conv2d(x, wt, strides=stride, padding=pad, dilation=dilation, groups=groups)
    args = [x, wt]
    if epilogue:  # inference batch norm, residual add, ReLU
        scale, shift = te.placeholder((o,), name="scale"), te.placeholder((o,), name="shift")
        res = te.placeholder(y.shape, name="res")
        bn = te.compute(y.shape, lambda n, q, i, j: y(n, q, i, j) * scale(q) + shift(q), name="bn")
        y = te.compute(y.shape, lambda *i: te.max(bn(*i) + res(*i), 0.0), name="out")
        args += [scale, shift, res]
    return te.create_prim_func([*args, y])



def _apply(func, target=P.AVX512):
    sch = RULE.apply(func, target, False)
    assert isinstance(sch, tir.Schedule)
    return sch


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    c=st.integers(1, 20),
    o=st.sampled_from([16, 32, 48, 64]),
    h=st.integers(3, 17),
    w=st.integers(3, 17),
    k=st.sampled_from([1, 2, 3, 5]),
    stride=st.integers(1, 3),
    pad=st.integers(0, 2),
    dilation=st.integers(1, 2),
    epilogue=st.booleans(),
)
def test_random_convolutions_match_the_unscheduled_build(c, o, h, w, k, stride, pad, dilation, epilogue):
    if (min(h, w) + 2 * pad - dilation * (k - 1) - 1) // stride + 1 < 1:
        return  # no output
    func = conv_program(c, o, h, w, k, stride, pad, dilation, epilogue=epilogue)
    P.check_against_unscheduled(func, _apply(func).mod)


def test_resnet_layers_on_avx2_and_avx512():
    for shape in [(64, 64, 14, 14, 3, 1, 1), (32, 64, 16, 16, 1, 2, 0), (3, 16, 23, 23, 7, 2, 3)]:
        func = conv_program(*shape, epilogue=True)
        for target in (P.AVX2, P.AVX512):
            P.check_against_unscheduled(func, _apply(func, target).mod)


def test_register_tile_covers_rows_and_channel_vectors():
    assert conv_tile(56, 64, 16, 32) == ConvTile(4, 4, 16)
    assert conv_tile(7, 512, 16, 32) == ConvTile(7, 2, 16)  # a 7-pixel row: 7 x 32 channels
    assert conv_tile(13, 48, 16, 32) == ConvTile(13, 1, 16)  # a prime width: the whole row
    # at most 21 accumulators for part of a row: 11 x 2 vectors (22) at 55 pixels and 6 x 4 (24) at 24
    # ran slower; 24 for a whole row
    assert conv_tile(55, 64, 16, 32) == ConvTile(5, 4, 16) and conv_tile(24, 64, 16, 32) == ConvTile(4, 4, 16)
    assert conv_tile(7, 96, 16, 32) == ConvTile(7, 3, 16)  # 21: as fast as 7 x 2
    assert conv_tile(6, 256, 16, 32) == ConvTile(6, 4, 16)
    assert conv_tile(12, 384, 16, 32) == ConvTile(12, 2, 16)
    assert conv_tile(56, 24, 16, 32) is None  # 24 channels are not whole vectors
    sch = _apply(conv_program(16, 64, 9, 14, 3, pad=1, epilogue=True))
    assert P.loop_kinds(sch, "conv2d_update")[-3:] == ["unroll", "unroll", "vectorized"]
    assert [int(e) for e in P.loop_extents(sch, "conv2d_update")[-3:]] == [7, 2, 16]
    # the padded input stays materialized; the epilogue runs on each tile from the accumulators
    assert "pad_temp" in [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_block("root"))]
    out = sch.get(sch.get_block("out"))
    assert any(r.buffer.scope == "local" for r in out.reads)


def test_weight_packing_is_marked_for_the_layout_rewrite_when_layout_free():
    func = conv_program(8, 32, 8, 8, 3, pad=1)
    pack = sch_pack = _apply(func.with_attr("layout_free_buffers", [1]))
    block = sch_pack.get(sch_pack.get_block("w_global"))
    assert block.annotations.get(PREPROC_ANNOTATION)
    assert [int(d) for d in block.writes[0].buffer.shape] == [1, 8, 3, 3, 32]  # [O/NR, C, KH, KW, NR]
    assert PREPROC_ANNOTATION not in _apply(func).get(pack.get_block("w_global")).annotations


def test_grouped_convolutions_with_whole_vectors_per_group():
    for groups, c, o, stride in [(2, 16, 32, 1), (4, 12, 64, 2)]:  # 16 output channels per group
        func = conv_program(c, o, 11, 12, 3, stride, pad=1, groups=groups, epilogue=True)
        sch = _apply(func)
        assert [int(e) for e in P.loop_extents(sch, "conv2d_update")[-2:]] == [1, 16]  # one group's panel
        P.check_against_unscheduled(func, sch.mod)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    groups=st.sampled_from([1, 2, 3, 4]),
    c_per_group=st.integers(1, 7),
    o_per_group=st.sampled_from([4, 8, 12, 24, 40, 48, 64, 96]),
    h=st.integers(3, 13),
    w=st.integers(3, 13),
    k=st.sampled_from([1, 3]),
    stride=st.integers(1, 2),
    pad=st.integers(0, 1),
    epilogue=st.booleans(),
)
def test_grouped_and_half_vector_convolutions_match_the_unscheduled_build(
    groups, c_per_group, o_per_group, h, w, k, stride, pad, epilogue
):
    # channels (per group) that are not whole 16-lane vectors take 8 or 4 lanes; a group holding
    # several panels reads its input at the group index, which must stay a broadcast
    if (min(h, w) + 2 * pad - k) // stride + 1 < 1:
        return
    func = conv_program(groups * c_per_group, groups * o_per_group, h, w, k, stride, pad, groups=groups,
                        epilogue=epilogue)  # fmt: skip
    P.check_against_unscheduled(func, _apply(func).mod)


def test_half_vectors_and_the_group_index_of_a_group_of_panels():
    assert conv_lanes(1000, 16) == 8 and conv_lanes(68, 16) == 4 and conv_lanes(64, 8) == 8
    sch = _apply(conv_program(8, 40, 13, 13, 1))  # 40 channels: 5 x 8 lanes (padding would add a fifth)
    assert P.loop_kinds(sch, "conv2d_update")[-1] == "vectorized"
    assert int(P.loop_extents(sch, "conv2d_update")[-1]) == 8
    func = conv_program(384, 384, 12, 12, 3, pad=1, groups=2)  # 192 channels a group: 3 panels of 64
    lowered = graphc.lower(_apply(func).mod).script()
    assert "// 192" not in lowered  # the input's group is the panel's, not a per-lane gather
    P.check_against_unscheduled(func, _apply(func).mod)


def test_depthwise_and_narrow_groups_are_left_to_the_other_rules():
    for groups, c, o in [(4, 16, 8), (16, 16, 16)]:  # 2 channels per group, depthwise
        func = conv_program(c, o, 12, 12, 3, pad=1, groups=groups)
        assert RULE.apply(func, P.AVX512, False) is None
        with graphc.target.Target("llvm"):
            P.check_against_unscheduled(func, dlight.default_schedule()(graphc.IRModule({"main": func})))


def test_declines_matmuls_and_is_in_the_cpu_defaults():
    assert RULE.apply(P.matmul()[0], P.AVX512, False) is None
    assert "Conv2d" in [r.name for r in dlight.default_rules("llvm")]


def test_output_channels_padded_to_whole_vectors():
    # squeezenet's last convolution: 1000 channels computed as 1008 (63 full vectors), not 125 x 8
    assert padded_channels_of(1000, 16) == 1008 and padded_channels_of(40, 16) is None
    assert padded_channels_of(72, 16) == 80 and padded_channels_of(64, 16) is None
    func = conv_program(32, 1000, 13, 13, 1, epilogue=True)
    sch = _apply(func.with_attr("layout_free_buffers", [1]))
    assert int(P.loop_extents(sch, "conv2d_update")[-1]) == 16
    pack = sch.get(sch.get_block("w_pad"))  # the zero-padding copy is the packing, done once
    assert pack.annotations.get(PREPROC_ANNOTATION)
    shape = [int(d) for d in pack.writes[0].buffer.shape]
    assert shape[1:4] == [32, 1, 1] and shape[0] * shape[4] == 1008
    P.check_against_unscheduled(func, sch.mod)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    c=st.integers(1, 12),
    o=st.sampled_from([72, 100, 130, 146, 200]),
    h=st.integers(3, 15),
    w=st.integers(3, 15),
    k=st.sampled_from([1, 2, 3]),
    stride=st.integers(1, 2),
    pad=st.integers(0, 2),
    dilation=st.integers(1, 2),
    epilogue=st.booleans(),
    target=st.sampled_from([P.AVX512, P.AVX2]),
)
def test_padded_output_channels_match_the_unscheduled_build(c, o, h, w, k, stride, pad, dilation, epilogue,
                                                             target):
    if (min(h, w) + 2 * pad - dilation * (k - 1) - 1) // stride + 1 < 1:
        return  # no output
    func = conv_program(c, o, h, w, k, stride, pad, dilation, epilogue=epilogue)
    P.check_against_unscheduled(func, _apply(func, target).mod)


def padded_channels_of(o, lanes):
    func = conv_program(4, o, 5, 5, 1)
    block = tir.Schedule(func).get(tir.Schedule(func).get_block("conv2d"))
    return padded_channels(block, block.iter_vars[1].var, lanes)
