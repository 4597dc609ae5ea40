"""Compiled modules calling Python functions registered with graphc.register_func: the three
packed-call forms, in-place PrimFunc calls, R.print and R.assert_op, and relax.build's exec_mode."""

import numpy as np
import pytest
import torch

import graphc
from graphc import relax
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


@graphc.register_func("test.packed.add_one", override=True)
def _add_one(x, out):  # destination passing: writes its output
    out[:] = x.numpy() + 1


@graphc.register_func("test.packed.double", override=True)
def _double(x):  # returns a numpy array: the VM makes it a Tensor
    return x.numpy() * 2


@graphc.register_func("test.packed.torch_relu", override=True)
def _torch_relu(x):  # a torch kernel
    return torch.relu(torch.from_dlpack(x))


@I.ir_module
class Kernels:
    @T.prim_func
    def inplace_add(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
        for i, j in T.grid(2, 3):
            with T.block("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = A[vi, vj] + B[vi, vj]

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        a = R.call_dps_packed("test.packed.add_one", (x,), R.Tensor((2, 3), "float32"))
        b = R.call_pure_packed("test.packed.double", a, sinfo_args=R.Tensor((2, 3), "float32"))
        c = R.call_pure_packed("test.packed.torch_relu", b, sinfo_args=R.Tensor((2, 3), "float32"))
        d = R.call_tir_inplace(Kernels.inplace_add, (c, y), [0], R.Tensor((2, 3), "float32"))
        return d


@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
def test_registered_python_functions_run_in_the_vm(exec_mode):
    vm = relax.VirtualMachine(relax.build(Kernels, "llvm", exec_mode=exec_mode), graphc.cpu())
    x = np.array([[-3, -1, 0], [1, 2, 3]], dtype="float32")
    y = np.full((2, 3), 10, "float32")
    np.testing.assert_array_equal(vm["main"](x, y).numpy(), np.maximum((x + 1) * 2, 0) + 10)


def test_exec_mode_must_be_one_of_tvms():
    with pytest.raises(ValueError, match=r"exec_mode must be one of \('bytecode', 'compiled'\)"):
        relax.build(Kernels, "llvm", exec_mode="jit")


def test_call_tir_inplace_writes_into_its_argument():
    @I.ir_module
    class Inplace:
        @T.prim_func
        def inplace_add(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
            for i, j in T.grid(2, 3):
                with T.block("add"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = A[vi, vj] + B[vi, vj]

        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            z = R.call_tir_inplace(Inplace.inplace_add, (x, y), [0], R.Tensor((2, 3), "float32"))
            return z

    lowered = relax.transform.CallTIRRewrite()(Inplace)
    calls = [b.value for b in lowered["main"].body.blocks[0].bindings]
    assert not any(getattr(c, "op", None) is relax.Op.get("relax.builtin.alloc_tensor") for c in calls)
    vm = relax.VirtualMachine(relax.build(Inplace, "llvm"), graphc.cpu())
    x = graphc.nd.array(np.ones((2, 3), "float32"))
    out = vm["main"](x, np.full((2, 3), 2, "float32"))
    np.testing.assert_array_equal(x.numpy(), np.full((2, 3), 3))  # the argument itself changed
    np.testing.assert_array_equal(out.numpy(), x.numpy())


def test_print_and_assert(capsys):
    @I.ir_module
    class Checks:
        @R.function(pure=False)
        def main(x: R.Tensor((), "int32"), ok: R.Tensor((), "bool")) -> R.Tensor((), "int32"):
            R.print(x, format="x is {}")
            R.assert_op(ok, x, format="not ok at x = {}")
            return x

    vm = relax.VirtualMachine(relax.build(Checks, "llvm"), graphc.cpu())
    vm["main"](np.array(5, "int32"), np.array(True))
    assert capsys.readouterr().out == "x is 5\n"
    with pytest.raises(AssertionError, match="not ok at x = 7"):
        vm["main"](np.array(7, "int32"), np.array(False))


def test_an_unregistered_function_is_named():
    @I.ir_module
    class Missing:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            y = R.call_pure_packed("test.packed.nobody", x, sinfo_args=R.Tensor((2,), "float32"))
            return y

    exe = relax.build(Missing, "llvm")
    with pytest.raises(graphc.vm.VMError, match="'test.packed.nobody'.*graphc.register_func"):
        relax.VirtualMachine(exe, graphc.cpu())  # looked up when the executable is loaded


@I.ir_module
class AddModule:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        return R.add(x, y)


def test_save_function_and_time_evaluator_forms():
    vm = relax.VirtualMachine(relax.build(AddModule, "llvm"), graphc.cpu())
    x, y = np.ones((2, 3), "float32"), np.full((2, 3), 2, "float32")
    vm.save_function("main", "saved", graphc.runtime.tensor(x), y=graphc.runtime.tensor(y))
    np.testing.assert_allclose(vm["saved"]().numpy(), x + y)
    vm.save_function("main", "saved_void", graphc.runtime.tensor(x), graphc.runtime.tensor(y),
                     include_return=False)
    assert vm["saved_void"]() is None
    assert vm.time_evaluator("saved", graphc.cpu(), number=2, repeat=2)().mean >= 0
    vm.set_input("main", graphc.runtime.tensor(x), graphc.runtime.tensor(y))
    assert vm.time_evaluator("invoke_stateful", graphc.cpu(), number=1, repeat=1)("main").mean >= 0
    np.testing.assert_allclose(vm.get_outputs("main").numpy(), x + y)


def test_run_time_check_errors_are_also_tvms_exception_classes():
    from graphc.vm.builtins import ArgumentKindError, RuntimeCheckError
    from graphc.vm.values import ShapeTuple

    vm = relax.VirtualMachine(relax.build(AddModule, "llvm"), graphc.cpu())
    x = graphc.runtime.tensor(np.ones((2, 3), "float32"))
    with pytest.raises(RuntimeCheckError, match="takes 2 inputs") as info:
        vm["main"](x)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)
    with pytest.raises(RuntimeError, match="dimension 1"):
        vm["main"](x, graphc.runtime.tensor(np.ones((2, 4), "float32")))
    with pytest.raises(ValueError, match="ndim"):
        vm["main"](x, graphc.runtime.tensor(np.ones((2, 3, 1), "float32")))
    with pytest.raises(ArgumentKindError) as kind:
        vm["main"](x, ShapeTuple([2, 3]))
    assert isinstance(kind.value, TypeError) and isinstance(kind.value, ValueError)
