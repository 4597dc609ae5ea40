"""bfloat16 tensor cores: Matmul's WMMA variant over bfloat16 tiles (the bf16 intrinsic set of
graphc/tir/tensor_intrin.py) runs on PoCL, where OpenCL emulates it, against a float32
reference and the unscheduled CPU build; it compiles to sm_80/sm_90 cubins without spills whose
PTX holds the `m16n16k16 ... bf16` instructions, and a bfloat16 BERT does too."""

import re

import numpy as np
import pytest
import torch
from gpu_check import check_cubins, opencl_device, random_inputs, require_nvrtc, schedule

import graphc
from graphc import IRModule, te, tir
from graphc.dlight import gpu
from graphc.dlight.gpu.matmul import MatmulConfig
from graphc.tir import tensor_intrin as ti

SMALL = gpu.Matmul(MatmulConfig(tensor_cores="always", frags_i=1, frags_j=1))  # fits PoCL's 16 KiB


def _matmul(m, n, k, trans_b=False, batch=None):
    A = te.placeholder((m, k) if batch is None else (batch, m, k), "bfloat16", name="A")
    B = te.placeholder((n, k) if trans_b else (k, n), "bfloat16", name="B")
    r = te.reduce_axis((0, k), "r")

    def prod(a, j):
        b = B[j, r] if trans_b else B[r, j]
        return te.sum(a.astype("float32") * b.astype("float32"), axis=r)

    if batch is None:
        C = te.compute((m, n), lambda i, j: prod(A[i, r], j), name="C")
    else:
        C = te.compute((batch, m, n), lambda x, i, j: prod(A[x, i, r], j), name="C")
    return te.create_prim_func([A, B, C])


def _as_float(a):
    return a.astype(np.float32)


def _run(func, shapes=None):
    sch = schedule(func, [SMALL])
    assert sch is not None and "tir.wmma_mma" in sch.script()
    dev = opencl_device()
    arrays = random_inputs(func, shapes)
    gpu_lib = graphc.build(IRModule({"main": sch.with_attr("global_symbol", "main")}), target="opencl")
    tensors = [graphc.runtime.tensor(a, dev) for a in arrays]
    gpu_lib["main"](*tensors)
    cpu = [a.copy() for a in arrays]
    graphc.build(IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")["main"](*cpu)
    return arrays, tensors[-1].numpy(), cpu[-1]


def test_bfloat16_intrinsics_are_registered():
    from graphc.tir.schedule import TensorIntrin

    names = ti.wmma_intrinsics("bfloat16")
    desc = TensorIntrin.get(names["sync"]).desc
    assert [desc.buffer_map[p].dtype for p in desc.params] == ["bfloat16", "bfloat16", "float32"]
    assert names["load_a"] != ti.wmma_intrinsics("float16")["load_a"]
    with pytest.raises(ValueError, match="float32"):
        ti.wmma_intrinsics("float32")


@pytest.mark.parametrize("trans_b", [False, True])
def test_bfloat16_tensor_cores_run_on_pocl(trans_b):
    func = _matmul(64, 96, 48, trans_b)
    arrays, got, cpu = _run(func)
    a, b = _as_float(arrays[0]), _as_float(arrays[1])
    ref = a @ (b.T if trans_b else b)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)  # exact products, float32 sums
    np.testing.assert_allclose(got, cpu, rtol=1e-4, atol=1e-4)


def test_bfloat16_tensor_cores_under_a_symbolic_batch():
    n = tir.Var("n", "int32")
    func = _matmul(32, 32, 32, batch=n)
    arrays, got, cpu = _run(func, shapes={0: (3, 32, 32), 2: (3, 32, 32)})
    np.testing.assert_allclose(got, _as_float(arrays[0]) @ _as_float(arrays[1]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, cpu, rtol=1e-4, atol=1e-4)


def test_mixed_input_dtypes_keep_the_simt_tiles():
    A = te.placeholder((64, 64), "bfloat16", name="A")
    B = te.placeholder((64, 64), "float16", name="B")
    r = te.reduce_axis((0, 64), "r")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, r].astype("float32") * B[r, j].astype("float32"),
                                                 axis=r))
    sch = schedule(te.create_prim_func([A, B, C]), [SMALL])
    assert sch is not None and "wmma" not in sch.script()


def _ptx_wmma(lib) -> set:
    return set(re.findall(r"wmma\.[a-z0-9.]+", lib.imported_modules[0].get_source("ptx")))


@pytest.mark.parametrize("trans_b", [False, True])
def test_bfloat16_kernels_compile_to_cubins_with_bf16_wmma(trans_b):
    require_nvrtc()
    sch = schedule(_matmul(128, 768, 768, trans_b), [gpu.Matmul()], "cuda")
    mod = IRModule({"main": sch.with_attr("global_symbol", "main")})
    check_cubins(mod)  # no spills on sm_80 and sm_90
    found = _ptx_wmma(graphc.build(mod, target="cuda -arch=sm_80"))
    layout = "col" if trans_b else "row"
    assert f"wmma.mma.sync.aligned.row.{layout}.m16n16k16.f32.bf16.bf16.f32" in found, found
    assert "wmma.load.a.sync.aligned.row.m16n16k16.bf16" in found, found
    assert f"wmma.load.b.sync.aligned.{layout}.m16n16k16.bf16" in found, found


def test_bfloat16_bert_compiles_with_bf16_tensor_cores():
    require_nvrtc()
    tf = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = tf.BertConfig(vocab_size=64, hidden_size=64, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=64)

    class First(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x)[0]

    model = First(tf.BertModel(cfg).to(torch.bfloat16)).eval()
    exported = torch.export.export(model, (torch.randint(0, 64, (1, 64)),))  # 64 rows: tensor-core tiles
    exe = graphc.compile(exported, target="cuda -arch=sm_80")
    module = exe.modules["cuda"].imported_modules[0]
    info = module.kernel_info
    assert not [k for k, u in info.items() if u["sm_80"]["spill_stores"] or u["sm_80"]["spill_loads"]]
    found = _ptx_wmma(exe.modules["cuda"])
    assert any(f.endswith("m16n16k16.f32.bf16.bf16.f32") for f in found), found
