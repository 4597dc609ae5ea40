"""Where a cold `graphc.compile` spends its time: CPU seconds per stage, pass, rule and LLVM step.

    .venv/bin/python benchmarks/compile_time.py [--only resnet50 bert-128 ...] [--repeat 1]
        [--cprofile 25] [--json out.json]

Each measurement runs in a fresh process (a cold compile: the model imported, then
`graphc.compile` of the imported module in an empty cache directory, so neither the
executable cache nor the object cache helps), then a second fresh process compiles the same
model again (warm: a compile-cache hit). What is timed is graphc's own work from the
`ExportedProgram` to a runnable VM executable; the `torch.export` before it is not (it is
PyTorch's). `import graphc` and `from_exported_program` are printed on their own lines.

For the cold compile the table has, as CPU seconds of the main process (`time.process_time`,
which the load of other processes does not inflate) and wall-clock seconds:

- each stage of `graphc.driver.iter_stages` (legalize + fuse, schedule, VM + TIR lowering,
  LLVM and the bytecode);
- each pass, summed over its runs (inclusive of the passes it runs; TIR lowering passes run
  once per kernel);
- each dlight rule (its time trying and applying, summed over the kernels);
- the LLVM steps: IR generation (graphc's `codegen_module` and the IR text), LLVM's
  optimisation pipeline and machine-code emission in this process, and the CPU seconds of
  the worker processes compiling the other parts (`GRAPHC_COMPILE_JOBS`).

A second cold run without the instrumentation gives the plain total. `--cprofile N` adds the
N functions with the most own time in a cProfile of a further cold compile. The load average
and the host CPU are printed with the numbers: on the shared 2-core machine, compare runs
whose load is low, and prefer CPU seconds.

The models are the ones `benchmarks/models.py` times (`transformers` ones built from their
config classes, random weights, batch 1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MODELS = ("resnet50", "bert-128")


# -- the child: one compile in a fresh process ------------------------------------------------------


class _Clock:
    """CPU and wall seconds accumulated under names (nested entries are inclusive)."""

    def __init__(self):
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def add(self, name: str, cpu: float, wall: float) -> None:
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu
        self.wall[name] = self.wall.get(name, 0.0) + wall
        self.calls[name] = self.calls.get(name, 0) + 1

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            c, w = time.process_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(name, time.process_time() - c, time.perf_counter() - w)

        return timed


def _instrument(clock: _Clock) -> None:
    """Patch timers around dlight's rules and the LLVM build steps (this process only)."""
    from graphc.dlight.base import transform as dlight_transform
    from graphc.relax import vm_build
    from graphc.target.llvm import build as llvm_build
    from graphc.target.llvm import object_compiler

    original_apply = dlight_transform.apply_rules

    def apply_rules(func, target, rules, name="main"):
        for rule in rules:  # one rule at a time, timed; the first that applies wins, as before
            c, w = time.process_time(), time.perf_counter()
            scheduled = original_apply(func, target, [rule], name)
            clock.add(f"dlight {rule.name}", time.process_time() - c, time.perf_counter() - w)
            if scheduled is not None:
                return scheduled
        return None

    dlight_transform.apply_rules = apply_rules
    llvm_build.codegen_module = clock.wrap("llvm: IR generation (codegen_module)", llvm_build.codegen_module)
    llvm_build.optimize = clock.wrap("llvm: optimisation pipeline (here)", llvm_build.optimize)
    object_compiler.parse_linked = clock.wrap("llvm: parse + link IR text (here)",
                                              object_compiler.parse_linked)
    llvm_build._compile_here = clock.wrap("llvm: compile a part here (parse, opt, emit)",
                                          llvm_build._compile_here)
    llvm_build.build_llvm = clock.wrap("llvm: build_llvm (all of it)", llvm_build.build_llvm)
    vm_build.build_kernels = clock.wrap("vm_build: build_kernels", vm_build.build_kernels)


def _pass_timer(clock: _Clock):
    from graphc.ir.instrument import PassInstrument

    class Timer(PassInstrument):
        def __init__(self):
            self.open = []

        def run_before_pass(self, mod, info):
            self.open.append((time.process_time(), time.perf_counter()))

        def run_after_pass(self, mod, info):
            c, w = self.open.pop()
            clock.add(f"pass {info.name}", time.process_time() - c, time.perf_counter() - w)

    return Timer()


def _make_model(name: str):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import models  # benchmarks/models.py: the same models it times

    if name.startswith("bert-"):
        return models.bert(int(name.split("-")[1]))
    if name.startswith("resnet"):
        return models.resnet(int(name[len("resnet"):]))
    if name == "vit-base":
        return models.vit()
    if name.startswith("onnx-"):  # a light ONNX model: (path, inputs)
        return models.light_onnx(name[len("onnx-"):])
    raise SystemExit(f"unknown model {name!r}; choose from {', '.join(MODELS)}, vit-base, onnx-<light model>")


def _import_model(name: str):
    """The model's Relax module, and the CPU and wall seconds of the frontend importing it."""
    if name.startswith("onnx-"):
        path, _ = _make_model(name)
        from graphc.frontend.onnx import from_onnx

        c, w = time.process_time(), time.perf_counter()
        mod = from_onnx(path)
        return mod, (time.process_time() - c, time.perf_counter() - w)
    import torch

    model, inputs = _make_model(name)
    with torch.no_grad():
        ep = torch.export.export(model.eval(), tuple(torch.from_numpy(x) for x in inputs))
    from graphc.frontend.torch import from_exported_program

    c, w = time.process_time(), time.perf_counter()
    mod = from_exported_program(ep)
    return mod, (time.process_time() - c, time.perf_counter() - w)


def child(name: str, mode: str, cprofile: int) -> dict:
    """Import graphc, export and import the model, compile it; returns the timings."""
    c0, w0 = time.process_time(), time.perf_counter()
    import graphc
    from graphc.driver import iter_stages

    out = {"import graphc": (time.process_time() - c0, time.perf_counter() - w0)}
    mod, out["import the model"] = _import_model(name)
    clock = _Clock()
    if mode == "profile":
        _instrument(clock)
        from graphc.ir.transform import PassContext

        stage_times = {}
        with PassContext(instruments=[_pass_timer(clock)]):
            c, w = time.process_time(), time.perf_counter()
            c_all, w_all = c, w
            for stage, _ in iter_stages(mod, "llvm"):
                now_c, now_w = time.process_time(), time.perf_counter()
                stage_times[stage] = (now_c - c, now_w - w)
                c, w = now_c, now_w
        out["stages"] = stage_times
        out["compile"] = (time.process_time() - c_all, time.perf_counter() - w_all)
        out["detail"] = {k: (clock.cpu[k], clock.wall[k], clock.calls[k]) for k in clock.cpu}
    elif mode == "cprofile":
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        c, w = time.process_time(), time.perf_counter()
        profiler.enable()
        exe = graphc.compile(mod, "llvm")
        profiler.disable()
        out["compile"] = (time.process_time() - c, time.perf_counter() - w)
        if os.environ.get("GRAPHC_PROFILE_OUT"):  # the whole profile, for pstats
            profiler.dump_stats(os.environ["GRAPHC_PROFILE_OUT"])
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(cprofile)
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(cprofile)
        out["cprofile"] = text.getvalue()
        del exe
    else:  # cold or warm: the plain compile
        import resource

        def children() -> float:  # the kernels' forked children, once reaped
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            return usage.ru_utime + usage.ru_stime

        k, c, w = children(), time.process_time(), time.perf_counter()
        exe = graphc.compile(mod, "llvm")
        out["compile"] = (time.process_time() - c, time.perf_counter() - w)
        out["forked cpu"] = children() - k
        del exe
    from graphc import compile_cache
    from graphc.target.llvm import object_compiler

    compile_cache.wait()
    out["worker cpu"] = object_compiler.POOL.cpu_seconds
    out["cache"] = dict(compile_cache.STATS)
    return out


# -- the parent --------------------------------------------------------------------------------------


def _run_child(name: str, mode: str, cache_dir: str, cprofile: int = 0) -> dict:
    env = dict(os.environ, GRAPHC_CACHE_DIR=cache_dir, GRAPHC_PROGRESS="0")
    env.pop("GRAPHC_CACHE", None)
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, mode, str(cprofile)],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {mode} compile of {name} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _row(label: str, cpu: float, wall: float, extra: str = "") -> str:
    return f"  {label:<58} {cpu:8.2f} {wall:8.2f}  {extra}"


def render(name: str, runs: dict) -> str:
    prof = runs["profile"]
    lines = [f"{name}: cold compile (CPU s of the main process, wall s), load {runs['load']}",
             _row("import graphc", *prof["import graphc"]),
             _row("import the model (from_exported_program / from_onnx)", *prof["import the model"]),
             "  stages of graphc.compile (iter_stages, instrumented):"]
    for stage, (cpu, wall) in prof["stages"].items():
        lines.append(_row(f"  {stage}", cpu, wall))
    lines.append(_row("  total (instrumented)", *prof["compile"],
                      f"+ {prof['worker cpu']:.2f} CPU s in workers"))
    detail = sorted(prof["detail"].items(), key=lambda kv: -kv[1][0])
    lines.append("  passes, dlight rules and LLVM steps (inclusive, summed over runs; calls):")
    for key, (cpu, wall, calls) in detail:
        if cpu >= 0.01:
            lines.append(_row(f"  {key}", cpu, wall, f"x{calls}"))
    for mode in ("cold", "warm"):
        for i, run in enumerate(runs.get(mode, [])):
            lines.append(_row(f"graphc.compile {mode} #{i + 1} (plain)", *run["compile"],
                              f"+ {run['worker cpu']:.2f} CPU s in LLVM workers, "
                              f"+ {run.get('forked cpu', 0):.2f} in forked children; cache {run['cache']}"))
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", default=list(MODELS), help="models (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=1, help="plain cold and warm compiles per model")
    parser.add_argument("--cprofile", type=int, default=0, help="show the N functions with most own time")
    parser.add_argument("--no-profile", action="store_true", help="only the plain cold and warm compiles")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args(argv)
    import llvmlite.binding as llvm

    print(f"host CPU {llvm.get_host_cpu_name()}, {os.cpu_count()} cores, "
          f"GRAPHC_COMPILE_JOBS={os.environ.get('GRAPHC_COMPILE_JOBS', 'auto')}")
    results = {}
    for name in args.only:
        runs = {"load": _load(), "cold": [], "warm": []}
        with tempfile.TemporaryDirectory(prefix="graphc-compile-time-") as tmp:
            if not args.no_profile:
                runs["profile"] = _run_child(name, "profile", os.path.join(tmp, "profile"))
            for i in range(args.repeat):
                cache = os.path.join(tmp, f"cache{i}")
                runs["cold"].append(_run_child(name, "cold", cache))
                runs["warm"].append(_run_child(name, "warm", cache))
            if args.cprofile:
                runs["cprofile"] = _run_child(name, "cprofile", os.path.join(tmp, "cprofile"), args.cprofile)
        runs["load after"] = _load()
        results[name] = runs
        if "profile" in runs:
            print(render(name, runs))
        else:
            for mode in ("cold", "warm"):
                for i, run in enumerate(runs[mode]):
                    print(_row(f"{name} graphc.compile {mode} #{i + 1}", *run["compile"],
                               f"+ {run['worker cpu']:.2f} CPU s in LLVM workers, "
                               f"+ {run.get('forked cpu', 0):.2f} in forked children"))
        if "cprofile" in runs:
            print(runs["cprofile"]["cprofile"])
        print(f"  (load average before {runs['load']}, after {runs['load after']})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        import warnings

        warnings.filterwarnings("ignore")
        print(json.dumps(child(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    else:
        main()
