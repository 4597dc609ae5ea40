"""te.placeholder / te.compute / tensors and operations."""

import pytest

from graphc import te, tir
from graphc.errors import TIRError
from graphc.tir import IterType


def test_placeholder_properties():
    A = te.placeholder((4, 8), dtype="float16", name="A")
    assert A.ndim == 2 and A.dtype == "float16" and A.name == "A"
    assert [d.value for d in A.shape] == [4, 8]
    assert isinstance(A.op, te.PlaceholderOp) and A.op.output(0) is A
    assert A.op.input_tensors == []


def test_placeholder_default_name_and_int_shape():
    A = te.placeholder(5)
    assert A.name == "placeholder" and A.shape[0].value == 5 and A.dtype == "float32"


def test_var_and_size_var():
    n = te.var("n")
    s = te.size_var("s", "int64")
    assert isinstance(n, tir.Var) and n.dtype == "int32" and n.name == "n"
    assert isinstance(s, tir.SizeVar) and s.dtype == "int64"
    assert te.const(2, "int64").dtype == "int64"


def test_compute_names_axes_after_lambda_parameters():
    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda row, col: A[row, col] + 1.0, name="B", tag="elemwise")
    assert [iv.var.name for iv in B.op.axis] == ["row", "col"]
    assert all(iv.iter_type == IterType.DATA_PAR for iv in B.op.axis)
    assert B.op.tag == "elemwise" and B.op.name == "B" and B.name == "B"
    assert B.op.reduce_axis == () and B.op.input_tensors == [A]
    assert isinstance(B.op.body[0], tir.Add)


def test_compute_varargs_names():
    A = te.placeholder((2, 3, 4), name="A")
    B = te.compute(A.shape, lambda *i: A(*i) * 2.0, name="B")
    assert [iv.var.name for iv in B.op.axis] == ["i0", "i1", "i2"]


def test_tensor_read_expression():
    A = te.placeholder((4, 8), name="A")
    i = te.var("i")
    load = A[i, 3]
    assert isinstance(load, te.ProducerLoad)
    assert load.producer is A and load.indices[0] is i and load.indices[1].value == 3
    assert load.dtype == "float32"
    assert A(i, 3).indices[0] is i


def test_tensor_index_errors():
    A = te.placeholder((4, 8), name="A")
    with pytest.raises(TIRError, match="2 dimensions"):
        A[1]
    with pytest.raises(TIRError, match="integers"):
        A[1.5, 2]


def test_compute_arity_mismatch():
    A = te.placeholder((4, 8), name="A")
    with pytest.raises(TIRError, match="2 dimensions"):
        te.compute((4, 8), lambda i: A[i, 0])


def test_multi_output_compute():
    A = te.placeholder((4,), name="A")
    B, C = te.compute((4,), lambda i: (A[i] + 1.0, A[i] * 2.0), name="BC")
    assert B.op is C.op and B.op.num_outputs == 2
    assert (B.value_index, C.value_index) == (0, 1)
    assert B.name == "BC_v0" and C.name == "BC_v1"
    func = te.create_prim_func([A, B, C])
    block = func.body.block.body.body.block
    assert [w.buffer.name for w in block.writes] == ["BC_v0", "BC_v1"]
    assert len(block.body.seq) == 2


def test_int_and_mixed_dtype_bodies():
    A = te.placeholder((4,), dtype="int32", name="A")
    B = te.compute((4,), lambda i: A[i] * 2 + i, name="B")
    assert B.dtype == "int32"
    C = te.compute((4,), lambda i: i.astype("float32"), name="C")
    assert C.dtype == "float32"


def test_intrinsics_are_reexported():
    x = tir.Var("x", "float32")
    assert te.exp(x).op == "tir.exp" and te.sigmoid(x).op == "tir.sigmoid"
    assert te.erf(x).op == "tir.erf" and te.rsqrt(x).op == "tir.rsqrt"
    cond = te.all(x > 0.0, x < 1.0)
    assert isinstance(cond, tir.And)
    assert isinstance(te.any(x > 0.0, x < 1.0), tir.Or)
    assert te.if_then_else(x > 0.0, x, 0.0).op == "tir.if_then_else"
    i = tir.Var("i")
    assert isinstance(te.floordiv(i, 2), tir.FloorDiv) and isinstance(te.truncmod(i, 2), tir.Mod)
    assert te.max_value("int8").value == 127


def test_axis_iter_vars_in_expressions():
    A = te.placeholder((10,), name="A")
    k = te.reduce_axis((0, 3), "k")
    assert isinstance(k, tir.IterVar) and k.iter_type == IterType.COMM_REDUCE
    B = te.compute((4,), lambda i: te.sum(A[i * 2 + k], axis=k, where=k < 2), name="B")
    index = B.op.body[0].source[0].indices[0]
    assert index.b is k.var
    assert tir.convert(k) is k.var
    assert (1 + k).b is k.var


def test_nested_reduction_is_rejected():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    with pytest.raises(TIRError, match="whole body"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) * 2.0)


def test_repr_without_printer():
    A = te.placeholder((te.var("n"), 3), name="A")
    assert repr(A) == "Tensor(name=A, shape=(n, 3), dtype=float32)"
