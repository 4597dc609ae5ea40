"""Hand-scheduled GPU kernels: run on OpenCL (PoCL where there is no GPU) against numpy, and
compiled by NVRTC to cubins for sm_80 and sm_90 without register spills."""

import gpu_programs as P
import numpy as np
import pytest

import graphc

RNG = np.random.default_rng(7)


def _normal(*shape):
    return RNG.standard_normal(shape).astype("float32")


def case_elementwise():
    a, b = _normal(29, 37), _normal(29, 37)
    return P.elementwise(), [a, b, np.zeros_like(a)], 2, np.maximum(a + b, 0)


def case_row_sum():
    a = _normal(37, 300)
    return P.row_sum(), [a, np.zeros(37, "float32")], 1, a.sum(axis=1)


def case_matmul():
    a, b = _normal(64, 40), _normal(40, 48)
    return P.matmul(), [a, b, np.zeros((64, 48), "float32")], 2, a @ b


def case_softmax():
    a = _normal(19, 200) * 3
    return P.softmax(), [a, np.zeros_like(a)], 1, P.softmax_ref(a)


def case_layer_norm():
    x, g, b = _normal(13, 300), _normal(300), _normal(300)
    return P.layer_norm(), [x, g, b, np.zeros_like(x)], 3, P.layer_norm_ref(x, g, b)


def case_transpose():
    a = _normal(50, 40)
    return P.transpose(), [a, np.zeros((40, 50), "float32")], 1, a.T


CASES = {name[5:]: fn for name, fn in dict(globals()).items() if name.startswith("case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_runs_on_opencl(name):
    mod, arrays, out, ref = CASES[name]()
    (result,) = P.run_opencl(mod, arrays, [out])
    np.testing.assert_allclose(result, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_to_cubins_without_spills(name):
    mod = CASES[name]()[0]
    usage = P.check_cubins(mod)
    assert all(u["registers"] > 0 for info in usage.values() for per in info.values() for u in per.values())


def test_symbolic_launch_sizes_are_computed_on_the_host():
    """One build of the elementwise kernel runs for every n: the grid comes from A's shape."""
    dev = P.opencl_device()
    lib = graphc.build(P.elementwise(), target="opencl")
    for n in (1, 5, 64):
        a, b = _normal(n, 37), _normal(n, 37)
        ta, tb = graphc.runtime.tensor(a, dev), graphc.runtime.tensor(b, dev)
        tc = graphc.runtime.empty((n, 37), "float32", dev)
        lib["main"](ta, tb, tc)
        np.testing.assert_array_equal(tc.numpy(), np.maximum(a + b, 0))


def test_reduction_uses_shared_tree_on_opencl_and_shuffles_on_cuda():
    P.opencl_device()
    mod = P.row_sum()
    cl = graphc.build(mod, target="opencl").imported_modules[0].get_source()
    assert "__local float red_buf" in cl and "barrier(CLK_LOCAL_MEM_FENCE)" in cl and "shfl" not in cl
    P.require_nvrtc()
    cu = graphc.build(mod, target="cuda").imported_modules[0].get_source()
    assert "__shfl_down_sync" in cu and "__shfl_sync" in cu and "__launch_bounds__(64)" in cu


def test_tiled_matmul_stages_tiles_in_shared_memory_with_barriers():
    P.opencl_device()
    src = graphc.build(P.matmul(), target="opencl").imported_modules[0].get_source()
    assert "__local float A_shared[256]" in src and "__local float B_shared[256]" in src
    assert "float C_local[1]" in src  # one accumulator per thread
    assert src.count("barrier(CLK_LOCAL_MEM_FENCE)") == 2  # after the fetch; before the next one


def test_cubins_come_from_the_object_cache_the_second_time():
    P.require_nvrtc()
    from graphc.target import cache

    graphc.build(P.row_sum(), target="cuda -arch=sm_90")
    hits = cache.STATS["hits"]
    lib = graphc.build(P.row_sum(), target="cuda -arch=sm_90")
    assert cache.STATS["hits"] >= hits + 2  # the cubin and the host code
    assert lib.imported_modules[0].kernel_info["main_kernel"]["sm_90"]["spill_stores"] == 0


LAUNCHED = '''
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    bx = T.launch_thread("blockIdx.x", 4)
    tx = T.launch_thread("threadIdx.x", 64)
    S = T.allocate([64], "float32", "{scope}")
    S_1 = T.Buffer((64,), "float32", data=S, scope="{scope}")
    S_1[tx] = A[bx * 64 + tx]
    B[bx * 64 + tx] = S_1[63 - tx] * T.float32(2)
'''


@pytest.mark.parametrize("scope", ["shared", "shared.dyn", "warp"])
def test_launch_thread_script_with_block_memory(scope):
    """A kernel written with T.launch_thread: its block-shared buffer gets the barrier it needs."""
    from graphc.script import from_source

    mod = graphc.IRModule({"main": from_source(LAUNCHED.format(scope=scope))})
    a = _normal(256)
    (b,) = P.run_opencl(mod, [a, np.zeros(256, "float32")], [1])
    np.testing.assert_array_equal(b, a.reshape(4, 64)[:, ::-1].reshape(-1) * 2)
    source = graphc.build(mod, target="opencl").imported_modules[0].get_source()
    assert "__local float S[64];" in source and "barrier(CLK_LOCAL_MEM_FENCE);" in source


def test_scalar_parameters_reach_the_kernel():
    from graphc.script import from_source

    func = from_source('''
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), alpha: T.float32, shift: T.int64,
         flip: T.bool):
    for i0 in T.thread_binding(2, thread="blockIdx.x"):
        for i1 in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(64, i0 * 32 + i1)
                B[vi] = T.if_then_else(flip, -A[vi], A[vi]) * alpha + T.Cast("float32", shift)
''')
    dev = P.opencl_device()
    lib = graphc.build(func, target="opencl")
    a = _normal(64)
    b = graphc.runtime.empty((64,), "float32", dev)
    lib(graphc.runtime.tensor(a, dev), b, 2.5, -3, True)
    np.testing.assert_allclose(b.numpy(), -a * 2.5 - 3, rtol=1e-6, atol=1e-6)
    P.check_cubins(graphc.IRModule({"main": func}))
