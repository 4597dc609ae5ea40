"""The cost of checked indices end to end: BERT-base and GPT-2 with and without the checks.

Every kernel that addresses memory from data checks the index first (`tir.check_index`; see
docs/codegen.md, "Run-time checks"). This compiles each model twice from one import: as
graphc compiles it (checked), and with every indexing operator switched to the explicit
unchecked opt-in `mode="fast"` (unchecked). Both executables run in this process, alternating
round by round so that the load of a shared machine hits both alike; the figure is the median
over rounds of checked/unchecked time, with its spread (min, quartiles, max), in wall time and
in the process's CPU time (which a loaded machine does not inflate, with one thread: run it
with GRAPHC_NUM_THREADS=1 on a shared machine). A second figure
counts the time where it is spent: the kernels that hold a check, profiled in both builds,
their difference as a share of the whole call (robust to load that swamps a 1% difference).

    .venv/bin/python benchmarks/index_checks.py [--models bert gpt2] [--seq 128] [--rounds 21]
        [--calls 5] [--layers 12]

`--layers 2` makes a quick run. Needs `transformers` (the test extra).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch

import graphc
from graphc import relax
from graphc.frontend.torch import from_exported_program

INDEXING_OPS = ("relax.take", "relax.gather_elements", "relax.gather_nd", "relax.scatter_elements",
                "relax.scatter_nd")


class _Unchecked(relax.ExprMutator):
    """Every indexing call with mode="fast" (the unchecked opt-in graphc itself never uses)."""

    def visit_Call(self, call):  # noqa: N802 - the mutator's naming
        call = super().visit_Call(call)
        if isinstance(call.op, relax.Op) and call.op.name in INDEXING_OPS:
            return relax.Call(call.op, call.args, {**call.attrs, "mode": "fast"}, call.sinfo_args, call.span)
        return call


def unchecked(mod):
    mutator = _Unchecked(mod)
    out = mod.copy()
    for gv, func in mod.items():
        if isinstance(func, relax.Function):
            out[gv] = mutator.visit_expr(func)
    return out


def make_model(name: str, layers: int):
    import transformers

    if name == "bert":
        return transformers.BertModel(transformers.BertConfig(num_hidden_layers=layers)).eval()
    return transformers.GPT2Model(transformers.GPT2Config(n_layer=layers, use_cache=False)).eval()


def count_indexing(mod) -> int:
    found = []

    class Count(relax.ExprVisitor):
        def visit_Call(self, call):  # noqa: N802
            super().visit_Call(call)
            if isinstance(call.op, relax.Op) and call.op.name in INDEXING_OPS:
                found.append(call.op.name)

    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            Count().visit_expr(func)
    return len(found)


def checked_kernels(vm) -> set:
    """Names of the kernels with an index check (an error entry of type IndexError)."""
    names = set()
    for findex, entry in enumerate(vm.executable.functions):
        if entry.kind == "kernel":
            errors = vm.kernel(findex).errors
            if any(isinstance(e, dict) and e.get("type") == "IndexError" for e in errors):
                names.add(entry.name)
    return names


def kernel_time(vm, names: set, x, repeat: int) -> tuple[float, float]:
    """(median seconds spent in the kernels `names`, median seconds of the whole call) per call."""
    spent, totals = [], []
    for _ in range(repeat):
        report = vm.profile("main", x)
        spent.append(sum(row.total for row in report.rows if row.name in names))
        totals.append(report.total)
    return statistics.median(spent), statistics.median(totals)


def per_call(fn, ids, calls: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) per call, the best of `calls` calls each."""
    wall, cpu = [], []
    for _ in range(calls):
        w, c = time.perf_counter(), time.process_time()
        fn(ids)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return min(wall), min(cpu)


def bench(name: str, seq: int, rounds: int, calls: int, layers: int) -> None:
    torch.manual_seed(0)
    model = make_model(name, layers)
    ids = torch.randint(0, 1000, (1, seq))
    with torch.no_grad():
        mod = from_exported_program(torch.export.export(model, (ids,)))
    t0 = time.perf_counter()
    checked_vm = relax.VirtualMachine(graphc.compile(mod), graphc.cpu())
    fast_vm = relax.VirtualMachine(graphc.compile(unchecked(mod)), graphc.cpu())
    checked, fast = checked_vm["main"], fast_vm["main"]
    compile_s = time.perf_counter() - t0
    x = ids.numpy()
    a, b = checked(x), fast(x)
    a, b = a[0], b[0]  # last_hidden_state: the results are shaped like the model's
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    for _ in range(2):  # warm up both
        checked(x), fast(x)
    ratios: dict = {"wall": [], "cpu": []}
    times: dict = {"checked": [], "unchecked": []}
    for r in range(rounds):
        order = [("checked", checked), ("unchecked", fast)]
        if r % 2:
            order.reverse()
        got = {label: per_call(fn, x, calls) for label, fn in order}
        for label, t in got.items():
            times[label].append(t)
        for k, clock in enumerate(("wall", "cpu")):
            ratios[clock].append(got["checked"][k] / got["unchecked"][k])
    print(f"{name} ({layers} layers, seq {seq}, {count_indexing(mod)} indexing calls; both compiled in "
          f"{compile_s:.0f} s; {rounds} rounds, the best of {calls} calls each)")
    for label in ("checked", "unchecked"):
        wall = statistics.median(t[0] for t in times[label])
        cpu = statistics.median(t[1] for t in times[label])
        print(f"  {label:9s} median {wall * 1e3:8.2f} ms wall, {cpu * 1e3:8.2f} ms CPU per call")
    for clock in ("wall", "cpu"):  # CPU time is what load does not inflate (with one thread)
        values = ratios[clock]
        q = statistics.quantiles(values, n=4)
        print(f"  checked / unchecked ({clock:4s}): median {statistics.median(values):.4f}  "
              f"(min {min(values):.4f}, quartiles {q[0]:.4f} .. {q[2]:.4f}, max {max(values):.4f}); overhead "
              f"{100 * (statistics.median(values) - 1):+.2f} %")
    # The same, counted where it is spent: the kernels holding a check, in both builds
    names = checked_kernels(checked_vm)
    with_checks, total = kernel_time(checked_vm, names, x, max(3, rounds // 3))
    without, _ = kernel_time(fast_vm, names, x, max(3, rounds // 3))
    print(f"  the {len(names)} kernels with checks ({', '.join(sorted(names))}): {with_checks * 1e6:.1f} us "
          f"checked, {without * 1e6:.1f} us unchecked per call; the difference is "
          f"{100 * (with_checks - without) / total:+.3f} % of the call ({total * 1e3:.1f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["bert", "gpt2"], choices=["bert", "gpt2"])
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--layers", type=int, default=12)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cpus, GRAPHC_NUM_THREADS="
          f"{os.environ.get('GRAPHC_NUM_THREADS', '(all)')}")
    for name in args.models:
        bench(name, args.seq, args.rounds, args.calls, args.layers)


if __name__ == "__main__":
    main()
