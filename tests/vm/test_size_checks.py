"""Sizes computed when a model runs are checked before anything is allocated: a negative size,
or one whose bytes pass int64, raises ValueError; one larger than the machine, MemoryError."""

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.vm.builtins import tensor_to_shape
from graphc.vm.values import Storage, check_nbytes, machine_memory, tensor_spec

R = relax
N = tir.Var("n", "int64")


def _vm(mod):
    return R.VirtualMachine(graphc.compile(mod), graphc.cpu())["main"]


def test_a_negative_computed_size_names_the_kernel_and_the_value():
    x = R.Var("x", R.TensorStructInfo((N,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            r = bb.emit(R.op.arange(R.PrimValue(tir.const(0, "int64")), R.PrimValue(N - 10), 1, "float32"))
            out = bb.emit_output(R.op.add(r, R.const(1.0)))
        bb.emit_func_output(out)
    run = _vm(bb.get())
    np.testing.assert_array_equal(run(np.zeros(12, "float32")).numpy(), [1.0, 2.0])
    expected = r"the size n - 10 = -7 of the output .* of cls\.fused_arange.*negative"
    with pytest.raises(ValueError, match=expected):
        run(np.zeros(3, "float32"))
    np.testing.assert_array_equal(run(np.zeros(11, "float32")).numpy(), [1.0])  # still usable


def test_a_product_that_wraps_around_int64_is_refused():
    x = R.Var("x", R.TensorStructInfo((N,), "float32"))
    y = R.Var("y", R.TensorStructInfo((N,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            size = N * N * N * N * N  # wraps around for n = 2**13
            out = bb.emit_output(R.op.zeros(R.ShapeExpr([size]), "int8"))
        bb.emit_func_output(out)
    run = _vm(bb.get())
    assert run(np.zeros(3, "float32"), np.zeros(3, "float32")).shape == (243,)
    big = np.zeros(2**13, "float32")
    with pytest.raises(ValueError, match="overflows int64"):
        run(big, big)


def test_tensors_and_storage_refuse_bad_sizes_before_allocating():
    with pytest.raises(ValueError, match="negative shape"):
        tensor_spec((3, -2), "float32")
    with pytest.raises(ValueError, match="past int64"):
        tensor_spec((2**40, 2**40), "float32")
    with pytest.raises(ValueError, match="negative"):
        Storage.allocate(-16, graphc.cpu())
    with pytest.raises(MemoryError, match="more than this machine's"):
        Storage.allocate(machine_memory() + 1, graphc.cpu())
    assert check_nbytes(64, "a tensor") == 64


def test_sizes_read_from_a_tensor_are_checked():
    assert tensor_to_shape(graphc.runtime.tensor(np.array([2, 3]))) == (2, 3)
    with pytest.raises(ValueError, match="the size -3 read from a tensor is negative"):
        tensor_to_shape(graphc.runtime.tensor(np.array([2, -3])))
    with pytest.raises(ValueError, match="1-d integer tensor"):
        tensor_to_shape(graphc.runtime.tensor(np.array([2.0])))


def test_a_failed_match_cast_quotes_its_struct_info():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((1, 64), "float32"))
    y = R.Var("y", R.TensorStructInfo((2, n), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            z = bb.emit(R.op.strided_slice(x, [1], [0], [n]))  # (1, min(max(n, 0), 64))
            z = bb.match_cast(z, R.TensorStructInfo((1, n), "float32"))
            out = bb.emit_output(R.op.add(z, y))
        bb.emit_func_output(out)
    run = _vm(bb.get())
    assert run(np.ones((1, 64), "float32"), np.ones((2, 5), "float32")).shape == (2, 5)
    expected = (r'a match_cast expects R.Tensor\(\(1, n\), dtype="float32"\).*'
                r"dimension 1 \(n\) is 64, but n = 70")
    with pytest.raises(ValueError, match=expected):
        run(np.ones((1, 64), "float32"), np.ones((2, 70), "float32"))


def test_a_computed_size_past_the_machine_raises_memory_error_before_allocating():
    x = R.Var("x", R.TensorStructInfo((N,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(R.op.zeros(R.ShapeExpr([N * N * N * N]), "float32"))
        bb.emit_func_output(out)
    run = _vm(bb.get())
    assert run(np.zeros(3, "float32")).shape == (81,)
    with pytest.raises(MemoryError, match=r"needs 4398046511104 bytes, more than this machine's"):
        run(np.zeros(2**10, "float32"))  # 2**40 float32: 4 TiB, no int64 overflow
    assert run(np.zeros(2, "float32")).shape == (16,)  # still usable


def test_a_negative_constant_size_is_left_to_the_run_time_check():
    x = R.Var("x", R.TensorStructInfo((6,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            shape = bb.emit(R.op.tensor_to_shape(R.const(np.array([2, -3], "int64"))))
            out = bb.emit_output(R.op.reshape(x, shape))
        bb.emit_func_output(out)
    run = _vm(bb.get())  # FoldConstant does not fold the negative size into the reshape
    with pytest.raises(ValueError, match="the size -3 read from a tensor is negative"):
        run(np.zeros(6, "float32"))
