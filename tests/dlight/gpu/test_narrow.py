"""int64 indices (what Relax shapes give) become int32 under the GPU rules where that is exact
(narrow.py): the kernels of full-size ViT attention and a ResNet-50 convolution no longer spill,
and narrowed functions run on PoCL matching their unscheduled int64 CPU build."""

import numpy as np
from gpu_check import check_cubins, run_both, schedule

from graphc import IRModule, te, tir, topi
from graphc.dlight import gpu
from graphc.dlight.gpu.narrow import narrow_indices
from graphc.tir.schedule.state import walk

ALL = [gpu.Matmul(), gpu.Conv2d(), gpu.GEMV(), gpu.LowBatchGEMV(), gpu.Reduction(), gpu.GeneralReduction(),
       gpu.Transpose(), gpu.Fallback()]


def _i64(*dims):
    return tuple(tir.const(d, "int64") if isinstance(d, int) else d for d in dims)


def _loop_dtypes(func):
    return {s.loop_var.dtype for s in walk(func.body) if isinstance(s, tir.For)}


def _attention(seq, heads=12, dim=64):
    """Scores, softmax and weighted sum as Relax legalizes attention (int64 shapes)."""
    shape = _i64(1, seq, heads, dim)
    Q, K, V = (te.placeholder(shape, name=n) for n in "QKV")
    d = te.reduce_axis(_i64(0, dim), "d")
    j1, j2, j3 = (te.reduce_axis(_i64(0, seq), n) for n in ("j1", "j2", "j3"))
    S = te.compute(_i64(1, heads, seq, seq), lambda b, h, i, j: te.sum(Q[b, i, h, d] * K[b, j, h, d], axis=d),
                   name="score")
    M = te.compute(_i64(1, heads, seq), lambda b, h, i: te.max(S[b, h, i, j1], axis=j1), name="row_max")
    E = te.compute(_i64(1, heads, seq, seq), lambda b, h, i, j: te.exp(S[b, h, i, j] - M[b, h, i]),
                   name="exp")
    Z = te.compute(_i64(1, heads, seq), lambda b, h, i: te.sum(E[b, h, i, j2], axis=j2), name="row_sum")
    out = te.compute(shape, lambda b, i, h, e: te.sum(E[b, h, i, j3] / Z[b, h, i] * V[b, j3, h, e], axis=j3),
                     name="out")
    return te.create_prim_func([Q, K, V, out])


def _conv(c, size, o, stride):
    """A convolution with an inference batch norm and ReLU (ResNet's, int64 shapes)."""
    x = te.placeholder(_i64(1, c, size, size), name="x")
    w = te.placeholder(_i64(o, c, 3, 3), name="w")
    mean, scale, gamma, beta = (te.placeholder(_i64(1, o, 1, 1), name=n)
                                for n in ("mean", "scale", "gamma", "beta"))
    y = topi.nn.conv2d(x, w, strides=stride, padding=1)
    z = tir.const(0, "int64")

    def bn_relu(a, q, i, j):
        norm = (y[a, q, i, j] - mean[a, q, z, z]) * scale[a, q, z, z]
        return te.max(norm * gamma[a, q, z, z] + beta[a, q, z, z], 0.0)

    out = te.compute(y.shape, bn_relu, name="relu")
    return te.create_prim_func([x, w, mean, scale, gamma, beta, out])


def test_static_int64_functions_get_int32_indices():
    func = _conv(4, 10, 8, 1)
    assert "int64" in _loop_dtypes(func)
    narrowed = narrow_indices(func)
    assert _loop_dtypes(narrowed) == {"int32"}
    assert all(s.dtype == "int32" for b in narrowed.buffer_map.values() for s in b.shape)
    scheduled = schedule(func, ALL)
    assert _loop_dtypes(scheduled) == {"int32"}


def test_symbolic_and_huge_shapes_stay_int64():
    n = tir.Var("n", "int64")
    A = te.placeholder((n, tir.const(8, "int64")), name="A")
    func = te.create_prim_func([A, te.compute(A.shape, lambda i, j: A[i, j] + 1.0, name="B")])
    assert narrow_indices(func) is func  # n may be anything
    big = te.placeholder(_i64(1 << 16, 1 << 16), name="big")  # 2**32 elements
    func = te.create_prim_func([big, te.compute(big.shape, lambda i, j: big[i, j] * 2.0, name="C")])
    assert narrow_indices(func) is func


def test_an_index_used_as_data_keeps_its_type():
    """An argmax-like block stores its int64 loop index: the value is cast back to int64."""
    A = te.placeholder(_i64(6, 40), name="A")
    B = te.compute(_i64(6, 40), lambda i, j: tir.Cast("int64", A[i, j] > 0.0) * (i * _i64(40)[0] + j),
                   name="B")
    func = te.create_prim_func([A, B])
    assert narrow_indices(func) is not func
    (cpu,), (dev,) = run_both(func, [gpu.Fallback()], [1])
    assert dev.dtype == np.int64
    np.testing.assert_array_equal(dev, cpu)


def test_narrowed_kernels_match_the_int64_cpu_build():
    for func, out in ((_conv(8, 9, 16, 2), 6), (_attention(20, heads=2, dim=16), 3)):
        (cpu,), (dev,) = run_both(func, ALL, [out])
        np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)


def test_vit_attention_and_resnet_convolution_do_not_spill():
    """The two kernels that spilled 8 bytes at sm_80 with int64 indices: ViT-base's attention
    (197 tokens) and ResNet-50's stride-2 3x3 convolution down to 7x7."""
    funcs = {"attention": _attention(197), "conv": _conv(512, 14, 512, 2)}
    mod = IRModule({name: schedule(f, ALL, "cuda").with_attr("global_symbol", name)
                    for name, f in funcs.items()})
    check_cubins(mod, archs=("sm_80",))
