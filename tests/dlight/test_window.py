"""cpu.Window: depthwise and grouped convolutions and pooling against the unscheduled build and
PyTorch over random (odd, prime) sizes, strides, padding and groups; what it declines."""

import dlight_programs as P
import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc import dlight, te, tir, topi
from graphc.dlight.cpu.window import row_vector

RULE = dlight.cpu.Window()


def conv_program(c, mult, h, w, k, stride=1, pad=0, groups=None, epilogue=False):
    groups = groups or c
    x = te.placeholder((1, c, h, w), name="x")
    wt = te.placeholder((groups * mult, c // groups, k, k), name="w")
    y = topi.nn.conv2d(x, wt, strides=stride, padding=pad, groups=groups)
    args = [x, wt]
    if epilogue:  # inference batch norm and ReLU6, as MobileNet's
        scale = te.placeholder((groups * mult,), name="scale")
        bn = te.compute(y.shape, lambda n, q, i, j: y(n, q, i, j) * scale(q), name="bn")
        y = te.compute(y.shape, lambda *i: te.min(te.max(bn(*i), 0.0), 6.0), name="out")
        args.append(scale)
    return te.create_prim_func([*args, y])


def run(mod_or_func, arrays, out_shape):
    out = np.zeros(out_shape, "float32")
    graphc.build(mod_or_func)["main"](*arrays, out)
    return out


def inputs(func):
    return [P.RNG.standard_normal([int(d) for d in func.buffer_map[p].shape]).astype("float32")
            for p in func.params[:-1]]


def out_shape(func):
    return [int(d) for d in func.buffer_map[func.params[-1]].shape]


def check(func, target=P.AVX512):
    sch = RULE.apply(func, target, False)
    assert isinstance(sch, tir.Schedule)
    arrays = inputs(func)
    want = run(func, arrays, out_shape(func))
    np.testing.assert_allclose(run(sch.mod, arrays, out_shape(func)), want, rtol=1e-5, atol=1e-5)
    return sch, arrays


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    c=st.sampled_from([1, 3, 8, 13]),
    mult=st.sampled_from([1, 2]),
    h=st.integers(4, 19),
    w=st.integers(4, 37),
    k=st.sampled_from([1, 3, 5]),
    stride_h=st.integers(1, 2),
    pad=st.integers(0, 2),
    epilogue=st.booleans(),
)
def test_random_depthwise_convolutions_match_the_unscheduled_build_and_torch(c, mult, h, w, k, stride_h, pad,
                                                                           epilogue):
    if min(h, w) + 2 * pad - k + 1 < 4:
        return  # rows too short to vectorize: declined (below)
    x = te.placeholder((1, c, h, w), name="x")
    wt = te.placeholder((c * mult, 1, k, k), name="w")
    y = topi.nn.conv2d(x, wt, strides=(stride_h, 1), padding=pad, groups=c)
    func = te.create_prim_func([x, wt, y])
    sch, arrays = check(func)
    want = torch.nn.functional.conv2d(torch.from_numpy(arrays[0]), torch.from_numpy(arrays[1]),
                                      stride=(stride_h, 1), padding=pad, groups=c).numpy()
    np.testing.assert_allclose(run(sch.mod, arrays, out_shape(func)), want, rtol=1e-4, atol=1e-4)
    if epilogue:
        check(conv_program(c, mult, h, w, k, 1, pad, epilogue=True))


def test_depthwise_row_is_vectorized_with_its_window_outside_and_rows_parallel():
    sch, _ = check(conv_program(32, 1, 14, 56, 3, pad=1, epilogue=True))
    kinds = [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block("conv2d_update"))]
    assert kinds[0] == "parallel" and kinds[-1] == "vectorized" and kinds.count("vectorized") == 1
    assert int(P.loop_extents(sch, "conv2d_update")[-1]) == 8  # 56 = 7 vectors of 8


def test_grouped_convolutions_with_narrow_groups_and_avx2():
    for groups, c, o in [(4, 16, 32), (3, 9, 6)]:  # 4 and 3 input channels per group
        func = conv_program(c, o // groups, 11, 23, 3, pad=1, groups=groups)
        for target in (P.AVX2, P.AVX512):
            check(func, target)


def test_pooling_with_unit_stride():
    x = te.placeholder((1, 7, 13, 29), name="x")
    for kind in ("max", "avg"):
        y = topi.nn.pool2d(x, kind, pool_size=3, strides=1, padding=1, count_include_pad=kind == "avg")
        func = te.create_prim_func([x, y])
        sch, arrays = check(func)
        torch_pool = torch.nn.functional.max_pool2d if kind == "max" else torch.nn.functional.avg_pool2d
        want = torch_pool(torch.from_numpy(arrays[0]), 3, 1, 1).numpy()
        np.testing.assert_allclose(run(sch.mod, arrays, out_shape(func)), want, rtol=1e-5, atol=1e-5)


def test_declines_strided_rows_short_rows_matmuls_and_row_sums():
    strided = conv_program(8, 1, 16, 16, 3, stride=2, pad=1)  # a stride-2 row would gather
    assert RULE.apply(strided, P.AVX512, False) is None
    assert RULE.apply(conv_program(8, 1, 3, 3, 1), P.AVX512, False) is None  # 3 pixels a row
    assert RULE.apply(P.matmul()[0], P.AVX512, False) is None
    A = te.placeholder((64, 100), name="A")
    r = te.reduce_axis((0, 100), "r")
    assert RULE.apply(te.create_prim_func([A, te.compute((64,), lambda i: te.sum(A[i, r], axis=r))]),
                      P.AVX512, False) is None


def test_row_vector_lengths():
    assert row_vector(56, 16) == (8, False) and row_vector(112, 16) == (16, False)
    assert row_vector(7, 16) == (7, False) and row_vector(37, 16) == (16, True)
    assert row_vector(3, 16) is None


def test_in_the_cpu_defaults_before_reduction():
    names = [r.name for r in dlight.default_rules("llvm")]
    assert names.index("Conv2d") < names.index("Window") < names.index("Reduction")
