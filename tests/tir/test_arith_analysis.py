"""Tests of the analyzer's other queries: int_set, const_int_bound, modular_set, evaluate."""

import numpy as np
import pytest

from graphc import tir
from graphc.errors import TIRError
from graphc.tir import Range, SizeVar, Var
from graphc.tir.arith import NEG_INF, POS_INF, Analyzer, ConstIntBound, IntervalSet, evaluate
from graphc.tir.arith.keys import expr_text

i, j, k, x = Var("i"), Var("j"), Var("k"), Var("x")
n = SizeVar("n")


def ends(interval):
    return (
        None if interval.min_value is None else expr_text(interval.min_value),
        None if interval.max_value is None else expr_text(interval.max_value),
    )


# --- int_set -----------------------------------------------------------------------------


def test_int_set_linear_and_symbolic_extent():
    ana = Analyzer()
    assert ends(ana.int_set(i * 16 + j, {j: Range(0, 16)})) == ("i * 16", "i * 16 + 15")
    assert ends(ana.int_set(i * 16 + j, {i: Range(0, n), j: Range(0, 16)})) == ("0", "n * 16 - 1")
    assert ends(ana.int_set(j - i, {i: Range(0, 4), j: Range(0, 8)})) == ("-3", "7")
    assert ends(ana.int_set(i * -2, {i: Range(1, 4)})) == ("-8", "-2")


def test_int_set_split_index():
    ana = Analyzer()
    i0, i1, i2 = Var("i0"), Var("i1"), Var("i2")
    dom = {i1: Range(0, 4), i2: Range(0, 4)}
    assert ends(ana.int_set(i0 * 16 + i1 * 4 + i2, dom)) == ("i0 * 16", "i0 * 16 + 15")
    assert ends(ana.int_set((i0 * 16 + i1 * 4 + i2) // 4, dom)) == ("i0 * 4", "i0 * 4 + 3")


def test_int_set_div_mod_min_max_select():
    ana = Analyzer()
    assert ends(ana.int_set(i // 4, {i: Range(0, 16)})) == ("0", "3")
    assert ends(ana.int_set(i % 4, {i: Range(0, 16)})) == ("0", "3")
    assert ends(ana.int_set(i % 8, {i: Range(2, 3)})) == ("2", "4")
    assert ends(ana.int_set(tir.min(i, 5), {i: Range(0, 16)})) == ("0", "5")
    assert ends(ana.int_set(tir.max(i, x), {i: Range(0, 16)})) == ("max(x, 0)", "max(x, 15)")
    assert ends(ana.int_set(tir.select(x < 0, i, i + 4), {i: Range(0, 4)})) == ("0", "7")
    assert ends(ana.int_set(i % n, {i: Range(0, 100)})) == ("0", "n - 1")


def test_int_set_without_relaxed_vars_is_a_point():
    ana = Analyzer()
    s = ana.int_set(x * 2 + x, {})
    assert s.is_single_point() and expr_text(s.min_value) == "x * 3"


def test_int_set_unbounded_and_interval_dom():
    ana = Analyzer()
    s = ana.int_set(i * x, {i: Range(0, 4)})  # the sign of x is unknown
    assert s.is_everything() and not s.has_lower_bound()
    s = ana.int_set(i + 1, {i: IntervalSet(tir.const(2), tir.const(5))})
    assert ends(s) == ("3", "6")
    assert expr_text(ana.int_set(i, {i: Range(0, n)}).to_range().extent) == "n"
    with pytest.raises(TIRError):
        IntervalSet.everything().to_range()


# --- bounds and modular sets ---------------------------------------------------------------


def test_const_int_bound_rules():
    ana = Analyzer()
    ana.bind(i, Range(0, 16))
    ana.bind(j, Range(-4, 8))
    cases = {
        i * 4 + 3: (3, 63), i - j: (-3, 19), i * j: (-60, 45), i // 4: (0, 3), j // 4: (-1, 0),
        j % 4: (0, 3), tir.min(i, j): (-4, 3), tir.max(i, j): (0, 15), tir.truncdiv(j, 2): (-2, 1),
        tir.truncmod(j, 3): (-2, 2), tir.select(i < 4, i, j): (-4, 15),
    }  # fmt: skip
    for expr, (lo, hi) in cases.items():
        b = ana.const_int_bound(expr)
        assert (b.min_value, b.max_value) == (lo, hi), expr_text(expr)


def test_const_int_bound_dtypes_and_casts():
    ana = Analyzer()
    assert ana.const_int_bound(Var("b", "bool")) == ConstIntBound(0, 1)
    assert ana.const_int_bound(Var("u", "uint8")) == ConstIntBound(0, 255)
    assert ana.const_int_bound(tir.expr.Cast("int8", i)) == ConstIntBound(-128, 127)
    big = ana.const_int_bound(Var("a", "int64") * 2)
    assert (big.min_value, big.max_value) == (NEG_INF, POS_INF)
    assert ana.const_int_bound(n).min_value == 0


def test_update_and_override():
    ana = Analyzer()
    ana.update(x, ConstIntBound(0, 100))
    ana.update(x, ConstIntBound(-5, 10))
    assert ana.const_int_bound(x) == ConstIntBound(0, 10)
    ana.update(x, ConstIntBound(-5, 10), allow_override=True)
    assert ana.const_int_bound(x) == ConstIntBound(-5, 10)


def test_bind_dict_and_single_point_range():
    ana = Analyzer()
    ana.bind({i: Range(0, 4), j: Range(3, 1)})
    assert ana.simplify(j * 2).value == 6
    assert ana.const_int_bound(i) == ConstIntBound(0, 3)
    with pytest.raises(TIRError):
        ana.bind(tir.const(1), Range(0, 4))


def test_modular_set_rules():
    ana = Analyzer()
    for expr, (coeff, base) in {
        i * 8 + 3: (8, 3), i * 6 + j * 4: (2, 0), (i * 8 + 4) // 4: (2, 1), (i * 8 + 5) % 4: (0, 1),
        i * 8 % 3: (1, 0), tir.const(7): (0, 7), (i * 4) * (j * 6): (24, 0),
    }.items():  # fmt: skip
        ms = ana.modular_set(expr)
        assert (ms.coeff, ms.base) == (coeff, base), expr_text(expr)


# --- evaluate ------------------------------------------------------------------------------


def test_evaluate_semantics():
    env = {i: -7, j: 2}
    assert evaluate(i // j, env) == -4 and evaluate(i % j, env) == 1
    assert evaluate(tir.truncdiv(i, j), env) == -3 and evaluate(tir.truncmod(i, j), env) == -1
    assert evaluate(tir.select(i < j, i, j), env) == -7
    assert evaluate(tir.expr.Cast("int8", tir.const(300)), {}) == 44
    assert evaluate(tir.all(i < 0, j > 0), env) is True
    f = Var("f", "float32")
    assert evaluate(tir.exp(f) * 2.0, {f: 0.0}) == 2.0
    assert evaluate(tir.if_then_else(i > 0, i, j), env) == 2
    assert evaluate(tir.expr.let(k, i * 2, k + 1), env) == -13


def test_evaluate_buffer_load_and_errors():
    A = tir.decl_buffer((2, 3), "float32", "A")
    arr = np.arange(6, dtype="float32").reshape(2, 3)
    assert evaluate(A[1, j], {A: arr, j: 2}) == 5.0
    with pytest.raises(TIRError, match="'i'"):
        evaluate(i + 1, {})
    with pytest.raises(TIRError, match="buffer 'A'"):
        evaluate(A[0, 0], {})
    with pytest.raises(ZeroDivisionError):
        evaluate(i // j, {i: 1, j: 0})
