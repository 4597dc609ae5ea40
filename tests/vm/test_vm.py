"""The VirtualMachine on compiled modules: dynamic shapes, tuples, calls, control flow, errors."""

import threading

import numpy as np
import pytest

import graphc
from graphc import relax
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


@I.ir_module
class Dense:
    @R.function
    def main(x: R.Tensor(("n", 16), dtype="float32"), w: R.Tensor((16, 8), dtype="float32"),
             b: R.Tensor((8,), dtype="float32")) -> R.Tensor(("n", 8), dtype="float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(y, b)
            r = R.nn.relu(z)
            R.output(r)
        return r


@I.ir_module
class TwoInputs:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("n", 4), dtype="float32")):
        with R.dataflow():
            s = R.add(x, y)
            d = R.subtract(x, y)
            R.output(s, d)
        return (s, d)


@I.ir_module
class Calls:
    @R.function
    def double(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        with R.dataflow():
            y = R.add(x, x)
            R.output(y)
        return y

    @R.function
    def main(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        cls = Calls
        y = cls.double(x)
        z = cls.double(y)
        return z


@I.ir_module
class Branch:
    @R.function
    def main(cond: R.Prim("bool"), x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        if cond:
            y = R.add(x, x)
            r = y
        else:
            y = R.multiply(x, x)
            r = y
        return r


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


@pytest.fixture(scope="module")
def dense_vm():
    return relax.VirtualMachine(graphc.compile(Dense, "llvm"), graphc.cpu())


def dense_ref(x, w, b):
    return np.maximum(x @ w + b, 0)


def test_symbolic_batch_compiles_once_runs_at_many_sizes(dense_vm):
    w, b = rand(16, 8, seed=1), rand(8, seed=2)
    for n in (1, 2, 5, 33):
        x = rand(n, 16, seed=n)
        out = dense_vm["main"](x, w, b)
        assert out.shape == (n, 8)
        np.testing.assert_allclose(out.numpy(), dense_ref(x, w, b), rtol=1e-5, atol=1e-5)


def test_inputs_may_be_graphc_numpy_or_torch(dense_vm):
    torch = pytest.importorskip("torch")
    x, w, b = rand(3, 16), rand(16, 8, seed=1), rand(8, seed=2)
    out = dense_vm["main"](graphc.runtime.tensor(x), torch.from_numpy(w), b)
    np.testing.assert_allclose(out.numpy(), dense_ref(x, w, b), rtol=1e-5, atol=1e-5)
    # non-contiguous and misaligned inputs are copied, not misread
    big = rand(3, 32)
    out = dense_vm["main"](big[:, ::2], w, b)
    np.testing.assert_allclose(out.numpy(), dense_ref(big[:, ::2], w, b), rtol=1e-5, atol=1e-5)
    raw = np.zeros(3 * 16 + 1, "float32")[1:].reshape(3, 16)
    raw[...] = x
    np.testing.assert_allclose(dense_vm["main"](raw, w, b).numpy(), dense_ref(x, w, b), rtol=1e-5, atol=1e-5)


def test_tuple_results_are_python_tuples():
    vm = relax.VirtualMachine(graphc.compile(TwoInputs, "llvm"), graphc.cpu())
    x, y = rand(5, 4), rand(5, 4, seed=1)
    s, d = vm["main"](x, y)
    np.testing.assert_allclose(s.numpy(), x + y, rtol=1e-6)
    np.testing.assert_allclose(d.numpy(), x - y, rtol=1e-6)


def test_relax_functions_call_each_other():
    vm = relax.VirtualMachine(graphc.compile(Calls, "llvm"), graphc.cpu())
    x = rand(3)
    np.testing.assert_allclose(vm["main"](x).numpy(), 4 * x, rtol=1e-6)
    np.testing.assert_allclose(vm["double"](x).numpy(), 2 * x, rtol=1e-6)


def test_if_on_a_scalar_condition():
    vm = relax.VirtualMachine(graphc.compile(Branch, "llvm"), graphc.cpu())
    x = rand(4)
    np.testing.assert_allclose(vm["main"](True, x).numpy(), x + x, rtol=1e-6)
    np.testing.assert_allclose(vm["main"](False, x).numpy(), x * x, rtol=1e-6)


# --- input errors: each a ValueError naming the parameter ------------------------------------------


@pytest.mark.parametrize("args, pattern", [
    (lambda w, b: (rand(2, 16),), r"main takes 3 inputs \(x, w, b\), got 1"),
    (lambda w, b: (rand(2, 16).astype("float64"), w, b), r"parameter 'x'.*dtype float32, got float64"),
    (lambda w, b: (rand(16), w, b), r"parameter 'x'.*rank 2, got rank 1"),
    (lambda w, b: (rand(2, 15), w, b), r"parameter 'x'.*dimension 1 must be 16, got 15"),
    (lambda w, b: (rand(2, 16), rand(16, 9), b), r"'w'.*R.Tensor\(\(16, 8\).*dimension 1 must be 8"),
    (lambda w, b: (rand(2, 16), w, "bias"), r"parameter 'b'.*expected a tensor"),
])
def test_input_errors_name_the_parameter(dense_vm, args, pattern):
    w, b = rand(16, 8, seed=1), rand(8, seed=2)
    with pytest.raises(ValueError, match=pattern):
        dense_vm["main"](*args(w, b))


def test_inconsistent_symbolic_dims_across_inputs():
    vm = relax.VirtualMachine(graphc.compile(TwoInputs, "llvm"), graphc.cpu())
    with pytest.raises(ValueError, match=r"parameter 'y'.*dimension 0 \(n\) is 3, but n = 5"):
        vm["main"](rand(5, 4), rand(3, 4))


# --- the stateful interface, timing, profiling --------------------------------------------------------


def test_set_input_invoke_stateful_get_outputs(dense_vm):
    x, w, b = rand(4, 16), rand(16, 8, seed=1), rand(8, seed=2)
    dense_vm.set_input("main", x, w, b=b)
    dense_vm.invoke_stateful("main")
    np.testing.assert_allclose(dense_vm.get_outputs("main").numpy(), dense_ref(x, w, b), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="not been run"):
        relax.VirtualMachine(dense_vm.executable, graphc.cpu()).get_outputs("main")


def test_time_evaluator(dense_vm):
    args = (rand(4, 16), rand(16, 8, seed=1), rand(8, seed=2))
    result = dense_vm.time_evaluator("main", graphc.cpu(), number=3, repeat=2)(*args)
    assert len(result.results) == 2 and result.min > 0


def test_profile_reports_every_kernel(dense_vm):
    args = (rand(4, 16), rand(16, 8, seed=1), rand(8, seed=2))
    report = dense_vm.profile("main", *args)
    kernels = [row for row in report.rows if row.kind == "kernel"]
    names = {f.name for f in dense_vm.executable.functions if f.kind == "kernel"}
    assert {row.name for row in kernels} == names
    assert all(row.calls == 1 and row.total > 0 and row.mean == row.total for row in kernels)
    assert 0 < sum(row.share for row in report.rows) <= 1.0 + 1e-9
    text = str(report)
    assert text.splitlines()[0].split() == ["Name", "Kind", "Calls", "Total", "(us)", "Mean", "(us)",
                                            "Share", "(%)"]
    assert all(name in text for name in names)


def test_unknown_function_is_a_key_error(dense_vm):
    with pytest.raises(KeyError, match="has no function 'forward'; it has: main"):
        dense_vm["forward"]


# --- concurrency and memory ---------------------------------------------------------------------------


def test_threads_calling_one_vm_get_their_own_results(dense_vm):
    w, b = rand(16, 8, seed=1), rand(8, seed=2)
    errors, barrier = [], threading.Barrier(4)

    def worker(k):
        try:
            barrier.wait()
            for i in range(30):
                x = rand(1 + (k + i) % 5, 16, seed=100 * k + i)
                out = dense_vm["main"](x, w, b)
                np.testing.assert_allclose(out.numpy(), dense_ref(x, w, b), rtol=1e-5, atol=1e-5)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def deep_chain(depth: int, size: int = 256):
    x = relax.Var("x", relax.TensorStructInfo((size,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for i in range(depth):
                value = bb.emit(relax.op.add(value, relax.const(np.full(size, i + 1, "float32"))))
            out = bb.emit_output(value)
        bb.emit_func_output(out)
    return relax.transform.LegalizeOps()(bb.get())


def test_memory_plan_reuses_storage_in_a_deep_chain():
    depth, size = 12, 256
    exe = graphc.compile(deep_chain(depth, size), "llvm")
    intermediates = (depth - 1) * size * 4  # bytes of the tensors that are neither input nor output
    planned = exe.storage_bytes() - size * 4  # less the output's own storage
    assert 0 < planned < intermediates
    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = rand(size)
    expected = x + sum(range(1, depth + 1))
    np.testing.assert_allclose(vm["main"](x).numpy(), expected, rtol=1e-5)
    first = vm["main"](x)
    second = vm["main"](x)  # the output is fresh memory: the next call must not overwrite it
    assert first.data_ptr != second.data_ptr
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-5)


def test_planned_storage_is_allocated_once_and_outputs_every_call(monkeypatch):
    from graphc.vm import values

    exe = graphc.compile(deep_chain(6, 64), "llvm")
    vm = relax.VirtualMachine(exe, graphc.cpu())
    made = []
    allocate = values.Storage.allocate.__func__
    monkeypatch.setattr(values.Storage, "allocate",
                        classmethod(lambda cls, *a, **k: made.append(a[0]) or allocate(cls, *a, **k)))
    x = rand(64)
    outputs, counts = [], []
    for _ in range(4):
        outputs.append(vm["main"](x))
        counts.append(len(made))
    assert counts[0] > 0 and counts[1:] == counts[:1] * 3  # made with the first call's frame, once
    assert len({o.data_ptr for o in outputs}) == 4  # each output is its own memory
    for o in outputs:
        np.testing.assert_allclose(o.numpy(), x + 21, rtol=1e-6)


@I.ir_module
class ReturnsAView:
    @R.function
    def main(x: R.Tensor((2, 8), dtype="float32")):
        with R.dataflow():
            y = R.add(x, x)
            z = R.multiply(y, y)
            v = R.reshape(z, R.shape([16]))
            R.output(v, y)
        return (v, y)


def test_outputs_that_alias_planned_storage_survive_the_next_call():
    vm = relax.VirtualMachine(graphc.compile(ReturnsAView, "llvm"), graphc.cpu())
    x = rand(2, 8)
    v1, y1 = vm["main"](x)
    v2, y2 = vm["main"](x + 1)
    np.testing.assert_allclose(v1.numpy(), ((x + x) ** 2).reshape(16), rtol=1e-6)
    np.testing.assert_allclose(y1.numpy(), x + x, rtol=1e-6)
    np.testing.assert_allclose(v2.numpy(), ((2 * x + 2) ** 2).reshape(16), rtol=1e-6)
    assert v1.data_ptr != v2.data_ptr and y1.data_ptr != y2.data_ptr


def test_threads_sharing_a_vm_with_a_static_plan_get_their_own_storage():
    depth, size = 6, 64
    vm = relax.VirtualMachine(graphc.compile(deep_chain(depth, size), "llvm"), graphc.cpu())
    errors, barrier = [], threading.Barrier(4)

    def worker(k):
        try:
            barrier.wait()
            for i in range(40):
                x = rand(size, seed=10 * k + i)
                out = vm["main"](x)
                np.testing.assert_allclose(out.numpy(), x + 21, rtol=1e-6)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_aligned_numpy_inputs_are_not_copied_and_others_are():
    from graphc.vm.bytecode import Arg, FuncEntry, Ret
    from graphc.vm.executable import Executable

    identity = relax.VirtualMachine(Executable([FuncEntry("vm", "main", ["x"], 1, [Ret(Arg.reg(0))])], []))
    aligned = np.asarray(graphc.runtime.tensor(rand(3, 5)))
    out = identity["main"](aligned)
    assert out.data_ptr == aligned.__array_interface__["data"][0] and out.shape == (3, 5)
    for other in (rand(4, 6)[:, ::2], rand(4, 6).astype(">f4"), np.zeros(9, "int16")[1:]):
        out = identity["main"](other)
        assert out.data_ptr % 64 == 0 and out.dtype == other.dtype.newbyteorder("=").name
        np.testing.assert_array_equal(out.numpy(), other)


@I.ir_module
class TirVars:
    @T.prim_func
    def shift(var_x: T.handle, var_y: T.handle, m: T.int64):
        n = T.int64()
        x = T.match_buffer(var_x, (n,), "float32")
        y = T.match_buffer(var_y, (n,), "float32")
        for i in range(n):
            with T.block("b"):
                vi = T.axis.spatial(n, i)
                y[vi] = x[vi] + T.Cast("float32", m)

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        n = T.int64()
        cls = TirVars
        with R.dataflow():
            y = R.call_tir(cls.shift, (x,), out_sinfo=R.Tensor((n,), "float32"), tir_vars=R.shape([n]))
            R.output(y)
        return y


def test_call_tir_with_symbolic_scalar_arguments():
    exe = graphc.compile(TirVars, "llvm")
    assert "call vm.builtin.call_tir_dyn(@shift" in exe.as_text()
    vm = relax.VirtualMachine(exe, graphc.cpu())
    for n in (1, 4, 9):
        np.testing.assert_allclose(vm["main"](np.zeros(n, "float32")).numpy(), np.full(n, n, "float32"))


def test_a_relax_function_passed_as_a_value():
    from graphc.script import from_source

    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def double(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return R.add(x, x)

    @R.function
    def apply(f: R.Callable((R.Tensor((4,), "float32"),), R.Tensor((4,), "float32")),
              x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return f(x)

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        y = cls.apply(cls.double, x)
        return y
''')
    vm = relax.VirtualMachine(graphc.compile(mod), graphc.cpu())
    np.testing.assert_array_equal(vm["main"](np.arange(4, dtype="float32")).numpy(), [0, 2, 4, 6])
