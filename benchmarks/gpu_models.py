"""Model latency on a GPU: graphc's default GPU schedules against PyTorch eager and torch.compile.

BERT-base, GPT-2 small (sequence 128) and ResNet-50 (224x224) at batch 1 and 16, float32 and
float16, all three on the same GPU in one run; prints milliseconds (best of `--repeat` after
warm-up) and graphc's speed relative to eager. Needs an NVIDIA GPU with the CUDA driver, a CUDA
build of PyTorch and `transformers`; elsewhere it says what is missing and exits. (No machine
this was written on had a GPU: the table of the closing note comes from a run where one is lent.)

    .venv/bin/python benchmarks/gpu_models.py [--models bert gpt2 resnet] [--batches 1 16]
        [--dtypes float32 float16] [--repeat 20] [--no-torch-compile]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import torch

import graphc


def _model(name: str, batch: int, dtype: torch.dtype):
    import transformers as tf

    torch.manual_seed(0)
    if name == "bert":
        model, x = tf.BertModel(tf.BertConfig()), torch.randint(0, 30000, (batch, 128))
    elif name == "gpt2":
        model, x = tf.GPT2Model(tf.GPT2Config()), torch.randint(0, 50000, (batch, 128))
    else:
        cfg = tf.ResNetConfig.from_dict({"depths": [3, 4, 6, 3], "hidden_sizes": [256, 512, 1024, 2048],
                                         "layer_type": "bottleneck", "embedding_size": 64})
        model, x = tf.ResNetModel(cfg), torch.randn(batch, 3, 224, 224)
    if x.is_floating_point():
        x = x.to(dtype)

    class First(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model.to(dtype)

        def forward(self, inp):
            return self.model(inp)[0]

    return First().eval(), x


def _best(fn, repeat: int, sync) -> float:
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return 1e3 * min(times)


def bench(name: str, batch: int, dtype: str, repeat: int, use_compile: bool) -> list:
    tdtype = getattr(torch, dtype)
    model, x = _model(name, batch, tdtype)
    row = [f"{name} b{batch} {dtype}"]
    cuda_model, cuda_x = model.cuda(), x.cuda()
    with torch.no_grad():
        eager = _best(lambda: cuda_model(cuda_x), repeat, torch.cuda.synchronize)
        row.append(eager)
        if use_compile:
            compiled = torch.compile(cuda_model)
            row.append(_best(lambda: compiled(cuda_x), repeat, torch.cuda.synchronize))
        else:
            row.append(float("nan"))
        expected = cuda_model(cuda_x).float().cpu().numpy()
    try:
        exe = graphc.compile(torch.export.export(model, (x,)), target="cuda")
        dev = graphc.cuda(0)
        vm = graphc.relax.VirtualMachine(exe, dev)
        gx = graphc.nd.array(x.numpy(), dev)
        row.append(_best(lambda: vm["main"](gx), repeat, dev.sync))
        out = vm["main"](gx)
        out = (out[0] if isinstance(out, tuple) else out).numpy().astype("float32")
        row.append(float(np.abs(out - expected).max()))
    except Exception as err:  # a row that fails says why and the others still run
        row += [float("nan"), f"{type(err).__name__}: {str(err)[:80]}"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["bert", "gpt2", "resnet"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 16])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float16"])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-torch-compile", action="store_true")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if not torch.cuda.is_available() or not graphc.cuda(0).exist:
        sys.exit("gpu_models.py needs an NVIDIA GPU (torch.cuda.is_available() and graphc.cuda(0).exist); "
                 "none here. benchmarks/gpu_kernels.py reports the kernels without one.")
    print(f"device: {torch.cuda.get_device_name(0)}; load average {os.getloadavg()[0]:.2f}")
    header = f"{'model':24s} {'eager ms':>9s} {'compile ms':>10s} {'graphc ms':>9s} {'vs eager':>8s}"
    print(header + "  max |diff|")
    for name in args.models:
        for batch in args.batches:
            for dtype in args.dtypes:
                use_compile = not args.no_torch_compile
                label, eager, comp, ours, diff = bench(name, batch, dtype, args.repeat, use_compile)
                ratio = eager / ours if ours == ours else float("nan")
                print(f"{label:24s} {eager:9.2f} {comp:10.2f} {ours:9.2f} {ratio:7.2f}x  {diff}")


if __name__ == "__main__":
    main()
