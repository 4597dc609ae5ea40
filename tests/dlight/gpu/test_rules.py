"""dlight.gpu rules on synthetic PrimFuncs: each applies where it should (symbolic shapes too),
declines elsewhere, and its schedule runs on PoCL (OpenCL) matching the unscheduled CPU build."""

import numpy as np
import pytest
from gpu_check import check_cubins, run_both, schedule

from graphc import IRModule, te, tir
from graphc.dlight import default_rules, gpu
from graphc.target import Target
from graphc.tir.schedule.state import walk

ALL = [gpu.Matmul(), gpu.Conv2d(), gpu.GEMV(), gpu.LowBatchGEMV(), gpu.Reduction(), gpu.GeneralReduction(),
       gpu.Transpose(), gpu.Fallback()]


def taken_by(func, target="opencl"):
    """The name of the first default rule that schedules `func`."""
    for rule in default_rules(target):
        if rule.apply(func, Target(target), False) is not None:
            return rule.name
    return None


def _stmts(func, kind):
    return [s for s in walk(func.body) if isinstance(s, kind)]


def _bindings(func):
    loops = _stmts(func, tir.For)
    return {s.thread_binding.thread_tag for s in loops if s.kind == tir.ForKind.THREAD_BINDING}


def test_default_rules_follow_tvms_order_for_gpus():
    for target in ("cuda", "opencl"):
        assert [r.name for r in default_rules(target)] == ["Matmul", "Conv2d", "GEMV", "LowBatchGEMV",
                                                           "Reduction", "GeneralReduction", "Transpose",
                                                           "Fallback"]
    assert [r.name for r in default_rules("llvm")] == ["Attention", "Matmul", "Conv2d", "Depthwise", "Window",
                                                       "Reduction", "Fallback"]


def test_gpu_rules_decline_cpu_targets():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    func = te.create_prim_func([A, B])
    assert all(r.apply(func, Target("llvm"), False) is None for r in ALL)


# -- Fallback ---------------------------------------------------------------------------------

def test_fallback_elementwise_with_a_symbolic_dimension():
    n = tir.Var("n", "int32")
    A = te.placeholder((n, 37), name="A")
    B = te.compute((n, 37), lambda i, j: te.exp(A[i, j]) * 2.0, name="B")
    func = te.create_prim_func([A, B])
    assert taken_by(func) == "Fallback"
    scheduled = schedule(func, [gpu.Fallback()])
    assert {"blockIdx.x", "threadIdx.x"} <= _bindings(scheduled)
    (cpu,), (dev,) = run_both(func, [gpu.Fallback()], [1], shapes={0: (5, 37), 1: (5, 37)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-5)


def test_fallback_runs_a_full_reduction_in_one_thread():
    A = te.placeholder((300,), name="A")
    k = te.reduce_axis((0, 300), "k")
    S = te.compute((), lambda: te.max(A[k], axis=k), name="S")
    func = te.create_prim_func([A, S])
    (cpu,), (dev,) = run_both(func, [gpu.Fallback()], [1])
    np.testing.assert_allclose(dev, cpu)


def test_fallback_schedules_functions_without_blocks():
    """A hand-written loop nest (no blocks): the whole body runs in one thread."""
    n = 16
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i = tir.Var("i", "int32")
    body = tir.For(i, tir.const(0), tir.const(n), tir.ForKind.SERIAL,
                   tir.BufferStore(B, A[n - 1 - i] + tir.const(1.0, "float32"), (i,)))
    func = tir.PrimFunc([a, b], body, buffer_map={a: A, b: B})
    scheduled = schedule(func, [gpu.Fallback()])
    assert _bindings(scheduled) == {"blockIdx.x", "threadIdx.x"}
    (cpu,), (dev,) = run_both(func, [gpu.Fallback()], [1])
    np.testing.assert_allclose(dev, cpu)


def test_fallback_column_reduction_and_gather():
    A = te.placeholder((40, 24), name="A")
    idx = te.placeholder((7,), "int32", name="idx")
    k = te.reduce_axis((0, 40), "k")
    S = te.compute((24,), lambda j: te.sum(A[k, j], axis=k), name="S")
    G = te.compute((7, 24), lambda r, j: A[idx[r], j] + S[j], name="G")
    func = te.create_prim_func([A, idx, G])
    (cpu,), (dev,) = run_both(func, [gpu.Fallback()], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)  # sums in another order


# -- Reduction / GeneralReduction ----------------------------------------------------------------

def _row_mean(n, m=200):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    S = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="S")
    M = te.compute((n,), lambda i: S[i] / float(m), name="M")
    return te.create_prim_func([A, M])


@pytest.mark.parametrize("rows", [9, None])
def test_reduction_reduces_rows_across_threads(rows):
    n = rows if rows is not None else tir.Var("n", "int32")
    func = _row_mean(n)
    assert taken_by(func) == "Reduction"
    scheduled = schedule(func, [gpu.Reduction()])
    assert _bindings(scheduled) == {"blockIdx.x", "threadIdx.x"}
    assert any(b.scope == "local" for s in _stmts(scheduled, tir.Block) for b in s.alloc_buffers)
    shapes = None if rows else {0: (9, 200), 1: (9,)}
    (cpu,), (dev,) = run_both(func, [gpu.Reduction()], [1], shapes=shapes)
    np.testing.assert_allclose(dev, cpu, rtol=1e-5)


def test_reduction_declines_what_is_not_a_row_reduction():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[j, i], name="B")
    assert gpu.Reduction().apply(te.create_prim_func([A, B]), Target("opencl"), False) is None
    assert gpu.GeneralReduction().apply(_row_mean(8), Target("opencl"), False) is None


def _softmax(n, m):
    A = te.placeholder((n, m), name="A")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    mx = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="row_max")
    ex = te.compute((n, m), lambda i, j: te.exp(A[i, j] - mx[i]), name="exp")
    sm = te.compute((n,), lambda i: te.sum(ex[i, k2], axis=k2), name="row_sum")
    out = te.compute((n, m), lambda i, j: ex[i, j] / sm[i], name="out")
    return te.create_prim_func([A, out])


def _layer_norm(n, m, eps=1e-5):
    X = te.placeholder((n, 2, m), name="X")
    G = te.placeholder((m,), name="G")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    s1 = te.compute((n, 2, 1), lambda i, h, _: te.sum(X[i, h, k1], axis=k1), name="sum_x")
    s2 = te.compute((n, 2, 1), lambda i, h, _: te.sum(X[i, h, k2] * X[i, h, k2], axis=k2), name="sum_xx")

    def norm(i, h, j):
        mean = s1[i, h, 0] / float(m)
        return (X[i, h, j] - mean) * te.rsqrt(s2[i, h, 0] / float(m) - mean * mean + eps) * G[j]

    out = te.compute((n, 2, m), norm, name="out")
    return te.create_prim_func([X, G, out])


@pytest.mark.parametrize("rows", [19, None])
def test_general_reduction_softmax_in_one_kernel(rows):
    n = rows if rows is not None else tir.Var("n", "int32")
    func = _softmax(n, 200)
    assert taken_by(func) == "GeneralReduction"
    shapes = None if rows else {0: (5, 200), 1: (5, 200)}
    (cpu,), (dev,) = run_both(func, [gpu.GeneralReduction()], [1], shapes=shapes)
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-7)


def test_general_reduction_layer_norm_with_kept_dims():
    func = _layer_norm(3, 300)
    assert taken_by(func) == "GeneralReduction"
    (cpu,), (dev,) = run_both(func, [gpu.GeneralReduction()], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)


# -- Matmul / GEMV ---------------------------------------------------------------------------

def _dense(m, n=45, k=40):
    A = te.placeholder((m, k), name="A")
    W = te.placeholder((n, k), name="W")
    bias = te.placeholder((n,), name="bias")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * W[j, r], axis=r), name="C")
    D = te.compute((m, n), lambda i, j: te.max(C[i, j] + bias[j], 0.0), name="D")
    return te.create_prim_func([A, W, bias, D])


def _batch_matmul(b, m, n=45, k=40):
    A = te.placeholder((b, m, k), name="A")
    B = te.placeholder((b, k, n), name="B")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((b, m, n), lambda z, i, j: te.sum(A[z, i, r] * B[z, r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def test_matmul_tiles_dense_with_its_epilogue_through_shared_memory():
    func = _dense(70)
    assert taken_by(func) == "Matmul"
    scheduled = schedule(func, [gpu.Matmul()])
    scopes = {b.scope for s in _stmts(scheduled, tir.Block) for b in s.alloc_buffers}
    assert {"shared", "local"} <= scopes
    (cpu,), (dev,) = run_both(func, [gpu.Matmul()], [3])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def test_matmul_batch_with_a_symbolic_row_count():
    m = tir.Var("m", "int32")
    func = _batch_matmul(3, m)
    assert taken_by(func) == "Matmul"
    (cpu,), (dev,) = run_both(func, [gpu.Matmul()], [2], shapes={0: (3, 33, 40), 2: (3, 33, 45)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def test_gemv_takes_batch_one_linear_layers():
    func = _dense(1)
    assert gpu.Matmul().apply(func, Target("opencl"), False) is None
    assert taken_by(func) == "GEMV"
    (cpu,), (dev,) = run_both(func, [gpu.GEMV()], [3])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


# -- LowBatchGEMV --------------------------------------------------------------------------------

@pytest.mark.parametrize("epilogue", [True, False])
@pytest.mark.parametrize("rows", [2, 5, 16, None])
def test_low_batch_gemv_takes_a_few_rows(rows, epilogue):
    m = rows if rows is not None else tir.Var("m", "int32")
    func = _dense(m, 300, 200) if epilogue else _matmul_nt(m, 300, 200)
    if rows is not None:
        assert gpu.Matmul().apply(func, Target("opencl"), False) is None
        assert taken_by(func) == "LowBatchGEMV"
        scheduled = schedule(func, [gpu.LowBatchGEMV()])
        scopes = {b.scope for s in _stmts(scheduled, tir.Block) for b in s.alloc_buffers}
        assert scopes == ({"local"} if epilogue else set())  # the product's rows stay in the block
    else:  # a symbolic row count may be long: Matmul comes first in the default order
        assert taken_by(func) == "Matmul"
    out = 3 if epilogue else 2
    shapes = None if rows else {0: (5, 200), out: (5, 300)}
    (cpu,), (dev,) = run_both(func, [gpu.LowBatchGEMV()], [out], shapes=shapes)
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def test_low_batch_gemv_declines_long_rows_and_short_columns():
    for func in (_dense(17, 300, 200), _dense(4, 12, 200), _dense(1, 300, 200)):
        assert gpu.LowBatchGEMV().apply(func, Target("opencl"), False) is None
    assert taken_by(_dense(17, 300, 200)) == "Matmul"


def _matmul_nt(m, n, k):
    A = te.placeholder((m, k), name="A")
    W = te.placeholder((n, k), name="W")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * W[j, r], axis=r), name="C")
    return te.create_prim_func([A, W, C])


# -- Transpose -------------------------------------------------------------------------------------

def _transposes():
    n = tir.Var("n", "int32")
    A = te.placeholder((70, 100), name="A")
    yield te.create_prim_func([A, te.compute((100, 70), lambda i, j: A[j, i] * 2.0, name="B")]), None
    A = te.placeholder((n, 40, 64), name="A")
    B = te.compute((n, 64, 40), lambda z, i, j: A[z, j, i], name="B")
    yield te.create_prim_func([A, B]), {0: (3, 40, 64), 1: (3, 64, 40)}
    A = te.placeholder((2, 48, 3, 64), name="A")  # attention's [batch, seq, heads, dim] -> [b, h, d, s]
    B = te.compute((2, 3, 64, 48), lambda a, h, d, s: A[a, s, h, d] + 1.0, name="B")
    yield te.create_prim_func([A, B]), None


@pytest.mark.parametrize("case", range(3))
def test_transpose_stages_tiles_in_shared_memory(case):
    func, shapes = list(_transposes())[case]
    assert taken_by(func) == "Transpose"
    scheduled = schedule(func, [gpu.Transpose()])
    assert {b.scope for s in _stmts(scheduled, tir.Block) for b in s.alloc_buffers} == {"shared"}
    assert _bindings(scheduled) == {"blockIdx.x", "threadIdx.x", "threadIdx.y"}
    (cpu,), (dev,) = run_both(func, [gpu.Transpose()], [1], shapes=shapes)
    np.testing.assert_array_equal(dev, cpu)


def test_transpose_declines_copies_and_short_axes():
    A = te.placeholder((64, 64), name="A")
    copy = te.create_prim_func([A, te.compute((64, 64), lambda i, j: A[i, j] + 1.0, name="B")])
    C = te.placeholder((64, 3), name="C")
    short = te.create_prim_func([C, te.compute((3, 64), lambda i, j: C[j, i], name="D")])
    for func in (copy, short):
        assert gpu.Transpose().apply(func, Target("opencl"), False) is None
        assert taken_by(func) == "Fallback"


def test_matmul_and_reduction_kernels_compile_to_cubins_without_spills():
    funcs = {"dense": _dense(128, 768, 768), "bmm": _batch_matmul(12, 128, 64, 128),
             "softmax": _softmax(128, 512), "gemv": _dense(1, 768, 768), "low_batch": _dense(8, 768, 768),
             "transpose": list(_transposes())[2][0]}
    mod = IRModule({name: schedule(f, ALL, "cuda").with_attr("global_symbol", name)
                    for name, f in funcs.items()})
    usage = check_cubins(mod)
    for info in usage.values():
        assert all(u["smem"] <= 48 * 1024 for u in info.values()), info


# -- Conv2d ------------------------------------------------------------------------------------------

def _conv(n, c, size, o, k, stride, pad, groups, relu=True):
    from graphc import topi

    x = te.placeholder((n, c, size, size), name="x")
    w = te.placeholder((o, c // groups, k, k), name="w")
    b = te.placeholder((o,), name="b")
    y = topi.nn.conv2d(x, w, strides=stride, padding=pad, groups=groups)
    if not relu:
        return te.create_prim_func([x, w, y])
    out = te.compute(y.shape, lambda a, q, i, j: te.max(y[a, q, i, j] + b[q], 0.0), name="relu")
    return te.create_prim_func([x, w, b, out])


CONVS = {"3x3 padded": (1, 8, 14, 16, 3, 1, 1, 1), "strided grouped": (2, 8, 15, 12, 3, 2, 1, 2),
         "depthwise": (1, 16, 9, 16, 3, 1, 1, 16), "1x1": (1, 6, 8, 10, 1, 1, 0, 1),
         "7x7 stem": (1, 3, 16, 8, 7, 2, 3, 1)}


@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("case", sorted(CONVS))
def test_conv2d_register_tiles_with_the_epilogue(case, relu):
    func = _conv(*CONVS[case], relu=relu)
    assert taken_by(func) == "Conv2d"
    scheduled = schedule(func, [gpu.Conv2d()])
    assert {b.scope for s in _stmts(scheduled, tir.Block) for b in s.alloc_buffers} == {"local"}
    assert _bindings(scheduled) == {"blockIdx.x", "threadIdx.x", "threadIdx.y"}
    out = 3 if relu else 2
    (cpu,), (dev,) = run_both(func, [gpu.Conv2d()], [out])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def test_conv2d_with_a_symbolic_batch():
    from graphc import topi

    n = tir.Var("n", "int32")
    x = te.placeholder((n, 4, 10, 10), name="x")
    w = te.placeholder((8, 4, 3, 3), name="w")
    func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, padding=1)])
    assert taken_by(func) == "Conv2d"
    (cpu,), (dev,) = run_both(func, [gpu.Conv2d()], [2], shapes={0: (3, 4, 10, 10), 2: (3, 8, 10, 10)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def test_conv2d_leaves_matrix_products_and_pooling_alone():
    from graphc import topi

    x = te.placeholder((1, 8, 12, 12), name="x")
    pool = te.create_prim_func([x, topi.nn.pool(x, "max", 2, strides=2)])
    for func in (_dense(64), _dense(1), pool):
        assert gpu.Conv2d().apply(func, Target("opencl"), False) is None


def test_conv2d_kernels_compile_to_cubins_without_spills():
    funcs = {"conv3x3": _conv(1, 64, 56, 64, 3, 1, 1, 1), "stem": _conv(1, 3, 224, 64, 7, 2, 3, 1),
             "conv1x1_7": _conv(1, 512, 7, 2048, 1, 1, 0, 1), "depthwise": _conv(1, 32, 28, 32, 3, 1, 1, 32)}
    mod = IRModule({name: schedule(f, ALL, "cuda").with_attr("global_symbol", name)
                    for name, f in funcs.items()})
    assert all(f.attrs["dlight.rule"] == "Conv2d" for f in mod.functions.values()), mod
    usage = check_cubins(mod)
    for info in usage.values():
        assert all(u["smem"] <= 48 * 1024 for u in info.values()), info


# -- Matmul on several products (attention) --------------------------------------------------------

def _attention(batch, heads, seq, dim):
    """Scores, softmax and weighted sum in one function, laid out as the Relax `attention` op is
    ([batch, seq, heads, dim] in and out)."""
    Q = te.placeholder((batch, seq, heads, dim), name="Q")
    K = te.placeholder((batch, seq, heads, dim), name="K")
    V = te.placeholder((batch, seq, heads, dim), name="V")
    d, j1, j2, j3 = (te.reduce_axis((0, n), name) for n, name in ((dim, "d"), (seq, "j1"), (seq, "j2"),
                                                                    (seq, "j3")))
    S = te.compute((batch, heads, seq, seq), lambda b, h, i, j: te.sum(Q[b, i, h, d] * K[b, j, h, d], axis=d),
                   name="score")
    M = te.compute((batch, heads, seq), lambda b, h, i: te.max(S[b, h, i, j1], axis=j1), name="row_max")
    E = te.compute((batch, heads, seq, seq), lambda b, h, i, j: te.exp(S[b, h, i, j] - M[b, h, i]),
                   name="exp")
    Z = te.compute((batch, heads, seq), lambda b, h, i: te.sum(E[b, h, i, j2], axis=j2), name="row_sum")
    P = te.compute((batch, heads, seq, seq), lambda b, h, i, j: E[b, h, i, j] / Z[b, h, i], name="softmax")
    out = te.compute((batch, seq, heads, dim),
                   lambda b, i, h, e: te.sum(P[b, h, i, j3] * V[b, j3, h, e], axis=j3), name="out")
    return te.create_prim_func([Q, K, V, out])


@pytest.mark.parametrize("seq", [24, None])
def test_matmul_tiles_both_products_of_attention(seq):
    n = seq if seq is not None else tir.Var("n", "int32")
    func = _attention(1, 2, n, 16)
    assert taken_by(func) == "Matmul"
    scheduled = schedule(func, [gpu.Matmul()])
    assert sum(1 for s in _stmts(scheduled, tir.Block) for b in s.alloc_buffers if b.scope == "shared") == 4
    if seq is None:  # both of the scores' axes are symbolic: their row tiles go to blockIdx.y
        assert "blockIdx.y" in _bindings(scheduled)
    shapes = None if seq is not None else {k: (1, 20, 2, 16) for k in range(4)}
    (cpu,), (dev,) = run_both(func, [gpu.Matmul()], [3], shapes=shapes)
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-6)
    if seq is None:  # and a sequence the tiles do not divide, longer than one tile
        (cpu,), (dev,) = run_both(func, [gpu.Matmul()], [3], shapes={k: (1, 45, 2, 16) for k in range(4)})
        np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-6)


def test_attention_kernels_compile_to_cubins_without_spills():
    n = tir.Var("n", "int32")  # and over a symbolic sequence
    mod = IRModule({name: schedule(f, [gpu.Matmul()], "cuda").with_attr("global_symbol", name)
                    for name, f in (("attention", _attention(1, 12, 128, 64)),
                                    ("attention_n", _attention(1, 12, n, 64)))})
    usage = check_cubins(mod)
    for info in usage.values():
        # the staged tiles are one head wide (4 KiB, two copies: double-buffered), the register
        # tiles stay in registers, no whole product runs in one thread
        assert all(u["smem"] <= 2 * 4096 and not u["stack"] and u["registers"] < 128
                   for u in info.values()), info


def test_matmul_takes_larger_register_tiles_when_there_are_enough_blocks():
    func = _batch_matmul(3, 100, 90, 40)
    large = gpu.Matmul(gpu.MatmulConfig(large_min_blocks=1))
    scheduled = schedule(func, [large])
    local = [b for s in _stmts(scheduled, tir.Block) for b in s.alloc_buffers if b.scope == "local"]
    loops = [s for s in _stmts(scheduled, tir.For) if s.kind != tir.ForKind.THREAD_BINDING]
    assert local and any(int(lp.extent) == 4 for lp in loops)  # the 4 x 4 register tile
    (cpu,), (dev,) = run_both(func, [large], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)
    usage = check_cubins(IRModule({"bmm": schedule(_batch_matmul(16, 512, 512, 512), ALL, "cuda")
                                   .with_attr("global_symbol", "bmm")}))
    for info in usage.values():  # 16 x 8 x 8 blocks of 64 x 64: the large tiles (two copies), without spills
        assert all(u["smem"] == 2 * 4 * 16 * 128 for u in info.values()), info
