"""Quickstart: a PyTorch model through graphc, showing the IR at every stage.

    .venv/bin/python examples/quickstart.py [--quiet]

1. export a small PyTorch model with `torch.export` and import it (`from_exported_program`);
2. legalize it (`LegalizeOps`) and run the "zero" pipeline (fusion);
3. compile it for the CPU (`graphc.compile`: default schedules, LLVM, VM bytecode);
4. run it in the VM, compare with PyTorch, and time both.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

import graphc
from graphc import relax
from graphc.frontend import detach_params
from graphc.frontend.torch import from_exported_program


class TorchModel(nn.Module):
    """The tutorial's MLP."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


def stage(title: str, mod, quiet: bool) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))
    if quiet:
        print(f"functions: {', '.join(gv.name_hint for gv in mod.get_global_vars())}")
    else:
        mod.show()


def best_of(fn, repeat: int = 200) -> float:
    """Best wall time of `fn()` in microseconds (after a warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quiet", action="store_true", help="list the functions instead of printing the IR")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = TorchModel().eval()
    example = (torch.randn(1, 784),)
    with torch.no_grad():
        exported = torch.export.export(model, example)
    mod = from_exported_program(exported, keep_params_as_input=True, unwrap_unit_return_tuple=True)
    mod, params = detach_params(mod)
    stage("1. imported from PyTorch", mod, args.quiet)

    mod = relax.transform.LegalizeOps()(mod)
    stage("2. after LegalizeOps: operators are calls of TensorIR functions", mod, args.quiet)

    mod = relax.get_pipeline("zero")(mod)
    stage('3. after the "zero" pipeline: fused kernels', mod, args.quiet)

    exe = graphc.compile(mod, target="llvm")
    print("\n=== 4. the VM bytecode " + "=" * 48)
    print(exe.as_text())
    print(exe.stats())

    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = torch.randn(1, 784)
    weights = params["main"]
    out = vm["main"](x, *weights).numpy()
    with torch.no_grad():
        expected = model(x).numpy()
    err = float(np.max(np.abs(out - expected)))
    print("\n=== 5. results " + "=" * 56)
    print(f"graphc : {np.array2string(out[0], precision=4)}")
    print(f"PyTorch: {np.array2string(expected[0], precision=4)}")
    print(f"max |difference| = {err:.2e}")
    assert np.allclose(out, expected, rtol=1e-4, atol=1e-5), "graphc and PyTorch disagree"

    with torch.no_grad():
        torch_us = best_of(lambda: model(x))
    graphc_us = best_of(lambda: vm["main"](x, *weights))
    print(f"\nlatency at batch 1 (best of 200): PyTorch eager {torch_us:.1f} us, graphc {graphc_us:.1f} us "
          f"(ratio {graphc_us / torch_us:.2f}x)")
    print("\nper-kernel profile of one call:")
    print(vm.profile("main", x, *weights))


if __name__ == "__main__":
    main()
