"""Real models end to end: graphc against PyTorch eager, torch.compile and ONNX Runtime, in one run.

    .venv/bin/python benchmarks/models.py [--only NAME ...] [--skip NAME ...] [--peers ...]
        [--rounds 7] [--min-round-s 0.2] [--json out.json]

The models (`transformers` ones built from their config classes, random weights, batch 1;
`pip install -e .[bench]`):

    mlp-1, mlp-64        MLP 784-256-10 (the IRModule tutorial's), batch 1 and 64
    matmul-1024          x @ W, 1024 x 1024 x 1024 float32
    bert-32/128/512      BERT-base, sequence 32, 128, 512 (last hidden state)
    gpt2-32/128/512      GPT-2 small, sequence 32, 128, 512 (last hidden state)
    vit-base             ViT-base/16 at 224 x 224 (last hidden state)
    resnet18, resnet50   ResNet-18/50 at 224 x 224 (logits)
    onnx-<name>          the nine light models that ship with `onnx` (graphc and ONNX Runtime
                         only), once `graphc.frontend.onnx` exists

For each model: graphc's compile time (the torch import, then `graphc.compile` cold in a
fresh cache directory, also as CPU seconds, which the load of other processes does not
inflate; then warm: the same module again, a compile-cache hit), the median
latency of every peer, timed in interleaved rounds (each round times every peer for at least
`--min-round-s`, so a burst of load from other processes hits them all alike; before its turn a
peer gets a pause of `SETTLE_S` and one untimed call, so the previous peer's threads have gone to
sleep: ONNX Runtime's spinning workers, still spinning when graphc's turn started, made ViT-base
time 87.5 ms interleaved against 74.6 ms alone, znver5, 2 threads), the ratio of
each to ONNX Runtime, and whether the outputs agree (max |a - b| / max |reference|, against
PyTorch eager, or ONNX Runtime for the ONNX models). Then graphc's top kernels with their
share of the time and their GFLOP/s, the FLOPs counted on the fused tensor programs, next to
the machine's measured peak (the better of numpy's 1024^3 sgemm with OpenBLAS picking its own
kernel, and the hand-written micro-kernel of `matmul.py` on one core times the threads).

ONNX Runtime runs the model exported by `torch.onnx.export` at opset 17 (the TorchScript
exporter; where that one fails, GPT-2, the dynamo exporter at opset 18), with as many intra-op
threads as graphc and torch. The load average and the host CPU are printed with the numbers: on the 2-core
machine, compare runs whose load is low.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field

for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # let OpenBLAS (numpy, torch) pick its kernel
    os.environ.pop(_var, None)

import warnings  # noqa: E402

import numpy as np  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)  # torch.export's and transformers' notices
warnings.filterwarnings("ignore", category=DeprecationWarning)  # the TorchScript ONNX exporter's

import graphc  # noqa: E402
from graphc import compile_cache, relax, tir  # noqa: E402

PEERS = ("graphc", "eager", "compile", "ort")
DYNAMO_OPSET = 18  # the dynamo exporter's own opset (see _onnx_export)
LIGHT_MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
                "squeezenet", "vgg19", "zfnet512")


# -- the models -----------------------------------------------------------------------------------


@dataclass
class Model:
    """A model to time: `make()` returns (torch module or ONNX path, example inputs as numpy)."""

    name: str
    make: object
    kind: str = "torch"  # or "onnx"


def _torch():
    import torch

    torch.manual_seed(0)
    return torch


def mlp(batch: int):
    torch = _torch()
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    return model, [np.random.default_rng(0).random((batch, 784), dtype=np.float32)]


def matmul(size: int = 1024):
    torch = _torch()

    class XW(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(size, size) / size**0.5)

        def forward(self, x):
            return x @ self.w

    return XW(), [np.random.default_rng(0).random((size, size), dtype=np.float32)]


class _LastHidden:
    """Wraps a `transformers` model so it returns one tensor (`last_hidden_state` or `logits`)."""

    @staticmethod
    def wrap(model, field_name: str):
        torch = _torch()

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = model

            def forward(self, x):
                return getattr(self.inner(x), field_name)

        return Wrapped()


def bert(seq: int):
    torch = _torch()
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig(), add_pooling_layer=False)
    ids = torch.randint(0, 30522, (1, seq)).numpy()
    return _LastHidden.wrap(model, "last_hidden_state"), [ids]


def gpt2(seq: int):
    torch = _torch()
    from transformers import GPT2Config, GPT2Model

    model = GPT2Model(GPT2Config(use_cache=False))
    ids = torch.randint(0, 50257, (1, seq)).numpy()
    return _LastHidden.wrap(model, "last_hidden_state"), [ids]


def vit():
    _torch()
    from transformers import ViTConfig, ViTModel

    model = ViTModel(ViTConfig(), add_pooling_layer=False)
    return _LastHidden.wrap(model, "last_hidden_state"), [
        np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32)]


def resnet(depth: int):
    _torch()
    from transformers import ResNetConfig, ResNetForImageClassification

    if depth == 18:
        config = ResNetConfig(layer_type="basic", depths=[2, 2, 2, 2], hidden_sizes=[64, 128, 256, 512])
    else:
        config = ResNetConfig(layer_type="bottleneck", depths=[3, 4, 6, 3],
                              hidden_sizes=[256, 512, 1024, 2048])
    model = ResNetForImageClassification(config)
    return _LastHidden.wrap(model, "logits"), [
        np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32)]


def light_onnx(name: str):
    import onnx

    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    path = os.path.join(light, f"light_{name}.onnx")
    model = onnx.load(path)
    inputs = []
    initializers = {i.name for i in model.graph.initializer}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        shape = [d.dim_value or 1 for d in value.type.tensor_type.shape.dim]
        inputs.append(np.random.default_rng(0).random(shape, dtype=np.float32))
    return path, inputs


MODELS = [
    Model("mlp-1", lambda: mlp(1)), Model("mlp-64", lambda: mlp(64)), Model("matmul-1024", matmul),
    *[Model(f"bert-{s}", lambda s=s: bert(s)) for s in (32, 128, 512)],
    *[Model(f"gpt2-{s}", lambda s=s: gpt2(s)) for s in (32, 128, 512)],
    Model("vit-base", vit), Model("resnet18", lambda: resnet(18)), Model("resnet50", lambda: resnet(50)),
    *[Model(f"onnx-{n}", lambda n=n: light_onnx(n), kind="onnx") for n in LIGHT_MODELS],
]


# -- FLOPs of tensor programs -----------------------------------------------------------------------


def _expr_flops(expr) -> int:
    """Floating-point operations of one evaluation of `expr` (loads' indices not counted)."""
    if isinstance(expr, tir.BufferLoad):
        return 0
    if isinstance(expr, tir.expr.BinaryOp):
        own = 1 if str(expr.dtype).startswith(("float", "bfloat")) else 0
        return own + _expr_flops(expr.a) + _expr_flops(expr.b)
    if isinstance(expr, tir.Call):
        own = 1 if str(expr.dtype).startswith(("float", "bfloat")) else 0
        return own + sum(_expr_flops(a) for a in expr.args if isinstance(a, tir.PrimExpr))
    if isinstance(expr, tir.Cast):
        return _expr_flops(expr.value)
    if isinstance(expr, tir.Select):
        return _expr_flops(expr.true_value) + _expr_flops(expr.false_value)
    return 0


def stmt_flops(stmt) -> int | None:
    """FLOPs of a (block-form, unscheduled) statement; None when a loop extent is symbolic."""
    from graphc.tir import stmt as s

    if isinstance(stmt, s.For):
        inner = stmt_flops(stmt.body)
        if inner is None or not isinstance(stmt.extent, tir.IntImm):
            return None if inner is None or inner else 0
        return inner * stmt.extent.value
    if isinstance(stmt, s.SeqStmt):
        parts = [stmt_flops(x) for x in stmt.seq]
        return None if None in parts else sum(parts)
    if isinstance(stmt, s.BlockRealize):
        return stmt_flops(stmt.block)
    if isinstance(stmt, s.Block):
        return stmt_flops(stmt.body)  # the reduction's init is not counted
    if isinstance(stmt, s.BufferStore):
        return _expr_flops(stmt.value)
    if isinstance(stmt, s.IfThenElse):
        parts = [stmt_flops(stmt.then_case), stmt_flops(stmt.else_case) if stmt.else_case else 0]
        return None if None in parts else max(parts)
    body = getattr(stmt, "body", None)
    return stmt_flops(body) if body is not None else 0


def kernel_flops(mod) -> dict[str, int]:
    """{kernel name: FLOPs} of the fused tensor programs of `mod`: `graphc.compile`'s own "fused"
    stage, so that the kernels have the names the profile gives them (the zero pipeline alone
    fuses an inference batch norm differently: no profiled kernel had its name)."""
    out = {}
    fused = graphc.driver.compile_to(mod, "fused", target="llvm", progress=lambda *a: None)
    for gv, func in fused.items():
        if isinstance(func, tir.PrimFunc):
            flops = stmt_flops(func.body)
            if flops:
                out[func.attrs.get("global_symbol", gv.name_hint)] = flops
    return out


# -- timing ---------------------------------------------------------------------------------------


SETTLE_S = 0.05  # the pause between two peers' turns: longer than ONNX Runtime's and libgomp's spins


def interleaved(fns: dict, rounds: int, min_round_s: float) -> dict[str, dict]:
    """{name: {"median", "best"} in seconds per call}: each round times every fn in turn, calling it
    repeatedly for at least `min_round_s`, after a pause of `SETTLE_S` and one untimed call (so no
    peer's threads still spin from its turn into the next one's)."""
    per_call: dict[str, list[float]] = {name: [] for name in fns}
    numbers = {}
    for name, fn in fns.items():  # warm up, and pick each one's calls per round
        start = time.perf_counter()
        fn()
        once = max(time.perf_counter() - start, 1e-7)
        numbers[name] = max(1, int(min_round_s / once))
    for _ in range(rounds):
        for name, fn in fns.items():
            n = numbers[name]
            time.sleep(SETTLE_S)
            fn()
            start = time.perf_counter()
            for _ in range(n):
                fn()
            per_call[name].append((time.perf_counter() - start) / n)
    return {name: {"median": statistics.median(t), "best": min(t)} for name, t in per_call.items()}


def disagreement(got, ref) -> float:
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return float("inf")
    scale = max(float(np.abs(ref).max()), 1e-30)
    return float(np.abs(got - ref).max()) / scale


@dataclass
class Result:
    name: str
    latency: dict = field(default_factory=dict)  # peer -> {"median", "best"} seconds
    compile_s: dict = field(default_factory=dict)  # "import", "cold", "warm", "torch.compile", "onnx export"
    agree: dict = field(default_factory=dict)  # peer -> relative max difference
    kernels: list = field(default_factory=list)  # (name, share, mean seconds, calls, GFLOP/s)
    total_flops: int = 0
    notes: list = field(default_factory=list)


def _onnx_export(model, inputs, path: str, notes: list) -> None:
    torch = _torch()
    args = tuple(torch.from_numpy(a) for a in inputs)
    try:
        with torch.no_grad():
            torch.onnx.export(model, args, path, opset_version=17, dynamo=False)
        return
    except Exception as err:  # noqa: BLE001 - the other exporter is tried
        notes.append(f"TorchScript exporter failed ({type(err).__name__}); dynamo exporter used")
    with torch.no_grad():
        # its native opset: converted down to 17, GPT-2's Split (`num_outputs`, opset 18) becomes a
        # graph ONNX Runtime rejects ("InvalidGraph ... node_Split")
        program = torch.onnx.export(model, args, dynamo=True, opset_version=DYNAMO_OPSET)
    program.save(path)


def _ort_session(path: str, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def run_model(spec: Model, peers: tuple, args, workdir: str) -> Result:
    result = Result(spec.name)
    threads = graphc.runtime.get_num_threads()
    source, inputs = spec.make()
    fns, outputs = {}, {}

    # graphc: import, cold compile (fresh cache directory), warm compile (a cache hit)
    start = time.perf_counter()
    if spec.kind == "torch":
        torch = _torch()
        source.eval()
        with torch.no_grad():
            exported = torch.export.export(source, tuple(torch.from_numpy(a) for a in inputs))
        result.compile_s["torch.export"] = time.perf_counter() - start
        from graphc.frontend.torch import from_exported_program

        start = time.perf_counter()
        mod = from_exported_program(exported)
    else:
        from graphc.frontend.onnx import from_onnx

        mod = from_onnx(source)
    result.compile_s["import"] = time.perf_counter() - start
    from graphc.target.llvm.object_compiler import POOL

    start, cpu, workers = time.perf_counter(), time.process_time(), POOL.cpu_seconds
    exe = graphc.compile(mod, target="llvm")
    result.compile_s["cold"] = time.perf_counter() - start
    # CPU seconds: what the compile costs whatever the load (this process's, and the most any
    # one of the LLVM worker processes running beside it spent: an upper bound of its share)
    result.compile_s["cold cpu"] = time.process_time() - cpu
    result.compile_s["workers cpu"] = POOL.cpu_seconds - workers
    compile_cache.wait()  # the entry is written in the background: as a new process would find it
    start = time.perf_counter()
    graphc.compile(mod, target="llvm")
    result.compile_s["warm"] = time.perf_counter() - start
    vm = relax.VirtualMachine(exe, graphc.cpu())
    g_inputs = [graphc.runtime.tensor(a) for a in inputs]
    main = vm["main"]

    def run_graphc():
        return main(*g_inputs)

    outputs["graphc"] = _first(run_graphc())
    fns["graphc"] = run_graphc

    if spec.kind == "torch":
        torch = _torch()
        t_inputs = [torch.from_numpy(a) for a in inputs]

        def run_eager():
            with torch.no_grad():
                return source(*t_inputs)

        outputs["eager"] = run_eager().numpy()
        if "eager" in peers:
            fns["eager"] = run_eager
        if "compile" in peers:
            try:
                compiled = torch.compile(source)
                start = time.perf_counter()
                with torch.no_grad():
                    outputs["compile"] = compiled(*t_inputs).numpy()
                result.compile_s["torch.compile"] = time.perf_counter() - start

                def run_compiled():
                    with torch.no_grad():
                        return compiled(*t_inputs)

                fns["compile"] = run_compiled
            except Exception as err:  # noqa: BLE001 - reported in the table
                result.notes.append(f"torch.compile failed: {type(err).__name__}: {str(err)[:120]}")
    if "ort" in peers:
        try:
            if spec.kind == "torch":
                path = os.path.join(workdir, f"{spec.name}.onnx")
                start = time.perf_counter()
                _onnx_export(source, inputs, path, result.notes)
                result.compile_s["onnx export"] = time.perf_counter() - start
            else:
                path = source
            session = _ort_session(path, threads)
            feed = {i.name: a for i, a in zip(session.get_inputs(), inputs)}
            outputs["ort"] = session.run(None, feed)[0]
            fns["ort"] = lambda: session.run(None, feed)
        except Exception as err:  # noqa: BLE001 - reported in the table
            result.notes.append(f"ONNX Runtime failed: {type(err).__name__}: {str(err)[:160]}")

    reference = outputs.get("eager", outputs.get("ort"))
    for peer, out in outputs.items():
        if out is not reference and reference is not None:
            result.agree[peer] = disagreement(out, reference)
    result.latency = interleaved(fns, args.rounds, args.min_round_s)

    # graphc's top kernels: their share of a profiled call and their GFLOP/s
    flops = kernel_flops(mod)
    report = vm.profile("main", *g_inputs)
    result.total_flops = sum(flops.get(r.name, 0) * r.calls for r in report.rows if r.kind == "kernel")
    for row in [r for r in report.rows if r.kind == "kernel"][:args.top]:
        f = flops.get(row.name)
        rate = f * row.calls / row.total / 1e9 if f and row.total else None
        result.kernels.append((row.name, row.share, row.mean, row.calls, rate))
    return result


def _first(value):
    while isinstance(value, tuple):
        value = value[0]
    return value.numpy()


# -- the machine ------------------------------------------------------------------------------------


def machine_peak(repeat: int) -> tuple[float, str]:
    """GFLOP/s: the best of numpy's 1024^3 sgemm (OpenBLAS's own kernel choice), its 512^3 on one
    thread times the cores, and threads times one core's micro-kernel rate: the probe the tuner's
    floor table uses (`graphc.tune.floor.machine_peak`), so the two report the same peak."""
    from graphc.tune.floor import machine_peak as probe

    return probe(repeat)


# -- the report -------------------------------------------------------------------------------------


def _ms(seconds) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.3f}" if seconds < 0.01 else f"{seconds * 1e3:.1f}"


def render(results: list[Result], peak: float, peak_how: str, header: str) -> str:
    out = io.StringIO()
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(header)
    p(f"measured peak: {peak:.0f} GFLOP/s ({peak_how})")
    p()
    p(f"{'model':14s} {'eager ms':>9s} {'t.compile':>9s} {'ORT ms':>9s} {'graphc ms':>9s} {'g/ORT':>6s} "
      f"{'g/eager':>7s} {'import s':>8s} {'cold s':>7s} {'cpu s':>6s} {'warm s':>7s} {'floor ms':>8s}  "
      "agree (vs eager/ORT)")
    for r in results:
        med = {k: v["median"] for k, v in r.latency.items()}
        g, o, e = med.get("graphc"), med.get("ort"), med.get("eager")
        ratio = f"{g / o:.2f}x" if g and o else "-"
        ratio_e = f"{g / e:.2f}x" if g and e else "-"
        floor = r.total_flops / peak / 1e9 if r.total_flops else None
        agree = ", ".join(f"{k} {v:.1e}" for k, v in r.agree.items())
        p(f"{r.name:14s} {_ms(e):>9s} {_ms(med.get('compile')):>9s} {_ms(o):>9s} {_ms(g):>9s} {ratio:>6s} "
          f"{ratio_e:>7s} {r.compile_s.get('import', 0):8.2f} {r.compile_s.get('cold', 0):7.2f} "
          f"{r.compile_s.get('cold cpu', 0):6.2f} "
          f"{r.compile_s.get('warm', 0):7.2f} {_ms(floor):>8s}  {agree}")
    p()
    p("graphc's top kernels (share of a profiled call, mean time per call, GFLOP/s, % of peak):")
    for r in results:
        total = r.total_flops / 1e9
        peer_compiles = [f"{k} {v:.1f}" for k, v in r.compile_s.items()
                         if k in ("torch.compile", "onnx export")]
        p(f"  {r.name}: {total:.2f} GFLOP in all; peer compile s: " + ", ".join(peer_compiles))
        for name, share, mean, calls, rate in r.kernels:
            rate_text = (f"{rate:7.1f} GFLOP/s {rate / peak * 100:5.1f}%" if rate
                         else "      - (no FLOPs counted)")
            p(f"    {share * 100:5.1f}%  {mean * 1e3:9.3f} ms x{calls:<3d} {rate_text}  {name}")
        for note in r.notes:
            p(f"    note: {note}")
    return out.getvalue()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="model names (or prefixes: bert, onnx) to run")
    parser.add_argument("--skip", nargs="*", default=[], help="model names or prefixes to leave out")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, from {','.join(PEERS)}")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-round-s", type=float, default=0.2)
    parser.add_argument("--top", type=int, default=4, help="kernels shown per model")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    peers = tuple(p for p in args.peers.split(",") if p)

    def chosen(name: str) -> bool:
        match = lambda keys: any(name == k or name.startswith(k + "-") or name.startswith(k) for k in keys)  # noqa: E731
        return (not args.only or match(args.only)) and not match(args.skip)

    try:
        has_onnx = hasattr(importlib.import_module("graphc.frontend.onnx"), "from_onnx")
    except ImportError:
        has_onnx = False
    models = [m for m in MODELS if chosen(m.name) and (m.kind != "onnx" or has_onnx)]
    if not has_onnx and any(m.kind == "onnx" and chosen(m.name) for m in MODELS):
        print("note: graphc.frontend.onnx is not there yet: the ONNX light models are left out")

    import llvmlite.binding as llvm
    import torch

    threads = graphc.runtime.get_num_threads()
    torch.set_num_threads(threads)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="graphc-models-") as workdir:
        os.environ["GRAPHC_CACHE_DIR"] = os.path.join(workdir, "cache")  # cold compiles are cold
        peak, peak_how = machine_peak(repeat=10)
        results = []
        for spec in models:
            print(f"[{time.strftime('%H:%M:%S')}] {spec.name} (load {os.getloadavg()[0]:.2f})", flush=True)
            try:
                results.append(run_model(spec, peers, args, workdir))
            except Exception as err:  # noqa: BLE001 - one model's failure does not end the run
                failed = Result(spec.name)
                failed.notes.append(f"failed: {type(err).__name__}: {str(err)[:300]}")
                results.append(failed)
            if args.json:  # what is done so far survives an interrupted run
                _write_json(args.json, "(partial run)", peak, results)
    header = (f"host {llvm.get_host_cpu_name()}, {os.cpu_count()} cores, "
              f"{threads} threads (graphc, torch, ORT); "
              f"torch {torch.__version__}; load average {load_before[0]:.2f} before, "
              f"{os.getloadavg()[0]:.2f} after")
    text = render(results, peak, peak_how, header)
    print(text)
    if args.json:
        _write_json(args.json, header, peak, results)


def _write_json(path: str, header: str, peak: float, results: list[Result]) -> None:
    with open(path, "w") as f:
        json.dump({"header": header, "peak_gflops": peak,
                   "results": [r.__dict__ for r in results]}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
