"""Build and run tensor programs with graphc, printing each one on the way.

Run: `.venv/bin/python examples/tensor_programs.py`

1. a vector add written in script syntax (the TensorIR blitz course);
2. the same computation from tensor expressions, with symbolic shapes;
3. a 256x256 matmul (a reduction) checked against numpy;
4. the same matmul transformed with `tir.Schedule` (tiling, parallel and vector loops), and a
   row sum scheduled by `graphc.dlight`'s CPU default rules, each timed against the original.
"""

import numpy as np

import graphc
from graphc import dlight, te, tir
from graphc.script import ir as I
from graphc.script import tir as T


@I.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


def script_vector_add() -> None:
    print("== 1. script-defined module ==")
    MyModule.show()
    lib = graphc.build(MyModule, target="llvm")
    a = graphc.nd.array(np.arange(8).astype("float32"))
    b = graphc.nd.array(np.zeros((8,)).astype("float32"))
    lib(a, b)
    print("a =", a)
    print("b =", b)
    np.testing.assert_allclose(b.numpy(), a.numpy() + 1)


def te_symbolic_multiply() -> None:
    print("\n== 2. tensor expressions with symbolic shapes ==")
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    C = te.compute((m, n), lambda i, j: A[i, j] * B[i, j], name="C")
    mod = graphc.IRModule({"main": te.create_prim_func([A, B, C])})
    mod.show()
    lib = graphc.build(mod, target="llvm")
    for shape in [(3, 5), (17, 2)]:
        a, b = np.random.rand(*shape).astype("float32"), np.random.rand(*shape).astype("float32")
        c = graphc.nd.empty(shape, "float32")
        lib["main"](a, b, c)
        np.testing.assert_allclose(c.numpy(), a * b, rtol=1e-6)
        print(f"C = A * B for shape {shape}: ok")


def te_matmul() -> None:
    print("\n== 3. a reduction: 256x256x256 matmul ==")
    M = K = N = 256
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    func.show()
    lib = graphc.build(func, target="llvm")
    a, b = np.random.rand(M, K).astype("float32"), np.random.rand(K, N).astype("float32")
    c = graphc.nd.empty((M, N), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
    timer = lib.time_evaluator("main", graphc.cpu(), number=3)
    print(f"matmul matches numpy; unscheduled time {timer(a, b, c).mean * 1e3:.2f} ms")
    return func, (a, b, c), timer(a, b, c).mean


def scheduled(func, args, unscheduled_s) -> None:
    print("\n== 4. schedules ==")
    sch = tir.Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, factors=[None, 8])
    jo, ji = sch.split(j, factors=[None, 64])
    sch.reorder(io, jo, k, ii, ji)
    sch.parallel(io)
    sch.unroll(ii)
    sch.vectorize(ji)
    sch.decompose_reduction(block, k)
    sch.mod.show()
    print(sch.trace)
    lib = graphc.build(sch.mod, target="llvm")
    a, b, c = args
    lib(a, b, c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
    t = lib.time_evaluator("main", graphc.cpu(), number=10)(a, b, c).mean
    print(f"scheduled matmul: {t * 1e3:.2f} ms, {unscheduled_s / t:.1f}x faster than unscheduled")

    n = te.var("n")
    A = te.placeholder((n, 1024), name="A")
    k = te.reduce_axis((0, 1024), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    mod = graphc.IRModule({"main": te.create_prim_func([A, B])})
    fast = dlight.default_schedule("llvm")(mod)
    x = graphc.nd.array(np.random.rand(512, 1024).astype("float32"))  # aligned: no copies
    y = graphc.nd.empty((512,), "float32")
    times = []
    for m in (mod, fast):
        lib = graphc.build(m, target="llvm")
        lib(x, y)
        np.testing.assert_allclose(y.numpy(), x.numpy().sum(axis=1), rtol=1e-4)
        times.append(lib.time_evaluator("main", graphc.cpu(), number=10)(x, y).mean)
    print(f"row sum of (512, 1024): dlight's default schedule is {times[0] / times[1]:.1f}x faster")


if __name__ == "__main__":
    script_vector_add()
    te_symbolic_multiply()
    scheduled(*te_matmul())
