"""The VM's own cost: a chain of 100 tiny elementwise kernels, in microseconds per kernel call.

Each kernel adds 1 to a 4-element tensor, so nearly all the time is the VM's: decoding is
done at load time, and what remains per kernel call is filling the argument slots, the
foreign call and the memory plan's (reused) allocation. Target: under 3 us per call.

    .venv/bin/python benchmarks/vm_overhead.py [--kernels 100] [--repeat 7]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import graphc
from graphc import relax


def chain_module(num_kernels: int, size: int = 4):
    """`main(x)`: x + 1 + 1 + ... (num_kernels adds), each its own call_tir (legalized, not fused)."""
    x = relax.Var("x", relax.TensorStructInfo((size,), "float32"))
    one = relax.const(np.ones(size, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for _ in range(num_kernels - 1):
                value = bb.emit(relax.op.add(value, one))
            out = bb.emit_output(relax.op.add(value, one))
        bb.emit_func_output(out)
    # legalize only: graphc.compile then skips the zero pipeline, so FuseOps cannot merge the chain
    return relax.transform.LegalizeOps()(bb.get())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args()

    start = time.perf_counter()
    exe = graphc.compile(chain_module(args.kernels), target="llvm")
    compile_s = time.perf_counter() - start
    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = graphc.runtime.tensor(np.zeros(4, "float32"))
    out = vm["main"](x)
    assert np.allclose(out.numpy(), args.kernels), out
    kernels = sum(1 for f in exe.functions if f.kind == "kernel")
    result = vm.time_evaluator("main", graphc.cpu(), number=args.number, repeat=args.repeat)(x)
    per_call_us = result.min / args.kernels * 1e6
    print(f"compiled {args.kernels} kernel calls ({kernels} distinct kernels) in {compile_s:.2f} s")
    print(f"main: {result.min * 1e6:.1f} us per run (best of {args.repeat}), "
          f"median {result.median * 1e6:.1f} us")
    print(f"VM overhead: {per_call_us:.2f} us per kernel call (target < 3 us)")


if __name__ == "__main__":
    main()
