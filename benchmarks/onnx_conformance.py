"""ONNX node-test conformance: graphc and ONNX Runtime on the node cases the installed onnx
package generates, in one run; pass counts overall and per operator, side by side.

A case passes when every output matches the expected one: same shape and dtype, floats
within rtol 1e-3 / atol 1e-5, integers and bools exactly. Each case runs in a worker
process with a time limit, so a crash or a hang fails that case only. The excluded cases
(tests/frontend/onnx/exclusions.py, one reason each) are listed and counted as failures.

    .venv/bin/python benchmarks/onnx_conformance.py [--jobs 2] [--filter REGEX] [--no-ort]
        [--json results.json] [--failures] [--timeout 120]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import re
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

RTOL, ATOL = 1e-3, 1e-5
_CASES = None


def load_cases():
    global _CASES
    if _CASES is None:
        from onnx.backend.test.loader import load_node_model_tests

        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            _CASES = {c.name: c for c in load_node_model_tests()}
    return _CASES


def operator_of(name: str, cases) -> str:
    """The operator a case tests: its single node, or the one of its unexpanded form."""
    base = re.sub(r"_expanded(_ver\d+)?$", "", name)
    case = cases.get(base, cases[name])
    nodes = case.model.graph.node
    ops = [n.op_type for n in nodes if n.op_type not in ("Constant",)]
    if len(set(ops)) == 1:
        return ops[0]
    counts = collections.Counter(ops)
    return counts.most_common(1)[0][0] if counts else nodes[0].op_type


def compare(expected, got) -> str | None:
    """None if `got` matches `expected`, else what differs."""
    if isinstance(expected, list | tuple):
        if not isinstance(got, list | tuple) or len(got) != len(expected):
            return f"expected a sequence of {len(expected)}, got {type(got).__name__}"
        for e, g in zip(expected, got):
            problem = compare(e, g)
            if problem:
                return problem
        return None
    if expected is None:
        return None if got is None else "expected an empty optional"
    expected = np.asarray(expected)
    got = np.asarray(got)
    if got.shape != expected.shape:
        return f"shape {got.shape} != {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} != {expected.dtype}"
    if expected.dtype == object:
        return None if np.array_equal(got, expected) else "values differ"
    if expected.dtype.kind in "fc" or expected.dtype.name.startswith(("float", "bfloat")):
        e, g = expected.astype(np.float64), got.astype(np.float64)
        rtol = RTOL if expected.dtype.itemsize > 2 or expected.dtype.kind in "fc" else max(RTOL, 2**-6)
        ok = np.isclose(g, e, rtol=rtol, atol=ATOL, equal_nan=True)
        if not ok.all():
            return f"{int((~ok).sum())} of {ok.size} values differ (max abs {np.nanmax(np.abs(g - e)):.3g})"
        return None
    return None if np.array_equal(got, expected) else f"{int((got != expected).sum())} values differ"


def _normalize(value):
    import onnx

    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    return value


def run_graphc(name: str) -> tuple[str, str]:
    from graphc.frontend.onnx.backend import GraphcBackend

    case = load_cases()[name]
    try:
        rep = GraphcBackend.prepare(case.model)
        for inputs, outputs in case.data_sets:
            got = rep.run([_normalize(i) for i in inputs])
            for e, g in zip(outputs, got):
                problem = compare(_normalize(e), g)
                if problem:
                    return "wrong", problem
    except Exception as exc:  # noqa: BLE001 - any failure fails the case
        return "error", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    return "pass", ""


def run_ort(name: str) -> tuple[str, str]:
    import onnxruntime as ort

    case = load_cases()[name]
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 4
        session = ort.InferenceSession(
            case.model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        names = [i.name for i in session.get_inputs()]
        for inputs, outputs in case.data_sets:
            feeds = dict(zip(names, [_normalize(i) for i in inputs]))
            got = session.run(None, feeds)
            for e, g in zip(outputs, got):
                problem = compare(_normalize(e), g)
                if problem:
                    return "wrong", problem
    except Exception as exc:  # noqa: BLE001
        return "error", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    return "pass", ""


def _worker(args):
    which, name = args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn = run_graphc if which == "graphc" else run_ort
            return which, name, fn(name)
        except BaseException:  # noqa: BLE001
            return which, name, ("error", traceback.format_exc().splitlines()[-1][:300])


def run_all(names, which_list, jobs: int, timeout: float):
    results = {w: {} for w in which_list}
    import graphc.frontend.onnx.backend  # noqa: F401 - imported once, before the workers fork

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs, maxtasksperchild=200) as pool:
        pending = [(w, n, pool.apply_async(_worker, ((w, n),))) for w in which_list for n in names]
        start = time.time()
        for i, (w, n, res) in enumerate(pending):
            try:
                _, _, outcome = res.get(timeout=max(timeout, 1.0))
            except multiprocessing.TimeoutError:
                outcome = ("error", f"timed out after {timeout:.0f} s (or the worker crashed)")
            results[w][n] = outcome
            if (i + 1) % 100 == 0:
                print(
                    f"  ... {i + 1}/{len(pending)} ({time.time() - start:.0f} s)", file=sys.stderr, flush=True
                )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--filter", default=None, help="only cases whose name matches this regex")
    parser.add_argument("--no-ort", action="store_true", help="graphc only")
    parser.add_argument("--json", default=None, help="write every case's outcome here")
    parser.add_argument("--failures", action="store_true", help="print each failing case and why")
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()

    from tests.frontend.onnx.exclusions import EXCLUDED

    cases = load_cases()
    names = sorted(cases)
    if args.filter:
        names = [n for n in names if re.search(args.filter, n)]
    excluded = {n: why for n, why in EXCLUDED.items() if n in cases}
    run_names = [n for n in names if n not in excluded]
    which = ["graphc"] if args.no_ort else ["graphc", "onnxruntime"]
    load = os.getloadavg()[0]
    print(
        f"{len(names)} node cases ({len(run_names)} run, {len(names) - len(run_names)} excluded), "
        f"{args.jobs} jobs, load {load:.2f}",
        flush=True,
    )
    start = time.time()
    results = run_all(run_names, which, args.jobs, args.timeout)
    for w in which:
        for n in names:
            if n in excluded:
                results[w][n] = ("excluded", excluded[n])
    elapsed = time.time() - start

    per_op = collections.defaultdict(lambda: collections.Counter())
    for n in names:
        op = operator_of(n, cases)
        per_op[op]["total"] += 1
        for w in which:
            if results[w][n][0] == "pass":
                per_op[op][w] += 1
    header = f"{'operator':32} {'cases':>6} " + " ".join(f"{w:>12}" for w in which)
    print(header)
    print("-" * len(header))
    for op in sorted(per_op):
        row = per_op[op]
        print(f"{op:32} {row['total']:>6} " + " ".join(f"{row[w]:>12}" for w in which))
    print("-" * len(header))
    total = len(names)
    for w in which:
        passed = sum(1 for n in names if results[w][n][0] == "pass")
        print(f"{w:12} passes {passed} of {total} node cases ({100.0 * passed / max(total, 1):.1f}%)")
    print(f"({elapsed:.0f} s)")
    if excluded:
        print(f"\nexcluded ({len(excluded)}):")
        for n, why in sorted(excluded.items()):
            print(f"  {n}: {why}")
    if args.failures:
        print("\ngraphc failures:")
        for n in names:
            status, why = results["graphc"][n]
            if status not in ("pass", "excluded"):
                print(f"  {n} [{operator_of(n, cases)}] {status}: {why}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({w: {n: list(v) for n, v in r.items()} for w, r in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
