"""Targeted tests of each simplifier rule family."""

import pytest

from graphc import tir
from graphc.ir import structural_equal
from graphc.tir import IntImm, Range, SizeVar, Var
from graphc.tir.arith import Analyzer, simplify
from graphc.tir.arith.keys import expr_text


def text(expr):
    return expr_text(expr)


@pytest.fixture
def ana():
    return Analyzer()


i, j, k, x, y = (Var(name) for name in "ijkxy")
n, m = SizeVar("n"), SizeVar("m")


# --- canonical linear forms ------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, expected",
    [
        (i * 4 + j - i * 4, "j"),
        ((i + 1) * 2 - 2, "i * 2"),
        (x * 2 + x, "x * 3"),
        (j + i * 4, "i * 4 + j"),
        (x - x, "0"),
        (x * y - y * x, "0"),
        ((x + 1) * 3 - x, "x * 2 + 3"),
        (5 - x, "5 - x"),
        (0 - x - 3, "-3 - x"),
        (x * 2 - y * 2 + 1 - 1, "x * 2 - y * 2"),
        ((x + y) * (x - y), "x * x - y * y"),
    ],
)
def test_canonical_form(ana, expr, expected):
    assert text(ana.simplify(expr)) == expected


def test_canonical_split_index():
    i0, i1, i2 = Var("i_0"), Var("i_1"), Var("i_2")
    assert text(simplify(i2 + i1 * 4 + i0 * 16)) == "i_0 * 16 + i_1 * 4 + i_2"


def test_keeps_dtype_int64(ana):
    a = Var("a", "int64")
    out = ana.simplify(a * 2 + a - a * 3 + 7)
    assert isinstance(out, IntImm) and out.dtype == "int64" and out.value == 7
    assert ana.simplify(a + a).dtype == "int64"


def test_returns_same_object_when_already_simple(ana):
    e = i * 4 + j
    assert ana.simplify(i) is i
    assert structural_equal(ana.simplify(e), e)


# --- floordiv / floormod -----------------------------------------------------------------


def test_div_mod_with_bounded_remainder(ana):
    ana.bind(j, Range(0, 4))
    assert ana.simplify((i * 4 + j) // 4) is i
    assert ana.simplify((i * 4 + j) % 4) is j
    assert text(ana.simplify((i * 4 + j + 8) // 4)) == "i + 2"
    assert ana.simplify(j // 4).value == 0
    assert ana.simplify(j % 4) is j


def test_div_mod_unbounded_remainder(ana):
    assert text(ana.simplify((i * 4 + j) // 4)) == "i + j // 4"
    assert text(ana.simplify((i * 4 + j) % 4)) == "j % 4"


@pytest.mark.parametrize(
    "expr, expected",
    [
        ((x // 4) * 4 + x % 4, "x"),
        (x % 4 + (x // 4) * 4, "x"),
        ((x // 4) * 8 + (x % 4) * 2, "x * 2"),
        (x - (x // 4) * 4, "x % 4"),
        (x // 1, "x"),
        (x % 1, "0"),
        ((x % 8) % 4, "x % 4"),
        ((x // 4) // 2, "x // 8"),
        ((x * 2) // 4, "x // 2"),
        ((x * 2) % 4, "x % 2 * 2"),
        ((x * 6 + 3) // 3, "x * 2 + 1"),
        ((x + 8) // 4, "x // 4 + 2"),
        ((x + 9) % 4, "(x + 1) % 4"),
        ((x - 1) // 4, "(x - 1) // 4"),
    ],
)
def test_div_mod_rules(ana, expr, expected):
    assert text(ana.simplify(expr)) == expected


def test_mod_bound(ana):
    b = ana.const_int_bound(x % 8)
    assert (b.min_value, b.max_value) == (0, 7)
    assert ana.can_prove(x % 8 < 8)
    assert ana.can_prove(x % 8 >= 0)


def test_split_patterns(ana):
    i0, i1, i2 = Var("i_0"), Var("i_1"), Var("i_2")
    ana.bind(i0, Range(0, 8))
    ana.bind(i1, Range(0, 4))
    ana.bind(i2, Range(0, 4))
    fused = i0 * 16 + i1 * 4 + i2
    assert ana.simplify(fused // 16) is i0
    assert text(ana.simplify(fused % 16)) == "i_1 * 4 + i_2"
    assert text(ana.simplify(fused // 4)) == "i_0 * 4 + i_1"
    assert ana.simplify(fused // 4 % 4) is i1
    assert ana.simplify(fused < 128).value == 1


def test_fuse_patterns_symbolic(ana):
    f = Var("i_j_fused")
    ana.bind(f, Range(0, n * m))
    assert text(ana.simplify(f // m * m + f % m)) == "i_j_fused"
    ana.bind(i, Range(0, n))
    ana.bind(j, Range(0, m))
    assert ana.simplify((i * m + j) // m) is i
    assert ana.simplify((i * m + j) % m) is j
    assert ana.simplify(j // m).value == 0
    assert ana.can_prove(j < m)
    assert ana.can_prove(i * m + j < n * m)


def test_truncdiv_becomes_floordiv_when_nonnegative(ana):
    ana.bind(i, Range(0, 16))
    ana.bind(j, Range(0, 4))
    assert ana.simplify(tir.truncdiv(i * 4 + j, 4)) is i
    assert ana.simplify(tir.truncmod(i * 4 + j, 4)) is j
    assert type(ana.simplify(tir.truncdiv(x, 4))).__name__ == "Div"  # x may be negative
    assert type(ana.simplify(tir.truncmod(x, 4))).__name__ == "Mod"


def test_truncdiv_constants(ana):
    assert ana.simplify(tir.truncdiv(tir.const(-7), tir.const(2))).value == -3
    assert ana.simplify(tir.truncmod(tir.const(-7), tir.const(2))).value == -1


# --- min / max ---------------------------------------------------------------------------


def test_min_max(ana):
    ana.bind(i, Range(0, 8))
    assert ana.simplify(tir.min(i, 10)) is i
    assert ana.simplify(tir.max(i, 10)).value == 10
    assert ana.simplify(tir.max(x, x)) is x
    assert ana.simplify(tir.min(x + 1, x)) is x
    assert text(ana.simplify(tir.max(x + 1, x))) == "x + 1"
    assert text(ana.simplify(tir.min(tir.min(x, 4), 2))) == "min(x, 2)"
    assert text(ana.simplify(tir.min(3, x))) == "min(x, 3)"
    assert ana.simplify(tir.min(x, tir.max(x, y))) is x


def test_min_max_symbolic(ana):
    ana.bind(i, Range(0, n))
    assert ana.simplify(tir.min(i, n)) is i
    assert ana.simplify(tir.max(i, n - 1)) is not i


# --- comparisons and booleans ------------------------------------------------------------


def test_comparisons_decided_by_bounds(ana):
    ana.bind(i, Range(0, 16))
    assert ana.simplify(i < 16).value == 1
    assert ana.simplify(i >= 16).value == 0
    assert ana.simplify(i <= 15).value == 1
    assert ana.simplify(tir.convert(i == 20)).value == 0
    assert ana.simplify(x < x + 1).value == 1
    assert ana.simplify(tir.convert(x * 2 == 1)).value == 0


def test_comparison_normal_form(ana):
    assert text(ana.simplify(i + 1 < n)) == "i < n - 1"
    assert text(ana.simplify(i > j)) == "j < i"
    assert text(ana.simplify(i * 4 < 8)) == "i < 2"
    assert text(ana.simplify(i * 4 + j < i * 4 + 8)) == "j < 8"
    assert text(ana.simplify(tir.convert(3 - i == 0))) == "i == 3"


def test_comparison_of_floordiv(ana):
    assert text(ana.simplify(x // 4 < 2)) == "x < 8"
    assert text(ana.simplify(x // 4 <= 2)) == "x < 12"
    assert text(ana.simplify(x // 4 > 2)) == "12 <= x"
    assert text(ana.simplify(x // 4 >= 2)) == "8 <= x"
    assert text(ana.simplify(x // 4 + 1 < y)) == "x // 4 < y - 1"


def test_boolean_rules(ana):
    ana.bind(j, Range(0, 4))
    c = x < y
    assert ana.simplify(tir.all(c, c)) is not None and text(ana.simplify(tir.all(c, c))) == "x < y"
    assert ana.simplify(tir.all(c, tir.expr.logical_not(c))).value == 0
    assert ana.simplify(tir.any(c, tir.expr.logical_not(c))).value == 1
    assert text(ana.simplify(tir.all(j < 2, j < 3))) == "j < 2"
    assert ana.simplify(tir.any(j < 2, j >= 2)).value == 1
    assert ana.simplify(tir.all(i < 5, i > 7)).value == 0
    assert text(ana.simplify(tir.expr.logical_not(x < y))) == "y <= x"
    assert text(ana.simplify(tir.expr.Not(tir.expr.Not(c, "bool"), "bool"))) == "x < y"


def test_select_and_cast(ana):
    ana.bind(j, Range(0, 4))
    assert ana.simplify(tir.select(j < 5, x, y)) is x
    assert ana.simplify(tir.select(x < y, x + 0, x)) is x
    assert ana.simplify(tir.if_then_else(j >= 4, x, y)) is y
    cast = tir.expr.Cast("int64", tir.const(3))
    out = ana.simplify(cast)
    assert isinstance(out, IntImm) and out.dtype == "int64" and out.value == 3


def test_select_branches_know_their_condition(ana):
    assert ana.simplify(tir.select(x < 4, tir.min(x, 4), tir.max(x, 4))) is x
    assert text(ana.simplify(tir.select(x < y, x, y))) == "min(x, y)"
    assert text(ana.simplify(tir.select(x <= y, y, x))) == "max(x, y)"
    a, b = Var("a", "float32"), Var("b", "float32")
    assert type(ana.simplify(tir.select(a < b, a, b))).__name__ == "Select"  # NaN semantics differ


def test_floats_only_fold_constants(ana):
    a, b = Var("a", "float32"), Var("b", "float32")
    e = a + b - a
    assert ana.simplify(e) is e  # never reorder float arithmetic
    assert ana.simplify(tir.expr.Add(tir.const(1.0), tir.const(2.0), "float32")).value == 3.0
    assert text(ana.simplify(a * (tir.const(2.0) + tir.const(1.0)))) == "a * 3.0"


def test_let_expression(ana):
    lv = Var("t")
    e = tir.expr.let(lv, tir.const(3), lv * 2 + x)
    assert text(ana.simplify(e)) == "x + 6"


# --- analyzer state ------------------------------------------------------------------------


def test_constraint_scope(ana):
    with ana.constraint_scope(x < n):
        assert ana.can_prove(x < n)
        assert ana.can_prove(x < n + 1)
        assert ana.simplify(tir.min(x, n)) is x
    assert not ana.can_prove(x < n)
    with ana.constraint_scope(tir.all(0 <= x, x < 4)):
        assert ana.simplify(x // 4).value == 0
        assert ana.const_int_bound(x).max_value == 3
    assert ana.const_int_bound(x).max_value == 2**31 - 1


def test_bind_expression_and_update(ana):
    ana.bind(x, tir.const(5))
    assert ana.simplify(x + 1).value == 6
    ana.update(y, tir.arith.ConstIntBound(0, 9))
    assert ana.simplify(y // 10).value == 0
    ana.bind(k, i * 4)
    assert ana.modular_set(k).coeff == 1  # k is not substituted, only bounded


def test_sizevar_nonnegative(ana):
    assert ana.const_int_bound(n).min_value == 0
    assert ana.can_prove(n >= 0)
    assert not ana.can_prove(x >= 0)


def test_const_int_bound_infinite(ana):
    a = Var("a", "int64")
    b = ana.const_int_bound(a)
    assert b.min_value == tir.arith.NEG_INF and b.max_value == tir.arith.POS_INF


def test_modular_set(ana):
    ms = ana.modular_set(i * 8 + 3)
    assert (ms.coeff, ms.base) == (8, 3)
    ms = ana.modular_set((i * 8 + 4) // 4)
    assert (ms.coeff, ms.base) == (2, 1)


def test_can_prove_equal(ana):
    assert ana.can_prove_equal(i * 4 + j - j, i * 4)
    assert not ana.can_prove_equal(i, j)


def _long_sum(terms: int, vs):
    e = tir.const(0)
    for t in range(terms):
        e = e + vs[t % 40] * (t % 7) - vs[(t * 3) % 40] // 4
    return e


def test_large_expression_takes_work_linear_in_its_size():
    """A sum of hundreds of terms is one pass over its nodes: the rewrite steps (a count of
    work, not a timing) grow linearly with the number of terms, and the result is right."""
    vs = [Var(f"v{t}") for t in range(40)]
    steps = {}
    for terms in (400, 800):
        ana = Analyzer()
        out = ana.simplify(_long_sum(terms, vs))
        steps[terms] = ana.rewrite_steps
    assert steps[400] <= 12 * 400  # about 8 per term today: each term is a handful of nodes
    assert steps[800] <= 2.2 * steps[400]  # doubling the terms about doubles the work
    values = {v: (7 * t) % 23 - 11 for t, v in enumerate(vs)}
    expected = sum(values[vs[t % 40]] * (t % 7) - values[vs[(t * 3) % 40]] // 4 for t in range(800))
    assert tir.arith.evaluate(out, values) == expected
