"""Latency of the IRModule tutorial's MLP (784-256-10) at batch 1: graphc's VM vs PyTorch eager.

Two graphc variants: the tutorial's (weights passed on every call, so each call also
transposes them) and weights bound at compile time (`graphc.compile(mod, params=...)`, so
constant folding transposes them once). Prints each latency and the ratio to PyTorch;
the target is at most 2x.

    .venv/bin/python benchmarks/mlp_latency.py [--repeat 20] [--number 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import graphc
from graphc import relax
from graphc.script import ir as I
from graphc.script import relax as R


@I.ir_module
class TutorialMLP:
    @R.function
    def main(
        x: R.Tensor((1, 784), dtype="float32"),
        fc1_weight: R.Tensor((256, 784), dtype="float32"),
        fc1_bias: R.Tensor((256,), dtype="float32"),
        fc2_weight: R.Tensor((10, 256), dtype="float32"),
        fc2_bias: R.Tensor((10,), dtype="float32"),
    ) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            permute_dims = R.permute_dims(fc1_weight, axes=None)
            matmul = R.matmul(x, permute_dims, out_dtype="void")
            add = R.add(matmul, fc1_bias)
            relu = R.nn.relu(add)
            permute_dims1 = R.permute_dims(fc2_weight, axes=None)
            matmul1 = R.matmul(relu, permute_dims1, out_dtype="void")
            add1 = R.add(matmul1, fc2_bias)
            gv = add1
            R.output(gv)
        return gv


def best_us(fn, number: int, repeat: int) -> float:
    """The best of `repeat` measurements, each the mean over `number` calls, in microseconds."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).eval()
    weights = [p.detach().numpy().copy() for p in model.parameters()]
    names = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    x = torch.rand(1, 784)
    with torch.no_grad():
        expected = model(x).numpy()

    exe_inputs = graphc.compile(TutorialMLP, target="llvm")
    exe_bound = graphc.compile(TutorialMLP, target="llvm", params=dict(zip(names, weights)))
    vm_inputs = relax.VirtualMachine(exe_inputs, graphc.cpu())
    vm_bound = relax.VirtualMachine(exe_bound, graphc.cpu())
    data = graphc.runtime.tensor(x.numpy())
    params = [graphc.runtime.tensor(w) for w in weights]
    np.testing.assert_allclose(vm_inputs["main"](data, *params).numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(vm_bound["main"](data).numpy(), expected, rtol=1e-4, atol=1e-5)

    f_inputs, f_bound = vm_inputs["main"], vm_bound["main"]

    def run_torch():
        with torch.no_grad():
            model(x)

    t_torch = best_us(run_torch, args.number, args.repeat)
    t_bound = best_us(lambda: f_bound(data), args.number, args.repeat)
    t_inputs = best_us(lambda: f_inputs(data, *params), args.number, args.repeat)
    print(f"threads: torch {torch.get_num_threads()}, graphc {graphc.runtime.get_num_threads()}")
    print(f"PyTorch eager:                   {t_torch:8.1f} us")
    print(f"graphc, weights bound (folded):  {t_bound:8.1f} us   ratio {t_bound / t_torch:.2f}x"
          "  (target <= 2x)")
    print(f"graphc, weights as inputs:       {t_inputs:8.1f} us   ratio {t_inputs / t_torch:.2f}x")
    print("per-kernel profile (weights bound):")
    print(vm_bound.profile("main", data))


if __name__ == "__main__":
    main()
