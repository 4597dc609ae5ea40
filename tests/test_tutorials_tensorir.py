"""The tutorials' TensorIR flows that involve no schedule, each run through graphc.

Sources: ../shared/reference/tensor_ir_blitz_course.rst, tensor_program_abstraction.md,
te_schedules_in_depth.md, compiler_workflow_notes.md.
"""

import numpy as np

import graphc
from graphc import te
from graphc.ir import IRModule, structural_equal
from graphc.script import ir as I
from graphc.script import tir as T


@I.ir_module
class BlitzModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        # We exchange data between function by handles, which are similar to pointer.
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # Create buffer from handles.
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            # A block is an abstraction for computation.
            with T.block("B"):
                # Define a spatial block iterator and bind it to value i.
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


@I.ir_module
class MLCModule:
    @T.prim_func
    def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
        # extra annotations for the function
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in range(128):
            with T.sblock("C"):
                # declare a data parallel iterator on spatial domain
                vi = T.axis.spatial(128, i)
                C[vi] = A[vi] + B[vi]


def test_blitz_script_module_with_handles():
    assert isinstance(BlitzModule, IRModule)
    text = BlitzModule.script()
    assert 'with T.block("B"):' in text and "T.reads(A[vi])" in text and "T.writes(B[vi])" in text
    mod = graphc.build(BlitzModule, target="llvm")
    a = graphc.nd.array(np.arange(8).astype("float32"))
    b = graphc.nd.array(np.zeros((8,)).astype("float32"))
    mod(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(1, 9, dtype="float32"))
    assert str(a) == str(np.arange(8).astype("float32"))


def test_blitz_te_twin_matches_the_script_module():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])
    ir_module_from_te = IRModule({"main": func})
    assert structural_equal(ir_module_from_te["main"].body, BlitzModule["main"].body)
    lib = graphc.build(ir_module_from_te, target="llvm")
    b = np.zeros(8, dtype="float32")
    lib(np.arange(8, dtype="float32"), b)
    np.testing.assert_array_equal(b, np.arange(1, 9, dtype="float32"))


def test_mlc_buffer_typed_parameters():
    rt_mod = graphc.build(MLCModule, target="llvm")
    func = rt_mod["main"]
    a = graphc.runtime.tensor(np.arange(128, dtype="float32"))
    b = graphc.runtime.tensor(np.ones(128, dtype="float32"))
    c = graphc.runtime.tensor(np.zeros(128, dtype="float32"))
    func(a, b, c)
    np.testing.assert_array_equal(c.numpy(), np.arange(128, dtype="float32") + 1)
    assert "T.reads(A[vi], B[vi])" in MLCModule.script()


def test_mlc_te_vector_add():
    A = te.placeholder((128,), name="A")
    B = te.placeholder((128,), name="B")
    C = te.compute((128,), lambda i: A[i] + B[i], name="C")
    func = te.create_prim_func([A, B, C]).with_attr("global_symbol", "main")
    ir_mod_from_te = IRModule({"main": func})
    assert structural_equal(ir_mod_from_te["main"].body, MLCModule["main"].body)
    c = np.zeros(128, dtype="float32")
    graphc.build(ir_mod_from_te)["main"](np.arange(128, dtype="float32"), np.ones(128, dtype="float32"), c)
    np.testing.assert_array_equal(c, np.arange(1, 129, dtype="float32"))


def test_te_symbolic_m_n_elementwise():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    C = te.compute((m, n), lambda i, j: A[i, j] * B[i, j], name="C")
    lib = graphc.build(te.create_prim_func([A, B, C]))
    for shape in [(1, 1), (3, 7), (16, 5)]:
        a, b = np.random.rand(*shape).astype("float32"), np.random.rand(*shape).astype("float32")
        c = np.empty(shape, dtype="float32")
        lib(a, b, c)
        np.testing.assert_allclose(c, a * b, rtol=1e-6)


def test_te_reduction_over_symbolic_axis():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    assert "with T.init():" in func.script()
    lib = graphc.build(func)
    a = np.random.rand(5, 9).astype("float32")
    b = np.empty(5, dtype="float32")
    lib(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_te_sigmoid():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: te.sigmoid(A[i]), name="B")
    lib = graphc.build(te.create_prim_func([A, B]))
    a = np.linspace(-8, 8, 33).astype("float32")
    b = np.empty_like(a)
    lib(a, b)
    np.testing.assert_allclose(b, 1 / (1 + np.exp(-a)), rtol=1e-5, atol=1e-7)


def test_unscheduled_1024_matmul():
    M = K = N = 1024
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    func = te.create_prim_func([A, B, C]).with_attr("global_symbol", "main")
    lib = graphc.build(IRModule({"main": func}), target="llvm")
    dev = graphc.cpu()
    a = graphc.runtime.tensor(np.random.rand(M, K).astype("float32"), dev)
    b = graphc.runtime.tensor(np.random.rand(K, N).astype("float32"), dev)
    c = graphc.runtime.tensor(np.zeros((M, N), dtype="float32"), dev)
    # The naive loop nest takes seconds here: let the evaluator's warm-up run be the checked run.
    result = lib.time_evaluator(lib.entry_name, dev, number=1)(a, b, c)
    assert result.mean > 0 and len(result.results) == 1
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-3)
