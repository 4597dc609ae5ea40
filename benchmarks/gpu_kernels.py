"""The kernels the default GPU schedules (dlight.gpu) give a model, compiled for CUDA by NVRTC.

Per model: every kernel with the rule that scheduled it, its grid and block sizes, registers,
spills and static shared memory (from ptxas), an occupancy estimate (resident threads per SM
over 2048, limited by threads, registers and shared memory of an A100-class SM), and the
share of the model's arithmetic (loop iterations of reduction blocks, times the calls in
`main`) that goes through Matmul/GEMV/LowBatchGEMV (and with Conv2d) rather than the other
rules. Needs NVRTC only, no GPU.

    .venv/bin/python benchmarks/gpu_kernels.py [--models bert,gpt2,vit,resnet] [--arch sm_80] [--small]
        [--dtype float16|bfloat16] [--tensor-cores never] [--double-buffer off]

`--dtype float16` (or `bfloat16`) compiles the models in half precision; the share of the arithmetic that runs
on tensor cores (kernels of Matmul's WMMA variant) is then reported too.

`--small` uses tiny configurations (seconds instead of minutes); the full-size models are
BERT-base, GPT-2 small, ViT-base and ResNet-50 at batch 1 (sequence 128, images 224x224).
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch

import graphc
from graphc import tir
from graphc.dlight import default_rules
from graphc.dlight.base import try_inline
from graphc.driver import compile_to
from graphc.relax.expr_functor import ExprVisitor
from graphc.target import Target
from graphc.tir.analysis.launch import thread_launches

SM_THREADS, SM_REGISTERS, SM_SHARED, SM_BLOCKS = 2048, 65536, 164 * 1024, 32


def build_model(name: str, small: bool, dtype: str = "float32"):
    model, inputs = _build_model(name, small)
    if dtype in ("float16", "bfloat16"):
        half = getattr(torch, dtype)
        model = model.to(half)
        inputs = tuple(x.to(half) if x.is_floating_point() else x for x in inputs)
    return model, inputs


def _build_model(name: str, small: bool):
    import transformers as tf

    if name == "bert":
        cfg = (tf.BertConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=128) if small else tf.BertConfig())
        return tf.BertModel(cfg), (torch.randint(0, 100, (1, 16 if small else 128)),)
    if name == "gpt2":
        cfg = tf.GPT2Config(vocab_size=128, n_embd=64, n_layer=2, n_head=2) if small else tf.GPT2Config()
        return tf.GPT2Model(cfg), (torch.randint(0, 100, (1, 16 if small else 128)),)
    if name == "vit":
        cfg = (tf.ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
                            num_attention_heads=2, intermediate_size=128) if small else tf.ViTConfig())
        return tf.ViTModel(cfg), (torch.randn(1, 3, 32 if small else 224, 32 if small else 224),)
    cfg = (tf.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1]) if small
           else tf.ResNetConfig.from_dict({"depths": [3, 4, 6, 3], "hidden_sizes": [256, 512, 1024, 2048],
                                           "layer_type": "bottleneck", "embedding_size": 64}))
    return tf.ResNetModel(cfg), (torch.randn(1, 3, 64 if small else 224, 64 if small else 224),)


class _First(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]


class _Calls(ExprVisitor):
    def __init__(self):
        self.count: dict = {}

    def visit_GlobalVar(self, gv):
        self.count[gv.name_hint] = self.count.get(gv.name_hint, 0) + 1


def work(func: tir.PrimFunc, rule: str, scheduled: tir.PrimFunc | None = None) -> dict:
    """{rule: loop iterations} of a function's blocks after inlining (symbolic extents count as 1):
    reduction blocks only when there are any (their multiply-adds dominate). The iterations of a
    product that `scheduled` runs on tensor cores (its update block calls a WMMA intrinsic) count
    as "tensor cores"."""
    sch = tir.Schedule(func)
    infos = try_inline(sch) or []
    reductions = [i for i in infos if i.reduction_block] or infos
    on_tc = _wmma_blocks(scheduled) if scheduled is not None else set()
    out: dict = {}
    for info in reductions:
        size = 1
        for it in info.iters:
            size *= it.extent or 1
        key = "tensor cores" if {f"{info.name}_update_o", f"{info.name}_o"} & on_tc else rule
        out[key] = out.get(key, 0) + size
    return out


def _wmma_blocks(func: tir.PrimFunc) -> set:
    """The names of the blocks of `func` whose body calls tir.wmma_mma (or _bt)."""
    from graphc.tir.schedule.state import walk

    names = set()
    for stmt in walk(func.body):
        if isinstance(stmt, tir.Block) and "tir.wmma_mma" in stmt.body.script():
            names.add(stmt.name_hint)
    return names


MATRIX_RULES = ("Matmul", "GEMV", "LowBatchGEMV", "tensor cores")  # the share the issue asks about
TILED_RULES = (*MATRIX_RULES, "Conv2d")  # and with the convolutions' implicit GEMMs


def occupancy(threads: int, registers: int, smem: int) -> float:
    blocks = min(SM_BLOCKS, SM_THREADS // max(threads, 1))
    if registers:
        blocks = min(blocks, SM_REGISTERS // (registers * threads))
    if smem:
        blocks = min(blocks, SM_SHARED // smem)
    return blocks * threads / SM_THREADS


def report(name: str, small: bool, arch: str, dtype: str = "float32", tensor_cores: str = "auto",
           double_buffer: bool = True) -> None:
    from graphc.target.source.wmma import uses_wmma

    torch.manual_seed(0)
    model, inputs = build_model(name, small, dtype)
    t0 = time.perf_counter()
    target = Target(f"cuda -arch={arch}")
    # the kernels `graphc.compile` schedules (inference batch norm decomposed, fused, permutes inlined)
    mod = compile_to(torch.export.export(_First(model).eval(), inputs), "fused", target=target,
                     progress=lambda *args: None)
    calls = _Calls()
    calls.visit_expr(mod["main"])
    rules = default_rules(target)
    if tensor_cores != "auto" or not double_buffer:  # Matmul's tensor cores or double buffering off
        from graphc.dlight.gpu import Matmul
        from graphc.dlight.gpu.matmul import MatmulConfig

        cfg = MatmulConfig(tensor_cores=tensor_cores, double_buffer=double_buffer)
        rules = [Matmul(cfg) if r.name == "Matmul" else r for r in rules]
    scheduled, taken, flops, tensor_core = {}, {}, {}, 0
    for gv, func in mod.items():
        if not isinstance(func, tir.PrimFunc) or func.attrs.get("tir.is_host_func"):
            continue
        for rule in rules:
            sch = rule.apply(func, target, False)
            if sch is not None:
                scheduled[gv.name_hint] = sch.mod[sch.func_name].with_attr("global_symbol", gv.name_hint)
                taken[gv.name_hint] = rule.name
                break
        on_tc = scheduled[gv.name_hint] if uses_wmma(scheduled[gv.name_hint]) else None
        for category, n in work(func, taken[gv.name_hint], on_tc).items():
            flops[category] = flops.get(category, 0) + n * calls.count.get(gv.name_hint, 1)
            if category == "tensor cores":
                tensor_core += n * calls.count.get(gv.name_hint, 1)
    lib = graphc.build(graphc.IRModule(scheduled), target=target)
    info = lib.imported_modules[0].kernel_info
    seconds = time.perf_counter() - t0
    print(f"\n== {name}{' (small)' if small else ''}: {len(scheduled)} functions, {len(info)} kernels, "
          f"compiled for {arch} in {seconds:.0f} s")
    print(f"{'kernel':58s} {'rule':16s} {'grid':>14s} {'block':>10s} {'regs':>4s} {'spill':>5s} "
          f"{'smem':>6s} {'occ':>5s}")
    spills = big_smem = 0
    for fname in sorted(scheduled):
        kernels = sorted(k for k in info if k == f"{fname}_kernel" or k.startswith(f"{fname}_kernel_"))
        for kname, (grid, block) in zip(kernels, thread_launches(scheduled[fname])):
            u = info[kname][arch]
            threads = 1
            for v in block.values():
                threads *= v if isinstance(v, int) else 1
            spills += bool(u["spill_stores"] or u["spill_loads"])
            big_smem += u["smem"] > 48 * 1024
            g = "x".join(str(grid.get(f"blockIdx.{a}", 1)) for a in "xyz")
            b = "x".join(str(block.get(f"threadIdx.{a}", 1)) for a in "xyz")
            print(f"{kname[:58]:58s} {taken[fname]:16s} {g:>14s} {b:>10s} {u['registers']:4d} "
                  f"{u['spill_stores'] + u['spill_loads']:5d} {u['smem']:6d} "
                  f"{occupancy(threads, u['registers'], u['smem']):5.2f}")
    total = sum(flops.values()) or 1
    share = sum(v for k, v in flops.items() if k in MATRIX_RULES) / total
    tiled = sum(v for k, v in flops.items() if k in TILED_RULES) / total
    parts = ", ".join(f"{r} {100 * v / total:.2f}%" for r, v in sorted(flops.items(), key=lambda x: -x[1]))
    print(f"arithmetic through Matmul/GEMV/LowBatchGEMV: {100 * share:.2f}%; with Conv2d: "
          f"{100 * tiled:.2f}%  (by rule: {parts})")
    print(f"arithmetic on tensor cores (Matmul's WMMA variant): {100 * tensor_core / total:.2f}%")
    print(f"max static shared memory: {max(u[arch]['smem'] for u in info.values())} B")
    print(f"kernels that spill: {spills}; over 48 KiB static shared memory: {big_smem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["bert", "gpt2", "vit", "resnet"],
                        help="models, space- or comma-separated: bert gpt2 vit resnet (resnet50 is resnet)")
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--tensor-cores", default="auto", choices=["auto", "never"],
                        help="never: Matmul without its tensor-core variant (the SIMT tiles)")
    parser.add_argument("--double-buffer", default="on", choices=["on", "off"],
                        help="off: Matmul stages one copy of its shared tiles (two barriers per k step)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    names = [n.strip().lower() for item in args.models for n in item.split(",") if n.strip()]
    names = ["resnet" if n == "resnet50" else n for n in names]
    unknown = sorted(set(names) - {"bert", "gpt2", "vit", "resnet"})
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from bert, gpt2, vit, resnet")
    for name in names:
        report(name, args.small, args.arch, args.dtype, args.tensor_cores, args.double_buffer == "on")


if __name__ == "__main__":
    main()
