"""dlight.gpu rules on synthetic PrimFuncs: each applies where it should (symbolic shapes too),
declines elsewhere, and its schedule runs on PoCL (OpenCL) matching the unscheduled CPU build."""

import numpy as np
import pytest
from gpu_check import check_cubins, run_both, schedule

from graphc import IRModule, te, tir
from graphc.dlight import default_rules, gpu
from graphc.target import Target
from graphc.tir.schedule.state import walk

ALL = [gpu.Matmul(), gpu.GEMV(), gpu.Reduction(), gpu.GeneralReduction(), gpu.Fallback()]


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
        assert [r.name for r in default_rules(target)] == ["Matmul", "GEMV", "Reduction", "GeneralReduction",
                                                           "Fallback"]
    assert [r.name for r in default_rules("llvm")] == ["Attention", "Matmul", "Conv2d", "Window", "Reduction",
                                                       "Fallback"]


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


def test_matmul_and_reduction_kernels_compile_to_cubins_without_spills():
    funcs = {"dense": _dense(128, 768, 768), "bmm": _batch_matmul(12, 128, 64, 128),
             "softmax": _softmax(128, 512), "gemv": _dense(1, 768, 768)}
    mod = IRModule({name: schedule(f, ALL, "cuda").with_attr("global_symbol", name)
                    for name, f in funcs.items()})
    usage = check_cubins(mod)
    for info in usage.values():
        assert all(u["smem"] <= 48 * 1024 for u in info.values()), info
