"""float16/bfloat16 sums under the GPU rules accumulate in float32 registers (accumulate.py):
each rule's kernel runs on PoCL and matches a float32 reference at 16-bit tolerance (closer
than the same sum accumulated in float16), and compiles to cubins without spills."""

import numpy as np
import pytest
import torch
from gpu_check import check_cubins, opencl_device, random_inputs, schedule

import graphc
from graphc import IRModule, te, tir, topi
from graphc.dlight import gpu
from graphc.dlight.gpu.accumulate import promote_accumulators
from graphc.tir.schedule.state import walk

ALL = [gpu.Matmul(), gpu.Conv2d(), gpu.GEMV(), gpu.LowBatchGEMV(), gpu.Reduction(), gpu.GeneralReduction(),
       gpu.Transpose(), gpu.Fallback()]


def _dense(m, n, k, dtype, relu=True):
    A = te.placeholder((m, k), dtype, name="A")
    W = te.placeholder((n, k), dtype, name="W")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * W[j, r], axis=r), name="C")
    if not relu:
        return te.create_prim_func([A, W, C]), lambda a, w: a @ w.T
    D = te.compute((m, n), lambda i, j: te.max(C[i, j], te.const(0, dtype)), name="D")
    return te.create_prim_func([A, W, D]), lambda a, w: np.maximum(a @ w.T, 0)


def _conv(dtype):
    x = te.placeholder((1, 16, 9, 9), dtype, name="x")
    w = te.placeholder((8, 16, 3, 3), dtype, name="w")
    func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, padding=1)])

    def ref(x, w):
        import torch

        return torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1).numpy()

    return func, ref


def _row_sum(dtype, n=None):
    rows = n if n is not None else tir.Var("n", "int32")
    A = te.placeholder((rows, 500), dtype, name="A")
    k = te.reduce_axis((0, 500), "k")
    return te.create_prim_func([A, te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name="S")]), \
        lambda a: a.sum(axis=1)


def _layer_norm(dtype):
    A = te.placeholder((6, 300), dtype, name="A")
    k1, k2 = te.reduce_axis((0, 300), "k1"), te.reduce_axis((0, 300), "k2")
    S = te.compute((6,), lambda i: te.sum(A[i, k1], axis=k1), name="S")
    Q = te.compute((6,), lambda i: te.sum(A[i, k2] * A[i, k2], axis=k2), name="Q")
    inv = te.const(1.0 / 300, dtype)
    out = te.compute((6, 300), lambda i, j: (A[i, j] - S[i] * inv)
                     * te.rsqrt(Q[i] * inv - S[i] * inv * (S[i] * inv) + te.const(1e-5, dtype)), name="N")

    def ref(a):
        mean = a.mean(axis=1, keepdims=True)
        return (a - mean) / np.sqrt(a.var(axis=1, keepdims=True) + 1e-5)

    return te.create_prim_func([A, out]), ref


CASES = {
    "Matmul": lambda dt: _dense(70, 64, 768, dt),
    "GEMV": lambda dt: _dense(1, 96, 768, dt),
    "LowBatchGEMV": lambda dt: _dense(4, 96, 768, dt, relu=False),
    "Conv2d": _conv,
    "Reduction": lambda dt: _row_sum(dt, 8),
    "GeneralReduction": _layer_norm,
}


def _run(func, rules, shapes=None):
    """(inputs, the scheduled function, its output on PoCL, the unscheduled CPU build's output)."""
    scheduled = schedule(func, rules)
    dev = opencl_device()
    arrays = random_inputs(func, shapes)
    cpu = graphc.build(IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")
    host = [a.copy() for a in arrays]
    cpu["main"](*host)
    gpu_lib = graphc.build(IRModule({"main": scheduled.with_attr("global_symbol", "main")}), target="opencl")
    tensors = [graphc.runtime.tensor(a, dev) for a in arrays]
    gpu_lib["main"](*tensors)
    return arrays[:-1], scheduled, tensors[-1].numpy(), host[-1]


def _local_dtypes(func):
    return {b.dtype for s in walk(func.body) if isinstance(s, tir.Block) for b in s.alloc_buffers
            if b.scope == "local"}


@pytest.mark.parametrize(("rule", "dtype"), [(rule, "float16") for rule in sorted(CASES)]
                         + [("Matmul", "bfloat16"), ("GeneralReduction", "bfloat16")])
def test_16_bit_sums_accumulate_in_float32(rule, dtype):
    func, reference = CASES[rule](dtype)
    scheduled = schedule(func, ALL)
    assert scheduled.attrs["dlight.rule"] == rule
    if rule in ("Matmul", "Conv2d", "LowBatchGEMV"):  # the register accumulator is float32
        assert _local_dtypes(scheduled) == {"float32"}, _local_dtypes(scheduled)
    inputs, _, out, cpu16 = _run(func, [r for r in ALL if r.name == rule])
    expected = reference(*[a.astype(np.float32) for a in inputs])
    tol = 8e-3 if dtype == "float16" else 6e-2  # one rounding of the result
    scale = np.abs(expected).max()
    err = np.abs(out.astype(np.float32) - expected).max()
    assert err <= tol * scale, (err, scale)
    # no worse than the float16 accumulation the function asks for, on the CPU
    assert err <= np.abs(cpu16.astype(np.float32) - expected).max() + 1e-6


def test_a_symbolic_row_count_accumulates_in_float32_too():
    func, reference = _row_sum("float16")
    inputs, scheduled, out, _ = _run(func, [gpu.Reduction()], shapes={0: (5, 500), 1: (5,)})
    np.testing.assert_allclose(out.astype(np.float32), reference(inputs[0].astype(np.float32)),
                               rtol=8e-3, atol=8e-3)


def test_promote_accumulators_rewrites_sums_only():
    A = te.placeholder((8, 40), "float16", name="A")
    k1, k2 = te.reduce_axis((0, 40), "k1"), te.reduce_axis((0, 40), "k2")
    M = te.compute((8,), lambda i: te.max(A[i, k1], axis=k1), name="M")
    S = te.compute((8,), lambda i: te.sum(A[i, k2] - M[i], axis=k2), name="S")
    func = promote_accumulators(te.create_prim_func([A, S]))
    blocks = {s.name_hint: s for s in walk(func.body) if isinstance(s, tir.Block)}
    assert blocks["M"].writes[0].buffer.dtype == "float16"  # a max is exact in any type
    assert blocks["S"].writes[0].buffer.dtype == "float32"
    assert blocks["S_cast"].writes[0].buffer.name == "S"
    # float32 sums are left alone
    B = te.placeholder((8, 40), name="B")
    f32 = te.create_prim_func([B, te.compute((8,), lambda i: te.sum(B[i, k1], axis=k1), name="T")])
    assert promote_accumulators(f32) is f32


def test_16_bit_kernels_compile_to_cubins_without_spills():
    funcs = {f"{rule}_{dt}": schedule(CASES[rule](dt)[0], ALL, "cuda") for rule in CASES
             for dt in ("float16", "bfloat16")}
    mod = IRModule({name: f.with_attr("global_symbol", name) for name, f in funcs.items()})
    check_cubins(mod)


class _HalfModel(torch.nn.Module):
    """A linear layer over 24 rows (Matmul), one over 4 rows (LowBatchGEMV), a convolution
    (Conv2d) and a layer norm (GeneralReduction)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = torch.nn.Linear(128, 96)
        self.fc2 = torch.nn.Linear(96, 48)
        self.norm = torch.nn.LayerNorm(48)

    def forward(self, x, img):
        h = self.norm(self.fc2(torch.nn.functional.gelu(self.fc1(x))))
        return h, self.fc2(torch.relu(self.fc1(x[:4]))), torch.relu(self.conv(img))


def _half_model():
    torch.manual_seed(0)
    model = _HalfModel().eval()
    inputs = (torch.randn(24, 128), torch.randn(1, 3, 12, 12))
    with torch.no_grad():
        expected = [t.numpy() for t in model(*inputs)]  # the float32 reference
    half = [x.half() for x in inputs]
    return torch.export.export(model.half(), tuple(half)), half, expected


def test_a_float16_model_matches_float32_torch_on_opencl():
    exported, inputs, expected = _half_model()
    exe = graphc.compile(exported, target="opencl")
    outs = graphc.relax.VirtualMachine(exe, opencl_device())["main"](*[x.numpy() for x in inputs])
    for out, ref in zip(outs, expected):
        out = out.numpy()
        assert out.dtype == np.float16
        np.testing.assert_allclose(out.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


def test_a_float16_model_compiles_to_cubins_without_spills():
    from gpu_check import require_nvrtc

    require_nvrtc()
    exported, _, _ = _half_model()
    exe = graphc.compile(exported, target="cuda -arch=sm_80")
    info = exe.modules["cuda"].imported_modules[0].kernel_info
    assert not [k for k, u in info.items() if u["sm_80"]["spill_stores"] or u["sm_80"]["spill_loads"]]
