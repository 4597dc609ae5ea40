"""Full-size BERT-base and DistilBERT with a dynamic batch (1-8) and sequence (2-512): compiled
once, compared with torch at four sizes, timed, and called past the declared range.

`tests/frontend/test_torch_bert_dynamic.py` checks the same with small configs; this runs the
models' default (base) configs, whose sequence range stops at max_position_embeddings (512),
so a call at 513 raises ValueError naming the declared range before anything runs. Each row
prints the size, graphc's and torch's time per call (best of `--calls`, this process, the
threads as configured) and the largest difference from torch's last_hidden_state.

    .venv/bin/python benchmarks/bert_dynamic.py [--models bert distilbert] [--calls 2]
        [--sizes 1x2 3x77 8x128 1x512]

Needs `transformers` (the test extra). Minutes on a loaded 2-core machine.

Measured on the shared 2-core machine (load average 17-27, all threads; the times are the
load's more than the models'): BERT-base imported in 25 s and compiled once in 48 s,
DistilBERT in 36 s and 62 s; at 1x2, 3x77, 8x128 and 1x512 the largest difference from torch
was 5.4e-6 to 7.5e-6 (BERT-base) and 4.8e-6 to 6.2e-6 (DistilBERT); at 513 both raise
ValueError naming the declared range [2, 512].
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

import graphc
from graphc import relax
from graphc.frontend.torch import from_exported_program


def make_model(name: str):
    import transformers

    if name == "bert":
        return transformers.BertModel(transformers.BertConfig()).eval()
    return transformers.DistilBertModel(transformers.DistilBertConfig()).eval()


def best(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench(name: str, sizes: list[tuple[int, int]], calls: int) -> None:
    torch.manual_seed(0)
    model = make_model(name)
    vocab, top = model.config.vocab_size, model.config.max_position_embeddings
    batch = torch.export.Dim("batch", min=1, max=8)
    seq = torch.export.Dim("seq", min=2, max=top)
    t0 = time.perf_counter()
    with torch.no_grad():
        example = (torch.randint(0, vocab, (2, 8)),)
        ep = torch.export.export(model, example, dynamic_shapes=({0: batch, 1: seq},))
    mod = from_exported_program(ep)
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    vm = relax.VirtualMachine(graphc.compile(mod), graphc.cpu())
    run = vm["main"]
    compile_s = time.perf_counter() - t0
    print(f"{name} (base config, batch 1-8, sequence 2-{top}): exported and imported in {import_s:.0f} s, "
          f"compiled once in {compile_s:.0f} s")
    rng = np.random.default_rng(0)
    for b, s in sizes:
        ids = rng.integers(0, vocab, (b, s))
        got = run(ids).last_hidden_state.numpy()
        with torch.no_grad():
            want = model(torch.from_numpy(ids)).last_hidden_state.numpy()
        diff = float(np.abs(got - want).max())
        ok = np.allclose(got, want, rtol=1e-3, atol=1e-4)
        t_graphc = best(lambda ids=ids: run(ids), calls)
        with torch.no_grad():
            t_torch = best(lambda ids=ids: model(torch.from_numpy(ids)), calls)
        print(f"  batch {b} seq {s:3d}: max |graphc - torch| {diff:.2e} ({'matches' if ok else 'DIFFERS'}); "
              f"graphc {t_graphc * 1e3:9.1f} ms, torch {t_torch * 1e3:8.1f} ms per call")
    try:
        run(rng.integers(0, vocab, (1, top + 1)))
        print(f"  seq {top + 1}: no error (WRONG)")
    except ValueError as err:
        print(f"  seq {top + 1}: ValueError: {str(err).splitlines()[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["bert", "distilbert"], choices=["bert", "distilbert"])
    parser.add_argument("--sizes", nargs="+", default=["1x2", "3x77", "8x128", "1x512"])
    parser.add_argument("--calls", type=int, default=2)
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes]
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cpus, "
          f"GRAPHC_NUM_THREADS={os.environ.get('GRAPHC_NUM_THREADS', '(all)')}")
    for name in args.models:
        bench(name, sizes, args.calls)


if __name__ == "__main__":
    main()
