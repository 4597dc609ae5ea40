"""cpu.Depthwise: depthwise convolutions against the unscheduled build over random channel
counts, map sizes (odd, prime), kernels, strides, padding, dilation and channel multipliers;
the tile; the padded plane; cpu.Window handing them over."""

import dlight_programs as P
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc import dlight, te, tir, topi
from graphc.dlight.cpu.depthwise import Depthwise, RowTile, row_tile

RULE = Depthwise()


def depthwise_program(c, h, w, k=3, stride=1, pad=1, dilation=1, multiplier=1, epilogue=False):
    x = te.placeholder((1, c, h, w), name="x")
    wt = te.placeholder((c * multiplier, 1, k, k), name="w")
    y = topi.nn.conv2d(x, wt, strides=stride, padding=pad, dilation=dilation, groups=c)
    args = [x, wt]
    if epilogue:  # batch norm as subtract/multiply/add, ReLU
        o = c * multiplier
        mean, scale = te.placeholder((o, 1, 1), name="mean"), te.placeholder((o, 1, 1), name="scale")
        bn = te.compute(y.shape, lambda n, q, i, j: (y(n, q, i, j) - mean(q, 0, 0)) * scale(q, 0, 0),
                        name="bn")
        y = te.compute(y.shape, lambda *i: te.max(bn(*i), 0.0), name="out")
        args += [mean, scale]
    return te.create_prim_func([*args, y])



@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    c=st.integers(1, 9),
    h=st.integers(2, 19),
    w=st.integers(2, 19),
    k=st.sampled_from([1, 2, 3, 5]),
    stride=st.integers(1, 3),
    pad=st.integers(0, 2),
    dilation=st.integers(1, 2),
    multiplier=st.sampled_from([1, 1, 2]),
    epilogue=st.booleans(),
    avx2=st.booleans(),
)
def test_random_depthwise_convolutions_match_the_unscheduled_build(
    c, h, w, k, stride, pad, dilation, multiplier, epilogue, avx2
):
    if (min(h, w) + 2 * pad - dilation * (k - 1) - 1) // stride + 1 < 1:
        return  # no output
    func = depthwise_program(c, h, w, k, stride, pad, dilation, multiplier, epilogue)
    sch = RULE.apply(func, P.AVX2 if avx2 else P.AVX512, False)
    if sch is None:  # no vector of 4 pixels divides the output row: cpu.Window's
        return
    P.check_against_unscheduled(func, sch.mod, atol=1e-5)


def test_shufflenet_layers_keep_a_channel_plane_together():
    for c, h, stride in [(136, 28, 1), (272, 14, 1), (544, 7, 1), (112, 56, 2), (272, 28, 2)]:
        func = depthwise_program(c, h, h, stride=stride, epilogue=True)
        sch = RULE.apply(func, P.AVX512, False)
        assert isinstance(sch, tir.Schedule), (c, h, stride)
        assert P.loop_kinds(sch, "conv2d_update")[-1] == "vectorized"
        # the padded plane is a channel's, local; the epilogue reads the accumulators
        pad = sch.get(sch.get_block("pad_temp"))
        assert pad.writes[0].buffer.scope == "local"
        assert any(r.buffer.scope == "local" for r in sch.get(sch.get_block("out")).reads)
        P.check_against_unscheduled(func, sch.mod, atol=1e-5)


def test_stride_two_reads_a_deinterleaved_plane_contiguously():
    func = depthwise_program(16, 28, 28, stride=2, epilogue=True)
    sch = RULE.apply(func, P.AVX512, False)
    pad = sch.get(sch.get_block("pad_temp")).writes[0].buffer
    assert len(pad.shape) == 5  # [n, c, row, column % 2, column // 2]
    lowered = graphc.lower(sch.mod).script()
    assert "% 2" not in lowered.split("conv2d_local_1[")[-1]  # the reads simplified to plain offsets
    P.check_against_unscheduled(func, sch.mod, atol=1e-5)


def test_the_tile_holds_whole_rows_in_vectors_dividing_them():
    assert row_tile(28, 28, 16) == RowTile(4, 28, 14)
    assert row_tile(7, 7, 16) == RowTile(7, 7, 7)
    assert row_tile(112, 112, 16) == RowTile(1, 112, 16)  # 7 vectors: one row
    assert row_tile(13, 13, 16) == RowTile(1, 13, 13)  # a prime row shorter than the lanes
    assert row_tile(5, 34, 16).v == 2  # 34 = 2 x 17: left to cpu.Window
    assert RULE.apply(depthwise_program(4, 34, 34, pad=1), P.AVX512, False) is None
    # wide stride-2 planes (a scalar deinterleaving copy) and wider strides: cpu.Reduction's gathers
    assert RULE.apply(depthwise_program(8, 112, 112, stride=2), P.AVX512, False) is None
    assert RULE.apply(depthwise_program(8, 20, 20, stride=3), P.AVX512, False) is None


def test_in_the_defaults_before_window_and_declines_pooling_and_grouped():
    names = [r.name for r in dlight.default_rules("llvm")]
    assert names.index("Conv2d") < names.index("Depthwise") < names.index("Window")
    x = te.placeholder((1, 16, 12, 12), name="x")
    pool = te.create_prim_func([x, topi.nn.pool2d(x, "max", pool_size=3, strides=1, padding=1)])
    assert RULE.apply(pool, P.AVX512, False) is None  # no weight
    grouped = te.placeholder((16, 4, 3, 3), name="w")
    conv = te.create_prim_func([x, grouped, topi.nn.conv2d(x, grouped, padding=1, groups=4)])
    assert RULE.apply(conv, P.AVX512, False) is None  # 4 channels a group
    with graphc.target.Target("llvm"):
        func = depthwise_program(32, 14, 14, stride=2, epilogue=True)
        mod = dlight.default_schedule()(graphc.IRModule({"main": func}))
        assert mod["main"].attrs["dlight.rule"] == "Depthwise"
        P.check_against_unscheduled(func, mod, atol=1e-5)
