"""ONNX Loop: unrolled at import vs run by the VM (`vm.builtin.loop`), for constant trip counts.

For each trip count, the same model (acc = acc * 0.5 + x * i, scanning acc; tensors of
`--size` floats) is imported and compiled with the loop unrolled and with the loop run by the
VM, interleaved A, B, A, B; it prints the compile CPU time (import + graphc.compile, the
compile cache off) and the median time of one run. The VM's loop costs one VM call per
iteration plus the body's kernels; unrolling costs compile time that grows with the trip
count. This is what UNROLL_LIMIT (graphc/frontend/onnx/control_flow.py) is chosen from.

    .venv/bin/python benchmarks/onnx_loop.py [--trips 4 16 64] [--size 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from onnx import TensorProto, helper

os.environ["GRAPHC_CACHE"] = "0"  # every compile compiles

import graphc  # noqa: E402
from graphc import relax  # noqa: E402
from graphc.frontend.onnx import control_flow, from_onnx  # noqa: E402

F = TensorProto.FLOAT


def loop_model(trips: int, size: int):
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["i"], ["i_f"], to=F),
            helper.make_node("Mul", ["x", "i_f"], ["xi"]),
            helper.make_node("Mul", ["acc", "half"], ["decayed"]),
            helper.make_node("Add", ["decayed", "xi"], ["acc_out"]),
            helper.make_node("Identity", ["acc_out"], ["seen"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", F, [size]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", F, [size]),
            helper.make_tensor_value_info("seen", F, [size]),
        ],
    )
    nodes = [
        helper.make_node(
            "Constant", [], ["M"], value=helper.make_tensor("m", TensorProto.INT64, [], [trips])
        ),
        helper.make_node(
            "Constant", [], ["go"], value=helper.make_tensor("go", TensorProto.BOOL, [], [True])
        ),
        helper.make_node("Constant", [], ["half"], value=helper.make_tensor("half", F, [], [0.5])),
        helper.make_node("Loop", ["M", "go", "acc0"], ["acc", "seens"], body=body),
    ]
    graph = helper.make_graph(
        nodes,
        "loop",
        [helper.make_tensor_value_info("acc0", F, [size]), helper.make_tensor_value_info("x", F, [size])],
        [
            helper.make_tensor_value_info("acc", F, [size]),
            helper.make_tensor_value_info("seens", F, [trips, size]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def measure(model, unrolled: bool, inputs, runs: int):
    saved = control_flow.UNROLL_LIMIT
    control_flow.UNROLL_LIMIT = 1 << 30 if unrolled else -1
    try:
        start, children = time.process_time(), os.times()
        mod = from_onnx(model)
        exe = graphc.compile(mod, "llvm")
        after = os.times()
        compile_s = time.process_time() - start
        compile_s += (
            after.children_user + after.children_system - children.children_user - children.children_system
        )
    finally:
        control_flow.UNROLL_LIMIT = saved
    assert ("vm.builtin.loop" in mod.script()) != unrolled
    vm = relax.VirtualMachine(exe, graphc.cpu())
    out = vm["main"](*inputs)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        vm["main"](*inputs)
        times.append(time.perf_counter() - start)
    return compile_s, statistics.median(times), [o.numpy() for o in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trips", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--size", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    import llvmlite.binding as llvm

    print(f"host CPU {llvm.get_host_cpu_name()}, load average {os.getloadavg()[0]:.2f}")
    print(
        f"{'trips':>6} {'unrolled compile s':>19} {'VM loop compile s':>18} "
        f"{'unrolled run us':>16} {'VM loop run us':>15}"
    )
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(args.size).astype("float32") for _ in range(2)]
    for trips in args.trips:
        model = loop_model(trips, args.size)
        results = {True: [], False: []}
        for _ in range(args.repeat):
            for unrolled in (True, False):
                results[unrolled].append(measure(model, unrolled, inputs, args.runs))
        for a, b in zip(results[True][0][2], results[False][0][2]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        best = {u: (min(r[0] for r in rs), min(r[1] for r in rs)) for u, rs in results.items()}
        print(
            f"{trips:>6} {best[True][0]:>19.2f} {best[False][0]:>18.2f} {best[True][1] * 1e6:>16.1f} "
            f"{best[False][1] * 1e6:>15.1f}"
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
