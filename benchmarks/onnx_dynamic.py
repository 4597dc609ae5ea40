"""Full-size BERT-base and GPT-2 small exported to ONNX (`torch.onnx.export`, opset 17) with a
dynamic batch and sequence and with static (2 x 8, 1 x 8) inputs: each compiled once, the
compile timed in CPU time (this process; the two exports of a model interleaved, best of
`--repeat`), and the dynamic one run at several sizes against ONNX Runtime.

    .venv/bin/python benchmarks/onnx_dynamic.py [--models bert gpt2] [--repeat 1]
        [--sizes 1x5 2x8 3x77]

Needs `transformers` and `onnxruntime` (the test extra). Minutes on a loaded 2-core machine.
The compile cache is off (GRAPHC_CACHE=0 is set here), so every compile is a real one.

Measured on the shared 2-core machine (llvmlite host CPU "znver5", load average 17.8, CPU
time, one compile each): BERT-base dynamic compiled in 10.5 s, static in 3.3 s (the dynamic
export did not finish compiling in 15 minutes before the importer folded the exporter's shape
chains); GPT-2 small dynamic in 10.0 s, static in 3.3 s. The static exports are specialised to
a sequence of 8, whose kernels are smaller. The dynamic executables matched ONNX Runtime at
1x5, 2x8 and 3x77 (largest difference 2.9e-6 of the largest value).
"""

from __future__ import annotations

import argparse
import io
import os
import time
import warnings

os.environ["GRAPHC_CACHE"] = "0"

import numpy as np  # noqa: E402
import torch  # noqa: E402


class _ByName(torch.nn.Module):
    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)), return_dict=False)


def make_model(name: str):
    import transformers

    if name == "bert":
        model = transformers.BertModel(transformers.BertConfig())
        return model.eval(), ["input_ids", "attention_mask"], 2
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(use_cache=False))
    return model.eval(), ["input_ids", "attention_mask", "position_ids"], 1


def make_inputs(names, vocab: int, batch: int, seq: int, rng) -> list:
    values = [rng.integers(0, vocab, (batch, seq)), np.ones((batch, seq), dtype=np.int64),
              np.broadcast_to(np.arange(seq), (batch, seq)).copy()]
    return values[: len(names)]


def export(model, names, example, dynamic: bool):
    import onnx

    buffer = io.BytesIO()
    axes = {n: {0: "batch", 1: "sequence"} for n in names} if dynamic else None
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_ByName(model, names), tuple(torch.from_numpy(x) for x in example), buffer,
                          input_names=names, opset_version=17, dynamo=False, dynamic_axes=axes)
    return onnx.load_from_string(buffer.getvalue())


def compile_cpu_seconds(proto):
    import graphc
    from graphc.frontend.onnx import from_onnx

    t0 = time.process_time()
    mod = from_onnx(proto)
    t1 = time.process_time()
    exe = graphc.compile(mod, "llvm")
    return t1 - t0, time.process_time() - t1, exe


def bench(name: str, sizes, repeat: int) -> None:
    import onnxruntime as ort

    from graphc import cpu, relax

    torch.manual_seed(0)
    model, names, batch = make_model(name)
    vocab = model.config.vocab_size
    rng = np.random.default_rng(0)
    example = make_inputs(names, vocab, batch, 8, rng)
    protos = {kind: export(model, names, example, kind == "dynamic") for kind in ("dynamic", "static")}
    times = {kind: [] for kind in protos}
    exes = {}
    for _ in range(repeat):  # interleaved: dynamic, static, dynamic, static, ...
        for kind, proto in protos.items():
            imp, comp, exes[kind] = compile_cpu_seconds(proto)
            times[kind].append((imp, comp))
    for kind, runs in times.items():
        imp, comp = min(runs, key=lambda r: r[1])
        print(f"{name} {kind:7s}: import {imp:5.1f} s, compile {comp:5.1f} s CPU (best of {len(runs)})")
    vm = relax.VirtualMachine(exes["dynamic"], cpu())
    session = ort.InferenceSession(protos["dynamic"].SerializeToString(), providers=["CPUExecutionProvider"])
    for b, s in sizes:
        feeds = make_inputs(names, vocab, b, s, rng)
        got = vm["main"](*feeds)
        got = [got] if not isinstance(got, list | tuple) else list(got)
        want = session.run(None, dict(zip(names, feeds)))
        worst = 0.0
        ok = True
        for g, w in zip(got, want):
            g = g.numpy()
            worst = max(worst, float(np.abs(g - w).max() / (np.abs(w).max() + 1e-12)))
            ok = ok and g.shape == w.shape and np.allclose(g, w, rtol=1e-4, atol=1e-5)
        print(f"  dynamic at batch {b} sequence {s:3d}: {'matches' if ok else 'DIFFERS from'} ONNX Runtime "
              f"(largest difference {worst:.1e} of the largest value)")


def main() -> None:
    import llvmlite.binding as llvm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["bert", "gpt2"], choices=["bert", "gpt2"])
    parser.add_argument("--sizes", nargs="+", default=["1x5", "2x8", "3x77"])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes]
    print(f"host CPU {llvm.get_host_cpu_name()}, load average {os.getloadavg()}, {os.cpu_count()} cpus")
    for name in args.models:
        bench(name, sizes, args.repeat)


if __name__ == "__main__":
    main()
