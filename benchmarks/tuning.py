"""Tuning pays: default vs tuned graphc vs ONNX Runtime vs numpy, in one run on this machine.

    .venv/bin/python benchmarks/tuning.py [--models matmul,mlp,bert] [--budget S] [--records DIR]
    .venv/bin/python benchmarks/tuning.py --records DIR --no-tune     # re-time saved records

Three workloads, each tuned with `graphc.tune` for its budget (issue 16's "done means"):

- matmul: C = A @ B, float32, 1024^3, the kernel alone (10 minutes);
- mlp: the 784-256-10 MLP at batch 64, the whole compiled model (10 minutes);
- bert: BERT-base (transformers' BertModel with random weights, sequence 128, batch 1; 20 minutes);
- matmul-opencl (only when named in --models): a 512^3 float32 matmul tuned for `opencl` and
  timed on the OpenCL device (5 minutes). Here that device is PoCL, a CPU: the row checks the
  GPU tuning mechanics end to end; its timings say nothing about a GPU (docs/tuning.md).

`--budget S` gives every workload S seconds instead (a quick check: `--budget 60`). The rows
are measured interleaved (default, tuned, ONNX Runtime, numpy, default, tuned, ...: a load
that comes and goes on the machine hits them alike); each is the fastest single call (and the
median of the rounds' means) over `--repeat` rounds of calls lasting ~50 ms, in milliseconds,
with the ratio to the tuned graphc. Under the table, "tuner's estimate" is the speed-up the
tuner measured (its kernels timed with the default's, `Database.speedup`, weighted by calls)
next to the one the compiled modules show. The records go to `--records DIR` (default: a
temporary directory), so a second run with the same DIR continues tuning; `--no-tune` only
re-times the records in DIR (e.g. on a quieter machine). The host CPU
(`llvmlite.binding.get_host_cpu_name()`) and the load average are printed with the numbers:
on a 2-core machine any other load makes both the tuning and the timings noisy.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

BUDGETS = {"matmul": 600.0, "mlp": 600.0, "bert": 1200.0, "matmul-opencl": 300.0}


def time_rows(fns: dict, repeat: int = 10, min_ms: float = 50.0) -> dict:
    """{label: (fastest call ms, median ms)} of each callable, measured interleaved: `repeat`
    rounds, each timing every callable in turn (one warm-up call, then enough single calls to
    last `min_ms`, at least 3), the order rotating from round to round. The fastest single call
    is the number to compare (on the loaded 2-core machine most calls of parallel kernels wait
    in the run queue for a thread: see graphc/tune/measure.py); the median is of every round's
    mean, what a user sees under that load."""
    labels = list(fns)
    fastest = {label: float("inf") for label in labels}
    means: dict = {label: [] for label in labels}
    for r in range(repeat):
        for j in range(len(labels)):
            label = labels[(j + r) % len(labels)]
            fn = fns[label]
            fn()
            calls, begin = 0, time.perf_counter()
            while calls < 3 or time.perf_counter() - begin < min_ms / 1e3:
                start = time.perf_counter()
                fn()
                fastest[label] = min(fastest[label], time.perf_counter() - start)
                calls += 1
            means[label].append((time.perf_counter() - begin) / calls)
    return {label: (fastest[label] * 1e3, float(np.median(means[label])) * 1e3) for label in labels}


def claimed(db, tasks, target) -> float:
    """The speed-up the tuner measured for `tasks` together: calls x the default's time over
    calls x the best's (each kernel's best relative to the default measured with it)."""
    from graphc.tune.database import target_key

    key = target_key(target)
    default = tuned = 0.0
    for task in tasks:
        base = db.default_record(task.workload, key)
        if base is None:
            continue
        default += task.weight * base.time
        tuned += task.weight * base.time / db.speedup(task.workload, key)
    return default / tuned if tuned else 1.0


def floor_table(db, tasks) -> str:
    """The per-task floor table (`graphc.tune.floor`): each task's default and tuned kernels timed
    here, interleaved with the machine's matmul peak and copy bandwidth measured beside them."""
    from graphc.tune.floor import floor_rows, format_floor_table, time_tasks

    times = time_tasks(tasks, db, "llvm")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"per-task floors (load average {load}):\n" + format_floor_table(floor_rows(tasks, times))


def ort_session(model_proto):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model_proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def matmul_onnx(n: int):
    from onnx import TensorProto, helper

    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, [n, n])
    b = helper.make_tensor_value_info("B", TensorProto.FLOAT, [n, n])
    c = helper.make_tensor_value_info("C", TensorProto.FLOAT, [n, n])
    graph = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["C"])], "matmul", [a, b], [c])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def mlp_onnx(weights):
    from onnx import TensorProto, helper, numpy_helper

    w1, b1, w2, b2 = weights
    inits = [numpy_helper.from_array(w1.T.copy(), "W1"), numpy_helper.from_array(b1, "B1"),
             numpy_helper.from_array(w2.T.copy(), "W2"), numpy_helper.from_array(b2, "B2")]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h0"]), helper.make_node("Add", ["h0", "B1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]), helper.make_node("MatMul", ["h2", "W2"], ["h3"]),
             helper.make_node("Add", ["h3", "B2"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 784])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 10])
    graph = helper.make_graph(nodes, "mlp", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def square_matmul(n: int):
    """The n x n x n float32 matmul as a PrimFunc (A, B, C)."""
    from graphc import te

    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def default_and_tuned(func, target, db, kernel_of) -> tuple:
    """`kernel_of` the default schedule of `func` and of its best record in `db` (the default
    when it has none)."""
    from graphc.dlight import default_rules
    from graphc.dlight.base.transform import apply_rules
    from graphc.tune.apply import replay
    from graphc.tune.tasks import workload_key

    default = kernel_of(apply_rules(func, target, default_rules(target)))
    best = db.best(workload_key(func), target)
    return default, (kernel_of(replay(func, best, target)) if best is not None else default)


def run_matmul(budget: float, records: str, repeat: int, tune: bool = True) -> dict:
    import graphc
    from graphc.ir.module import IRModule
    from graphc.target import Target
    from graphc.tune.database import Database
    from graphc.tune.tasks import tasks_of_module

    n = 1024
    func = square_matmul(n)
    target = Target("llvm")
    db = graphc.tune(func, target, trials=100000, time_budget=budget, records=records) if tune else \
        Database.open(records)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), "float32"), rng.standard_normal((n, n), "float32")
    c = np.zeros((n, n), "float32")
    ta, tb, tc = (graphc.runtime.tensor(x) for x in (a, b, c))  # as the VM passes them

    def kernel_of(scheduled):
        lib = graphc.build(IRModule({"main": scheduled.with_attr("global_symbol", "main")}), target=target)
        return lib["main"]

    default, tuned = default_and_tuned(func, target, db, kernel_of)
    tuned(ta, tb, tc)
    np.testing.assert_allclose(tc.numpy(), a @ b, rtol=1e-3, atol=1e-3)
    fns = {"graphc default": lambda: default(ta, tb, tc), "graphc tuned": lambda: tuned(ta, tb, tc),
           "numpy": lambda: a @ b}
    session = ort_session(matmul_onnx(n))
    if session is not None:
        fns["ONNX Runtime"] = lambda: session.run(None, {"A": a, "B": b})
    return {"rows": time_rows(fns, repeat), "report": db.last_run,
            "claimed": claimed(db, tasks_of_module(IRModule({"main": func})), target)}


def run_matmul_opencl(budget: float, records: str, repeat: int, tune: bool = True) -> dict:
    """The 512^3 matmul tuned for opencl, default vs tuned timed on the OpenCL device (and numpy)."""
    import graphc
    from graphc.ir.module import IRModule
    from graphc.target import Target
    from graphc.tune.database import Database
    from graphc.tune.tasks import tasks_of_module

    n = 512
    func = square_matmul(n)
    target = Target("opencl")
    dev = graphc.opencl(0)
    db = graphc.tune(func, target, trials=100000, time_budget=budget, records=records, timeout=60) if tune \
        else Database.open(records)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), "float32"), rng.standard_normal((n, n), "float32")
    ta, tb, tc = (graphc.runtime.tensor(x, dev) for x in (a, b, np.zeros((n, n), "float32")))

    def kernel_of(scheduled):
        lib = graphc.build(IRModule({"main": scheduled.with_attr("global_symbol", "main")}), target=target)
        kernel = lib["main"]

        def run():
            kernel(ta, tb, tc)
            dev.sync()

        return run

    default, tuned = default_and_tuned(func, target, db, kernel_of)
    tuned()
    np.testing.assert_allclose(tc.numpy(), a @ b, rtol=1e-3, atol=1e-3)
    fns = {"graphc default": default, "graphc tuned": tuned, "numpy": lambda: a @ b}
    return {"rows": time_rows(fns, repeat), "report": db.last_run,
            "claimed": claimed(db, tasks_of_module(IRModule({"main": func})), target)}


def run_model(name: str, model, inputs, budget: float, records: str, repeat: int, onnx_model=None,
              numpy_fn=None, tune: bool = True) -> dict:
    import torch

    import graphc
    from graphc import relax
    from graphc.tune.database import Database
    from graphc.tune.tasks import extract_tasks

    if tune:
        db = graphc.tune(model, "llvm", example_inputs=inputs, trials=100000, time_budget=budget,
                         records=records)
    else:
        db = Database.open(records)
    with torch.no_grad():
        expected = model(*inputs)
    expected = (expected[0] if isinstance(expected, tuple | list) else expected).numpy()
    default = relax.VirtualMachine(graphc.compile(model, "llvm", example_inputs=inputs), graphc.cpu())["main"]
    tuned = relax.VirtualMachine(graphc.compile(model, "llvm", example_inputs=inputs, tuning_records=db),
                                 graphc.cpu())["main"]
    args = [graphc.runtime.tensor(x.numpy()) for x in inputs]
    out = tuned(*args)
    out = out[0] if isinstance(out, tuple | list) else out
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3, atol=1e-3)
    fns = {"graphc default": lambda: default(*args), "graphc tuned": lambda: tuned(*args)}
    if onnx_model is not None:
        session = ort_session(onnx_model)
        if session is not None:
            feed = {i.name: x.numpy() for i, x in zip(session.get_inputs(), inputs)}
            fns["ONNX Runtime"] = lambda: session.run(None, feed)
    if numpy_fn is not None:
        fns["numpy"] = numpy_fn
    tasks = extract_tasks(model, "llvm", example_inputs=inputs)
    print(floor_table(db, tasks), flush=True)
    return {"rows": time_rows(fns, repeat), "report": db.last_run, "claimed": claimed(db, tasks, "llvm")}


def run_mlp(budget: float, records: str, repeat: int, tune: bool = True) -> dict:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).eval()
    weights = [p.detach().numpy().copy() for p in model.parameters()]
    x = torch.randn(64, 784)
    xn = x.numpy()
    w1t, b1, w2t, b2 = weights[0].T.copy(), weights[1], weights[2].T.copy(), weights[3]
    return run_model("mlp", model, (x,), budget, records, repeat, onnx_model=mlp_onnx(weights),
                     numpy_fn=lambda: np.maximum(xn @ w1t + b1, 0) @ w2t + b2, tune=tune)


def run_bert(budget: float, records: str, repeat: int, tune: bool = True) -> dict:
    import torch
    from transformers import BertConfig, BertModel

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = BertModel(BertConfig())

        def forward(self, input_ids):
            return self.bert(input_ids).last_hidden_state

    torch.manual_seed(0)
    model = LastHiddenState().eval()
    ids = torch.randint(0, 30522, (1, 128))
    onnx_model = None
    try:
        import io

        import onnx

        buffer = io.BytesIO()
        torch.onnx.export(model, (ids,), buffer, input_names=["input_ids"], dynamo=False)
        onnx_model = onnx.load_from_string(buffer.getvalue())
    except Exception as err:  # noqa: BLE001 - the ONNX Runtime row is optional
        print(f"(bert: no ONNX Runtime row: the ONNX export failed: {type(err).__name__}: {err})")
    return run_model("bert", model, (ids,), budget, records, repeat, onnx_model=onnx_model, tune=tune)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="matmul,mlp,bert")
    parser.add_argument("--budget", type=float, help="seconds of tuning per workload (default: 600/600/1200)")
    parser.add_argument("--records", help="directory of the records files (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--no-tune", action="store_true",
                        help="only re-time the records already in --records DIR (no tuning)")
    args = parser.parse_args()
    if args.no_tune and not args.records:
        parser.error("--no-tune re-times saved records: give their directory with --records DIR")
    import llvmlite.binding as llvm

    records_dir = args.records or tempfile.mkdtemp(prefix="graphc-tuning-")
    os.makedirs(records_dir, exist_ok=True)
    runs = {"matmul": run_matmul, "mlp": run_mlp, "bert": run_bert, "matmul-opencl": run_matmul_opencl}
    results = {}
    for name in args.models.split(","):
        if name not in runs:
            parser.error(f"unknown model {name!r}; choose from {', '.join(runs)}")
        budget = args.budget or BUDGETS[name]
        path = os.path.join(records_dir, f"{name}.records")
        if args.no_tune and not os.path.exists(path):
            print(f"== {name}: no records at {path} to re-time; skipped", flush=True)
            continue
        if args.no_tune:
            print(f"== {name}: re-timing the records in {path}", flush=True)
        else:
            print(f"== {name}: tuning for {budget:.0f} s (records in {path})", flush=True)
        results[name] = runs[name](budget, path, args.repeat, tune=not args.no_tune)
        if results[name]["report"] is not None:
            print(results[name]["report"].summary(), flush=True)
        show(name, results[name], llvm.get_host_cpu_name())
    print("\nall:")
    for name, result in results.items():
        show(name, result, llvm.get_host_cpu_name())


def show(name: str, result: dict, cpu: str) -> None:
    rows = result["rows"]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{name} (host CPU {cpu}, load average {load}; fastest call and median mean of interleaved runs):")
    tuned = rows["graphc tuned"][0]
    for label, (ms, median) in rows.items():
        print(f"  {label:<16} {ms:9.3f} ms (median {median:9.3f})   {ms / tuned:5.2f}x the tuned time",
              flush=True)
    measured = rows["graphc default"][0] / tuned
    print(f"  tuned over default: {measured:.2f}x measured here; tuner's estimate {result['claimed']:.2f}x",
          flush=True)


if __name__ == "__main__":
    main()
