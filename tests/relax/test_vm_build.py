"""Bytecode generation (graphc.relax.vm_build) on modules written directly in the lowered form."""

import numpy as np
import pytest

import graphc
from graphc import relax
from graphc.errors import CodegenError
from graphc.relax.vm_build import build
from graphc.runtime.kernel import KernelArgumentError
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


@I.ir_module
class AddTwice:
    @T.prim_func
    def add1(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("b"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = A[vi] + T.float32(1)

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = AddTwice
        heap = R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.alloc_shape_heap"), (R.prim_value(1),),
                                       sinfo_args=R.Tensor(ndim=1, dtype="int64"))
        _1 = R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("x"),
                           sinfo_args=R.Tuple())
        _2 = R.call_packed("vm.builtin.match_shape", x, heap, R.prim_value(1), R.prim_value(1),
                           R.prim_value(4), R.str("x"), sinfo_args=R.Tuple())
        s = R.vm.alloc_storage(R.shape([16]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        y = R.vm.alloc_tensor(s, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _ = cls.add1(x, y)
        s2 = R.vm.alloc_storage(R.shape([16]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        z = R.vm.alloc_tensor(s2, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _3 = cls.add1(y, z)
        _4 = R.vm.kill_object(y)
        _5 = R.vm.kill_object(s)
        return z


@I.ir_module
class Unchecked:
    @T.prim_func
    def add1(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("b"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = A[vi] + T.float32(1)

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        cls = Unchecked
        s = R.vm.alloc_storage(R.shape([16]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        y = R.vm.alloc_tensor(s, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _ = cls.add1(x, y)
        t = (y, x)
        first = t[0]
        return (first, R.shape([2, 3]), R.prim_value(7))


EXPECTED_ADD_TWICE = """\
@main(x)  # 6 registers
   0: %1 = call vm.builtin.alloc_shape_heap(%vm, i1)
   1: call vm.builtin.check_tensor_info(%0, i1, c[0], c[1])
   2: call vm.builtin.match_shape(%0, %1, i1, i1, i4, c[1])
   3: %2 = call vm.builtin.alloc_storage(%vm, c[3], i0, c[4], c[5])
   4: %3 = call vm.builtin.alloc_tensor(%2, i0, c[6], c[0])
   5: call add1(%0, %3)
   6: %4 = call vm.builtin.alloc_storage(%vm, c[3], i0, c[4], c[5])
   7: %5 = call vm.builtin.alloc_tensor(%4, i0, c[6], c[0])
   8: call add1(%3, %5)
   9: %3 = call vm.builtin.null_value()
  10: %2 = call vm.builtin.null_value()
  11: ret %5"""


def test_bytecode_of_a_lowered_module():
    exe = build(AddTwice, "llvm", vm_lowering=False)
    assert exe.as_text().split("\n\n")[0] == EXPECTED_ADD_TWICE
    # both kernel calls are proven against add1's signature: the VM skips their checks
    assert exe.functions[0].attrs["unchecked_calls"] == [5, 8]
    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), x + 2)
    with pytest.raises(ValueError, match="dimension 0 must be 4, got 5"):
        vm["main"](np.arange(5, dtype="float32"))


def test_unchecked_parameters_keep_the_kernel_checks():
    exe = build(Unchecked, "llvm", vm_lowering=False)
    assert exe.functions[0].attrs["unchecked_calls"] == []  # x is never checked by the function
    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = np.arange(4, dtype="float32")
    first, shape, seven = vm["main"](x)
    np.testing.assert_allclose(first.numpy(), x + 1)
    assert shape == (2, 3) and isinstance(shape, graphc.vm.ShapeTuple) and seven == 7
    with pytest.raises(KernelArgumentError, match="add1.*dimension 0"):
        vm["main"](np.arange(6, dtype="float32"))


def test_the_memory_plan_is_reused_across_calls():
    exe = build(AddTwice, "llvm", vm_lowering=False)
    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = np.arange(4, dtype="float32")
    outs = [vm["main"](x) for _ in range(3)]
    assert len({o.data_ptr for o in outs}) == 3  # the returned tensor is new each time
    for o in outs:
        np.testing.assert_allclose(o.numpy(), x + 2)


def test_unlowered_calls_are_rejected():
    @I.ir_module
    class HighLevel:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.add(x, x)
                R.output(y)
            return y

    with pytest.raises(CodegenError, match="relax.add has no VM lowering"):
        build(HighLevel, "llvm", vm_lowering=False)
    lowered = relax.transform.LegalizeOps()(HighLevel)
    with pytest.raises(CodegenError, match="VMLoweringPipeline"):
        build(lowered, "llvm", vm_lowering=False)


def test_build_runs_the_vm_lowering_pipeline():
    mod = relax.transform.LegalizeOps()(_high_level())
    exe = build(mod, "llvm")
    vm = relax.VirtualMachine(exe, graphc.cpu())
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), 2 * x)


def _high_level():
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.add(x, x))
        bb.emit_func_output(out)
    return bb.get()


def test_unused_results_still_build_their_arguments():
    @I.ir_module
    class Checks:
        @R.function(pure=False)
        def main(x: R.Tensor((2,), "float32")):
            _ = R.call_packed("vm.builtin.check_tuple_info", (x, x), R.prim_value(3), R.str(""),
                              sinfo_args=R.Tuple())
            return x

    exe = build(Checks, "llvm", vm_lowering=False)
    assert "%1 = call vm.builtin.make_tuple(%0, %0)" in exe.as_text()
    vm = relax.VirtualMachine(exe, graphc.cpu())
    with pytest.raises(ValueError, match="expected a tuple of 3 fields, got 2"):
        vm["main"](np.zeros(2, "float32"))
