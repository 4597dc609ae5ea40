"""The VM builtins on their own: shape heap codes, checks, reshape views, storage."""

import numpy as np
import pytest

import graphc.runtime as rt
from graphc.vm.builtins import (
    MakeShapeCode,
    MatchShapeCode,
    check_shape_info,
    check_tensor_info,
    check_tuple_info,
    get_builtin,
    make_shape,
    match_shape,
    register_builtin,
    reshape,
)
from graphc.vm.values import ShapeTuple, Storage, VMError

CTX = 'ErrorContext(fn=main, loc=param[1], param=y, annotation=R.Tensor((n, m), dtype="float32"))'


def test_match_shape_stores_and_compares_through_the_heap():
    heap = np.zeros(2, "int64")
    x = rt.empty((3, 5), "float32")
    match_shape(x, heap, 2, MatchShapeCode.STORE_TO_HEAP, 0, MatchShapeCode.STORE_TO_HEAP, 1, CTX)
    assert heap.tolist() == [3, 5]
    match_shape(ShapeTuple((3, 5)), heap, 2, MatchShapeCode.ASSERT_EQUAL_TO_LOAD, 0,
                MatchShapeCode.ASSERT_EQUAL_TO_LOAD, 1, CTX)
    with pytest.raises(ValueError, match=r"main: parameter 'y' expects R.Tensor\(\(n, m\).*dimension 1 \(m\) "
                                         r"is 6, but m = 5"):
        match_shape(rt.empty((3, 6), "float32"), heap, 2, MatchShapeCode.NO_OP, 0,
                    MatchShapeCode.ASSERT_EQUAL_TO_LOAD, 1, CTX)
    assert make_shape(heap, 3, MakeShapeCode.LOAD_SHAPE, 1, MakeShapeCode.USE_IMM, 7,
                      MakeShapeCode.LOAD_SHAPE, 0) == (5, 7, 3)


def test_checks_raise_value_errors_with_the_context():
    x = rt.empty((2, 2), "int32")
    check_tensor_info(x, 2, "int32", CTX)
    check_tensor_info(x, -1, "void", CTX)
    with pytest.raises(ValueError, match="expected dtype float32, got int32"):
        check_tensor_info(x, 2, "float32", CTX)
    with pytest.raises(ValueError, match="expected a tuple of 3 fields, got 2"):
        check_tuple_info((x, x), 3, CTX)
    with pytest.raises(ValueError, match="expected a shape"):
        check_shape_info(x, 2, CTX)
    with pytest.raises(ValueError, match="a run-time check.*expected rank 3"):
        check_tensor_info(x, 3, "int32", "")


def test_reshape_is_a_view():
    x = rt.tensor(np.arange(6, dtype="float32"))
    y = reshape(x, ShapeTuple((2, 3)))
    assert y.shape == (2, 3) and y.data_ptr == x.data_ptr
    with pytest.raises(ValueError, match="cannot view a tensor of shape"):
        reshape(x, ShapeTuple((4,)))


def test_storage_views_are_aligned_and_bounds_checked():
    s = Storage.allocate(256, rt.cpu())
    assert s.ptr % 64 == 0
    t = s.view(128, (4, 8), "float32")
    assert t.data_ptr == s.ptr + 128 and t.shape == (4, 8) and t.strides == (8, 1)
    t.copyfrom(np.ones((4, 8), "float32"))
    with pytest.raises(VMError, match="needs 384 bytes, but its storage has 256"):
        s.view(128, (8, 8), "float32")


def test_register_builtin():
    register_builtin("test.vm.twice", lambda x: 2 * x)
    assert get_builtin("test.vm.twice")(4) == 8
    with pytest.raises(ValueError, match="already registered"):
        register_builtin("test.vm.twice", lambda x: x)
