"""graphc's default CPU schedules on the layers of BERT-base, ViT-base, ResNet-18/50 and a 1024^3
matmul, against numpy, PyTorch eager and ONNX Runtime in one run.

Run: `.venv/bin/python benchmarks/cpu_layers.py [--threads 1] [--only bert resnet50 ...] [--repeat 10]`

Each layer is a small PyTorch module (a linear layer with its bias and activation, a
convolution with batch norm and ReLU, attention), compiled by `graphc.compile` (weights are
constants, so they are packed at compile time), run by PyTorch eager, and exported with
`torch.onnx.export` for ONNX Runtime (`intra_op_num_threads` = threads); matmuls are also
timed with numpy (`x @ W`, OpenBLAS's kernel for this CPU: OPENBLAS_CORETYPE/L2_SIZE are
removed from the environment before numpy loads). Rows print the best time of each, its
GFLOP/s (2 x multiply-adds; for layer norm and softmax, GB/s: bytes read and written) and
graphc's ratio to each peer.

Timing on a shared machine: with one thread each candidate is timed by the CPU time of the
calling thread (time.thread_time: time slices lost to other processes do not count); with
more threads, by the best wall time. Candidates are interleaved, three rounds of `--repeat`
calls each, best kept. The load average and the CPU (LLVM's name for it) are printed.
"""

from __future__ import annotations

import argparse
import io
import os
import time

for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # before numpy loads OpenBLAS
    os.environ.pop(_var, None)

import numpy as np  # noqa: E402

import graphc  # noqa: E402
from graphc import relax  # noqa: E402


def layers():
    """name -> (group, torch module factory, input shapes, multiply-adds or, for memory-bound
    layers, -bytes read and written)."""
    import torch
    from torch import nn

    class Linear(nn.Module):
        def __init__(self, k, n, act=None, residual=False):
            super().__init__()
            self.fc, self.act, self.residual = nn.Linear(k, n), act, residual

        def forward(self, x):
            y = self.fc(x)
            if self.act == "gelu":
                y = nn.functional.gelu(y)
            if self.residual:
                y = y + x[..., : y.shape[-1]]
            return y

    class ConvBN(nn.Module):
        def __init__(self, c, o, k, s, p, relu=True, groups=1):
            super().__init__()
            self.conv = nn.Conv2d(c, o, k, s, p, bias=False, groups=groups)
            self.bn, self.relu = nn.BatchNorm2d(o), relu
            self.bn.running_mean.uniform_(-0.1, 0.1)
            self.bn.running_var.uniform_(0.5, 1.5)

        def forward(self, x):
            y = self.bn(self.conv(x))
            return torch.relu(y) if self.relu else y

    class Attention(nn.Module):
        def __init__(self, heads):
            super().__init__()
            self.heads = heads

        def forward(self, q, k, v):
            return nn.functional.scaled_dot_product_attention(q, k, v)

    class MatMul(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.w = nn.Parameter(torch.randn(n, n))

        def forward(self, x):
            return x @ self.w

    class Softmax(nn.Module):
        def forward(self, x):
            return torch.softmax(x, -1)

    class MaxPool(nn.Module):
        def __init__(self, k, s, p):
            super().__init__()
            self.pool = nn.MaxPool2d(k, s, p)

        def forward(self, x):
            return self.pool(x)

    out = {"matmul 1024^3 (x @ W)": ("matmul", lambda: MatMul(1024), [(1024, 1024)], 1024**3)}
    for model, m in (("bert", 128), ("vit", 197)):
        out[f"{model} layer norm {m}x768 (GB/s)"] = (model, lambda: nn.LayerNorm(768), [(1, m, 768)],
                                                    -2 * 4 * m * 768)
        out[f"{model} softmax 12x{m}x{m} (GB/s)"] = (model, Softmax, [(1, 12, m, m)], -2 * 4 * 12 * m * m)
        out[f"{model} qkv/out proj {m}x768x768"] = (model, lambda: Linear(768, 768), [(1, m, 768)],
                                                    m * 768 * 768)
        out[f"{model} ffn1 {m}x768x3072 +gelu"] = (model, lambda: Linear(768, 3072, "gelu"), [(1, m, 768)],
                                                  m * 768 * 3072)
        out[f"{model} ffn2 {m}x3072x768 +res"] = (model, lambda: Linear(3072, 768, residual=True),
                                                 [(1, m, 3072)], m * 3072 * 768)
        out[f"{model} attention 12x{m}x{m}x64"] = (model, lambda: Attention(12), [(1, 12, m, 64)] * 3,
                                                  2 * 12 * m * m * 64)
    out["vit patch embed 16x16/16 3->768"] = ("vit", lambda: ConvBN(3, 768, 16, 16, 0, False),
                                              [(1, 3, 224, 224)], 768 * 3 * 256 * 196)
    convs = {  # (in channels, out channels, input size, kernel, stride, padding)
        "resnet18": [(3, 64, 224, 7, 2, 3), (64, 64, 56, 3, 1, 1), (64, 128, 56, 3, 2, 1),
                     (64, 128, 56, 1, 2, 0), (128, 128, 28, 3, 1, 1), (256, 256, 14, 3, 1, 1),
                     (512, 512, 7, 3, 1, 1)],
        "resnet50": [(64, 256, 56, 1, 1, 0), (256, 64, 56, 1, 1, 0), (64, 64, 56, 3, 1, 1),
                     (512, 128, 28, 1, 1, 0), (1024, 256, 14, 1, 1, 0), (256, 256, 14, 3, 1, 1),
                     (2048, 512, 7, 1, 1, 0), (512, 512, 7, 3, 1, 1)],
    }  # fmt: skip
    for model, shapes in convs.items():
        for c, o, size, k, s, p in shapes:
            osz = (size + 2 * p - k) // s + 1
            name = f"{model} conv {k}x{k}/{s} {c}->{o} @{size}"
            out[name] = (model, (lambda c=c, o=o, k=k, s=s, p=p: ConvBN(c, o, k, s, p)), [(1, c, size, size)],
                         c * o * k * k * osz * osz)
    for c, size, k, s, p in [(64, 112, 3, 2, 1), (64, 56, 3, 2, 0)]:  # ResNet's, the ONNX models' max pools
        osz = (size + 2 * p - k) // s + 1
        out[f"pooling max {k}x{k}/{s} {c} @{size} (GB/s)"] = (
            "pooling", (lambda k=k, s=s, p=p: MaxPool(k, s, p)), [(1, c, size, size)],
            -4 * c * (size * size + osz * osz))
    for c, size, s in [(32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1), (192, 28, 2),
                       (576, 14, 1), (576, 14, 2), (960, 7, 1)]:
        osz = (size + 2 - 3) // s + 1  # MobileNetV2's depthwise 3x3 layers (groups = channels)
        out[f"mobilenet depthwise 3x3/{s} {c} @{size}"] = (
            "mobilenet", (lambda c=c, s=s: ConvBN(c, c, 3, s, 1, groups=c)), [(1, c, size, size)],
            c * 9 * osz * osz)
    return out


def _timer(threads: int):
    clock = time.thread_time if threads == 1 else time.perf_counter

    def best(fn, repeat: int) -> float:
        fn()
        t = 1e9
        for _ in range(repeat):
            start = clock()
            fn()
            t = min(t, clock() - start)
        return t

    return best


def candidates(factory, shapes, threads: int):
    """name -> zero-argument callable running the layer once."""
    import onnxruntime as ort
    import torch

    torch.manual_seed(0)
    module = factory().eval()
    inputs = tuple(torch.randn(*s) for s in shapes)
    arrays = [x.numpy() for x in inputs]
    with torch.no_grad():
        exported = torch.export.export(module, inputs)
        buf = io.BytesIO()
        torch.onnx.export(module, inputs, buf, dynamo=False, opset_version=17)
    vm = relax.VirtualMachine(graphc.compile(exported), graphc.cpu())
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(buf.getvalue(), so, providers=["CPUExecutionProvider"])
    feed = {i.name: a for i, a in zip(sess.get_inputs(), arrays)}
    main = vm["main"]
    with torch.no_grad():
        want = module(*inputs).numpy()
    got = main(*arrays)
    got = (got[0] if isinstance(got, tuple | list) else got).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)

    def run_torch():
        with torch.no_grad():
            module(*inputs)

    out = {"graphc": lambda: main(*arrays), "torch": run_torch, "onnxruntime": lambda: sess.run(None, feed)}
    if hasattr(module, "w"):  # the plain matmul: numpy on the same arrays
        w = module.w.detach().numpy()
        out["numpy"] = lambda: arrays[0] @ w
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=10)
    groups = "matmul bert vit resnet18 resnet50 mobilenet pooling"
    parser.add_argument("--only", nargs="*", help=f"groups: {groups}")
    opts = parser.parse_args(argv)
    import llvmlite.binding as llvm
    import threadpoolctl
    import torch

    torch.set_num_threads(opts.threads)
    graphc.runtime.set_num_threads(opts.threads)
    best = _timer(opts.threads)
    clock = "thread CPU time" if opts.threads == 1 else "wall time"
    print(f"cpu {llvm.get_host_cpu_name()}, {opts.threads} thread(s), best {clock} of 3 x {opts.repeat}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    head = (f"{'layer':42s} {'graphc':>15s} {'torch':>15s} {'ORT':>15s} {'numpy':>15s}  graphc/ORT  "
            f"graphc/numpy")
    print(head + "\n" + "-" * len(head))
    with threadpoolctl.threadpool_limits(opts.threads):
        for name, (group, factory, shapes, macs) in layers().items():
            if opts.only and group not in opts.only:
                continue
            runs = candidates(factory, shapes, opts.threads)
            times = {k: [] for k in runs}
            for _ in range(3):
                for k, fn in runs.items():
                    times[k].append(best(fn, opts.repeat))
            t = {k: min(v) for k, v in times.items()}
            work = 2 * macs if macs > 0 else -macs  # flops, or bytes moved
            cell = {k: f"{t[k] * 1e3:7.3f} ms {work / t[k] / 1e9:4.0f}" for k in t}
            cell.setdefault("numpy", " " * 15)
            ratio_np = f"{t['graphc'] / t['numpy']:10.2f}x" if "numpy" in t else ""
            print(f"{name:42s} {cell['graphc']} {cell['torch']} {cell['onnxruntime']} {cell['numpy']} "
                  f"{t['graphc'] / t['onnxruntime']:10.2f}x {ratio_np}")
    print(f"(ms and GFLOP/s per cell, GB/s for the memory-bound rows; load average after: "
          f"{os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
