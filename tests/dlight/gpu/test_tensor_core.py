"""Matmul's tensor-core variant (tensor_core.py, the WMMA intrinsics of graphc/tir/tensor_intrin.py):
the schedule runs on PoCL, where OpenCL emulates the intrinsics, against a float32 reference
(and the unscheduled CPU build); it compiles to sm_80/sm_90 cubins without spills whose SASS
holds HMMA instructions (the PTX wmma.mma where no disassembler is installed); it is taken only
where it fits."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from gpu_check import check_cubins, opencl_device, random_inputs, require_nvrtc, schedule

import graphc
from graphc import IRModule, te, tir
from graphc.dlight import gpu
from graphc.dlight.gpu.matmul import MatmulConfig

# one 32 x 32 tile of 2 x 2 warps per block: its shared memory fits PoCL's 16 KiB
SMALL = gpu.Matmul(MatmulConfig(tensor_cores="always", frags_i=1, frags_j=1))


def _matmul(m, n, k, trans_b=False, epilogue=False, batch=None, out="float16"):
    shape_a = (m, k) if batch is None else (batch, m, k)
    A = te.placeholder(shape_a, "float16", name="A")
    B = te.placeholder((n, k) if trans_b else (k, n), "float16", name="B")
    r = te.reduce_axis((0, k), "r")

    def b(j):
        return B[j, r] if trans_b else B[r, j]

    if batch is None:
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * b(j), axis=r), name="C")
    else:
        C = te.compute((batch, m, n), lambda x, i, j: te.sum(A[x, i, r] * b(j), axis=r), name="C")
    args = [A, B]
    if epilogue:
        bias = te.placeholder((n,), "float16", name="bias")
        C = te.compute(C.shape, lambda *ix: te.max(C[ix] + bias[ix[-1]], te.const(0, "float16")), name="D")
        args.append(bias)
    if out != "float16":
        C = te.compute(C.shape, lambda *ix: C[ix].astype(out), name="E")
    return te.create_prim_func([*args, C])


def _reference(arrays, trans_b, epilogue):
    a, b = (x.astype(np.float32) for x in arrays[:2])
    c = a @ (b.T if trans_b else b)
    if epilogue:
        c = np.maximum(c + arrays[2].astype(np.float32), 0)
    return c


def _uses_wmma(func) -> bool:
    return "tir.wmma_mma" in func.script()


def _run(func, rule=SMALL, shapes=None):
    sch = schedule(func, [rule])
    assert sch is not None and _uses_wmma(sch)
    dev = opencl_device()
    arrays = random_inputs(func, shapes)
    lib = graphc.build(IRModule({"main": sch.with_attr("global_symbol", "main")}), target="opencl")
    tensors = [graphc.runtime.tensor(a, dev) for a in arrays]
    lib["main"](*tensors)
    cpu = [a.copy() for a in arrays]
    graphc.build(IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")["main"](*cpu)
    return arrays, tensors[-1].numpy(), cpu[-1]


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("epilogue", [False, True])
def test_tensor_core_matmul_runs_on_pocl(trans_b, epilogue):
    func = _matmul(64, 96, 48, trans_b, epilogue)
    arrays, got, cpu = _run(func)
    ref = _reference(arrays, trans_b, epilogue)
    # float32 accumulation, one float16 rounding: closer to float32 than the float16 CPU build
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    assert np.abs(got.astype(np.float32) - ref).max() <= np.abs(cpu.astype(np.float32) - ref).max() + 1e-3


def test_tensor_core_batch_matmul_and_float32_output():
    func = _matmul(32, 32, 32, batch=3, out="float32")
    arrays, got, _ = _run(func)
    ref = arrays[0].astype(np.float32) @ arrays[1].astype(np.float32)
    np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-3)


def test_tensor_cores_under_a_symbolic_batch():
    n = tir.Var("n", "int32")
    func = _matmul(32, 32, 16, batch=n)
    arrays, got, _ = _run(func, shapes={0: (2, 32, 16), 2: (2, 32, 32)})
    ref = arrays[0].astype(np.float32) @ arrays[1].astype(np.float32)
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def test_tensor_cores_take_smaller_tiles_for_few_blocks():
    from graphc.dlight.gpu.tensor_core import tensor_core_config

    cfg = MatmulConfig()
    for (m, n), frags in (((128, 768), 1), ((512, 1024), 2), ((96, 1024), 1)):
        sch = tir.Schedule(_matmul(m, n, 64))
        from graphc.dlight.gpu.matmul import _find

        _, roles = _find(sch)
        assert tensor_core_config(cfg, roles).frags_i == frags, (m, n)


def test_tensor_cores_with_the_head_axis_between_rows_and_columns():
    # attention's scores: Q[b, i, h, d] * K[b, j, h, d] -> S[b, h, i, j]; the tiles of Q and K
    # span axes 1 and 3 of their buffers (tensorize maps the intrinsic's axes onto those)
    Q = te.placeholder((1, 32, 2, 32), "float16", name="Q")
    K = te.placeholder((1, 32, 2, 32), "float16", name="K")
    d = te.reduce_axis((0, 32), "d")
    S = te.compute((1, 2, 32, 32), lambda b, h, i, j: te.sum(Q[b, i, h, d] * K[b, j, h, d], axis=d), name="S")
    func = te.create_prim_func([Q, K, S])
    arrays, got, _ = _run(func)
    q, k = (x.astype(np.float32) for x in arrays[:2])
    ref = np.einsum("bihd,bjhd->bhij", q, k)
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def test_tensor_cores_two_k_fragments_per_step():
    rule = gpu.Matmul(MatmulConfig(tensor_cores="always", frags_i=1, frags_j=1, k_tile=32))
    func = _matmul(32, 64, 64)
    arrays, got, _ = _run(func, rule)
    np.testing.assert_allclose(got.astype(np.float32), _reference(arrays, False, False), rtol=2e-3, atol=2e-3)


def test_tensor_cores_only_where_they_fit():
    m = tir.Var("m", "int32")
    cases = [
        (_matmul(64, 64, 64), "cuda", True),  # sm_80 by default
        (_matmul(64, 64, 64), "cuda -arch=sm_75", False),
        (_matmul(64, 64, 64), "opencl", False),  # "auto": CUDA only
        (_matmul(64, 72, 64), "cuda", False),  # 72 columns: not whole 32-column tiles
        (_matmul(64, 64, 40), "cuda", False),  # k not a multiple of 16
        (_matmul(m, 64, 64), "cuda", False),  # a symbolic row count
    ]
    A, B = te.placeholder((64, 64), name="A"), te.placeholder((64, 64), name="B")
    r = te.reduce_axis((0, 64), "r")
    f32 = te.create_prim_func([A, B, te.compute((64, 64), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r))])
    cases.append((f32, "cuda", False))  # float32 operands: the SIMT tiles (no tf32)
    for func, target, expected in cases:
        sch = schedule(func, [gpu.Matmul()], target)
        assert sch is not None and _uses_wmma(sch) == expected, (target, func.script())


def test_symbolic_rows_fall_back_to_simt_tiles_on_pocl():
    m = tir.Var("m", "int32")
    func = _matmul(m, 64, 32)
    sch = schedule(func, [SMALL])
    assert sch is not None and not _uses_wmma(sch)
    dev = opencl_device()
    arrays = random_inputs(func, {0: (40, 32), 2: (40, 64)})
    lib = graphc.build(IRModule({"main": sch.with_attr("global_symbol", "main")}), target="opencl")
    tensors = [graphc.runtime.tensor(a, dev) for a in arrays]
    lib["main"](*tensors)
    ref = arrays[0].astype(np.float32) @ arrays[1].astype(np.float32)
    np.testing.assert_allclose(tensors[2].numpy().astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def _nvdisasm():
    found = shutil.which("nvdisasm")
    if found:
        return found
    try:
        import nvidia.cu13 as cu
    except ImportError:
        return None
    path = Path(next(iter(cu.__path__))) / "bin" / "nvdisasm"
    return str(path) if path.exists() else None


@pytest.mark.parametrize("trans_b", [False, True])
def test_tensor_core_kernels_compile_to_cubins_with_hmma(tmp_path, trans_b):
    require_nvrtc()
    func = _matmul(128, 768, 768, trans_b, epilogue=True)
    sch = schedule(func, [gpu.Matmul()], "cuda")
    assert _uses_wmma(sch)
    mod = IRModule({"main": sch.with_attr("global_symbol", "main")})
    usage = check_cubins(mod)  # no spills
    for arch in ("sm_80", "sm_90"):
        (info,) = usage[arch].values()
        assert info["smem"] <= 48 * 1024
    lib = graphc.build(mod, target="cuda -arch=sm_80")
    code = lib.imported_modules[0].code
    assert "wmma.mma.sync.aligned.row." + ("col" if trans_b else "row") in str(code.ptx)
    tool = _nvdisasm()
    if tool is None:
        return
    import subprocess

    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(code.binaries["sm_80"])
    sass = subprocess.run([tool, str(cubin)], capture_output=True, text=True, check=True).stdout
    assert "HMMA" in sass


@pytest.mark.parametrize("warps", [(1, 2), (2, 1)])
def test_tensor_cores_with_one_warp_along_an_axis(warps):
    """A warp count of 1 along rows or columns (a tuner's candidate) schedules and runs; it used to
    fail with an AttributeError while fusing the warp loops."""
    cfg = MatmulConfig(tensor_cores="always", warps_i=warps[0], warps_j=warps[1], frags_i=1, frags_j=1)
    rule = gpu.Matmul(cfg)
    func = _matmul(64, 96, 48)
    arrays, got, _ = _run(func, rule)
    np.testing.assert_allclose(got.astype(np.float32), _reference(arrays, False, False), rtol=2e-3, atol=2e-3)
