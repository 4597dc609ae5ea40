"""Expression builders: operator overloading, constant folding, type promotion."""

import pytest

from graphc import tir
from graphc.errors import TIRError


def test_operators_build_ir():
    i, j = tir.Var("i"), tir.Var("j")
    e = i * 4 + j
    assert isinstance(e, tir.Add) and isinstance(e.a, tir.Mul) and e.dtype == "int32"
    assert isinstance(i // 2, tir.FloorDiv) and isinstance(i % 2, tir.FloorMod)
    assert isinstance(tir.truncdiv(i, 2), tir.Div) and isinstance(tir.truncmod(i, 2), tir.Mod)
    assert isinstance(i < j, tir.LT) and (i < j).dtype == "bool"
    assert isinstance(tir.convert(i == j), tir.EQ) and isinstance(tir.convert(i != j), tir.NE)


def test_constant_folding_like_tvm():
    assert (tir.const(2) + 3).value == 5
    assert (tir.const(-7) // 2).value == -4 and (tir.const(-7) % 2).value == 1
    assert tir.truncdiv(-7, 2).value == -3 and tir.truncmod(-7, 2).value == -1
    i = tir.Var("i")
    assert (i + 0) is i and (i * 1) is i and (i * 0).value == 0


def test_type_promotion():
    i32, i64 = tir.Var("a", "int32"), tir.Var("b", "int64")
    assert (i32 + i64).dtype == "int64"
    x = tir.Var("x", "float32")
    assert (x + 1).dtype == "float32" and (i32 + 1.5).dtype == "float32"
    assert (x * 2.0).b.dtype == "float32"


def test_equality_is_identity_as_bool():
    i, j = tir.Var("i"), tir.Var("j")
    assert bool(i == i) and not bool(i == j) and bool(i != j)
    assert {i: 1}[i] == 1


def test_symbolic_expression_is_not_a_bool():
    with pytest.raises(TIRError, match="Python bool"):
        if tir.Var("i") < 3:
            pass


def test_division_by_constant_zero_is_rejected():
    with pytest.raises(TIRError, match="zero"):
        tir.Var("i") // 0


def test_intimm_wraps_to_its_width():
    assert tir.IntImm("int8", 130).value == -126 and tir.IntImm("uint8", 256).value == 0
    assert tir.IntImm("bool", 5).value == 1


def test_cast_folds_constants():
    assert tir.cast(tir.const(3), "float32").value == 3.0
    assert isinstance(tir.cast(tir.Var("i"), "int64"), tir.Cast)


def test_intrinsics_check_arity_and_types():
    x = tir.Var("x", "float32")
    assert tir.exp(x).op == "tir.exp" and tir.sigmoid(x).dtype == "float32"
    assert tir.floor(tir.Var("i")).dtype == "int32"  # identity on ints
    with pytest.raises(TIRError, match="unknown intrinsic"):
        tir.call_intrin("float32", "tir.nope", x)
    with pytest.raises(TIRError, match="takes 1 arguments"):
        tir.call_intrin("float32", "tir.exp", x, x)


def test_if_then_else_folds_constant_conditions():
    a, b = tir.Var("a", "float32"), tir.Var("b", "float32")
    assert tir.if_then_else(True, a, b) is a
    assert tir.if_then_else(tir.Var("i") < 2, a, b).op == "tir.if_then_else"


def test_buffer_indexing():
    A = tir.decl_buffer((4, 8), "float16", "A")
    load = A[1, 2]
    assert isinstance(load, tir.BufferLoad) and load.dtype == "float16"
    with pytest.raises(TIRError, match="2 dimensions"):
        A[1]


def test_replace_returns_self_when_unchanged():
    i = tir.Var("i")
    e = i + 1
    assert e.replace(a=e.a) is e and e.replace(a=tir.Var("j")) is not e


def test_range_make_gives_both_ends_one_dtype():
    n = tir.Var("n", "int64")
    r = tir.Range.make(0, n)
    assert r.min.dtype == "int64" and r.extent.dtype == "int64"
    assert tir.Range.make(4).min.dtype == "int32"
