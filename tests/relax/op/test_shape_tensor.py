"""R.shape_to_tensor / R.tensor_to_shape: struct info, errors, running in the VM, FoldConstant."""

# ruff: noqa: F841 - the @R.function bodies are IR

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.errors import ScriptError, TypeInferenceError
from graphc.ir.structural import assert_structural_equal
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


def _sinfo(expr):
    return relax.BlockBuilder().normalize(expr).struct_info


def test_struct_info():
    n = tir.Var("n", "int64")
    assert_structural_equal(_sinfo(relax.op.shape_to_tensor(relax.ShapeExpr([n, 4]))),
                            relax.TensorStructInfo((2,), "int64"))
    three = relax.TensorStructInfo((3,), "int64")
    assert_structural_equal(_sinfo(relax.op.shape_to_tensor((2, 3, 4))), three)
    unknown = relax.Var("s", relax.ShapeStructInfo(ndim=-1))
    assert _sinfo(relax.op.shape_to_tensor(unknown)).ndim == 1
    t = relax.Var("t", relax.TensorStructInfo((3,), "int64"))
    assert_structural_equal(_sinfo(relax.op.tensor_to_shape(t)), relax.ShapeStructInfo(ndim=3))
    dyn = relax.Var("d", relax.TensorStructInfo((n,), "int64"))
    assert _sinfo(relax.op.tensor_to_shape(dyn)).ndim == -1


def test_bad_inputs_are_named():
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    with pytest.raises(TypeInferenceError, match="shape_to_tensor.*expects argument input to be a shape"):
        _sinfo(relax.op.shape_to_tensor(x))
    with pytest.raises(TypeInferenceError, match="tensor_to_shape.*expects a 1-d integer tensor"):
        _sinfo(relax.op.tensor_to_shape(x))
    s = relax.Var("s", relax.ShapeStructInfo(ndim=2))
    with pytest.raises(TypeInferenceError, match="tensor_to_shape.*expects argument input to be a tensor"):
        _sinfo(relax.op.tensor_to_shape(s))
    with pytest.raises(ScriptError, match="expects argument input to be a shape"):
        @R.function
        def f(x: R.Tensor((2,), "int64")):
            return R.shape_to_tensor(x)


@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
def test_the_vm_runs_both_directions(exec_mode):
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("m", 6), "float32"), target: R.Tensor((2,), "int64")):
            shape = R.shape_of(x)
            as_tensor = R.shape_to_tensor(shape)
            new_shape = R.tensor_to_shape(target)
            y = R.reshape(x, new_shape)
            return (as_tensor, y)

    vm = relax.VirtualMachine(relax.build(Module, "llvm", exec_mode=exec_mode), graphc.cpu())
    x = np.arange(24, dtype="float32").reshape(4, 6)
    as_tensor, y = vm["main"](x, np.array([3, 8], dtype="int64"))
    assert as_tensor.dtype == "int64"
    np.testing.assert_array_equal(as_tensor.numpy(), [4, 6])
    np.testing.assert_array_equal(y.numpy(), x.reshape(3, 8))


def test_fold_constant_folds_constant_shapes_and_tensors():
    @I.ir_module
    class Before:
        @R.function
        def main(data: R.Tensor((256,), "float32")):
            with R.dataflow():
                t = R.shape_to_tensor(R.shape([8, 16]))
                half = R.const(np.array([2, 1], dtype="int64"))
                target = R.multiply(t, half)
                s = R.tensor_to_shape(target)
                gv = R.reshape(data, s)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(data: R.Tensor((256,), "float32")) -> R.Tensor((16, 16), "float32"):
            with R.dataflow():
                gv: R.Tensor((16, 16), "float32") = R.reshape(data, R.shape([16, 16]))
                R.output(gv)
            return gv

    after = relax.transform.FoldConstant()(relax.transform.CanonicalizeBindings()(Before))
    assert_structural_equal(relax.transform.DeadCodeElimination()(after), Expected)


def test_fold_constant_keeps_symbolic_shapes():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("m",), "float32")):
            m = T.int64()
            with R.dataflow():
                a = R.shape_to_tensor(R.shape_of(x))
                b = R.shape_to_tensor(R.shape([2, m]))
                R.output(a, b)
            return (a, b)

    assert_structural_equal(relax.transform.FoldConstant()(Module), Module)
