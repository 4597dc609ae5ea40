"""Property tests: the simplifier, bounds, can_prove and int_set agree with evaluation."""

import functools
import random

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphc import tir
from graphc.tir import Range, Var
from graphc.tir.arith import Analyzer, evaluate

VARS = [Var("x"), Var("y"), Var("z")]
X, Y, Z = VARS
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))

_BINOPS = ["add", "sub", "mul_const", "mul_var", "floordiv", "floormod", "min", "max", "select",
           "truncdiv", "truncmod"]  # fmt: skip
_CMPS = [lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b,
         lambda a, b: tir.convert(a == b), lambda a, b: tir.convert(a != b)]  # fmt: skip


@functools.cache
def exprs_of_depth(depth):
    """One strategy object per depth (building strategies inside draws is slow)."""
    return int_exprs(depth)


@functools.cache
def conditions_of_depth(depth):
    return conditions(depth)


@st.composite
def int_exprs(draw, depth=4):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(VARS))
        return tir.const(draw(st.integers(-6, 6)))
    op = draw(st.sampled_from(_BINOPS))
    a = draw(exprs_of_depth(depth - 1))
    if op == "mul_const":
        return a * draw(st.integers(-4, 4))
    if op in ("floordiv", "floormod", "truncdiv", "truncmod"):
        c = draw(st.integers(1, 9))
        fn = {"floordiv": tir.floordiv, "floormod": tir.floormod,
              "truncdiv": tir.truncdiv, "truncmod": tir.truncmod}[op]  # fmt: skip
        return fn(a, c)
    b = draw(exprs_of_depth(depth - 1))
    if op == "mul_var":
        return a * draw(st.sampled_from(VARS))
    if op == "select":
        cond = draw(conditions_of_depth(depth - 1))
        return tir.select(cond, a, b)
    return {"add": lambda: a + b, "sub": lambda: a - b, "min": lambda: tir.min(a, b),
            "max": lambda: tir.max(a, b)}[op]()  # fmt: skip


@st.composite
def conditions(draw, depth=2):
    a, b = draw(exprs_of_depth(depth)), draw(exprs_of_depth(depth))
    cond = tir.convert(draw(st.sampled_from(_CMPS))(a, b))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return tir.all(cond, draw(conditions_of_depth(max(depth - 1, 0))))
    if kind == 1:
        return tir.any(cond, draw(conditions_of_depth(max(depth - 1, 0))))
    if kind == 2:
        return tir.expr.logical_not(cond)
    return cond


@st.composite
def var_bounds(draw):
    """Per variable (lo, hi, known): samples come from [lo, hi]; `known` says it is bound."""
    out = {}
    for v in VARS:
        lo = draw(st.integers(-10, 10))
        out[v] = (lo, lo + draw(st.integers(0, 12)), draw(st.integers(0, 4)) > 0)
    return out


def _analyzer(bounds):
    ana = Analyzer()
    for v, (lo, hi, known) in bounds.items():
        if known:
            ana.bind(v, Range(tir.const(lo), tir.const(hi - lo + 1)))
    return ana


def _samples(bounds, seed, count=24):
    rng = random.Random(seed)
    envs = [{v: b[0] for v, b in bounds.items()}, {v: b[1] for v, b in bounds.items()}]
    for _ in range(count):
        envs.append({v: rng.randint(b[0], b[1]) for v, b in bounds.items()})
    return envs


@SETTINGS
@given(int_exprs(), var_bounds(), st.integers(0, 1000))
def test_simplify_preserves_value(expr, bounds, seed):
    simplified = _analyzer(bounds).simplify(expr)
    assert simplified.dtype == expr.dtype
    for env in _samples(bounds, seed):
        assert evaluate(simplified, env) == evaluate(expr, env), (expr, simplified, env)


@SETTINGS
@given(conditions(), var_bounds(), st.integers(0, 1000))
def test_simplify_preserves_conditions(cond, bounds, seed):
    simplified = _analyzer(bounds).simplify(cond)
    for env in _samples(bounds, seed):
        assert bool(evaluate(simplified, env)) == bool(evaluate(cond, env)), (cond, simplified, env)


@SETTINGS
@given(int_exprs(), var_bounds(), st.integers(0, 1000))
def test_const_int_bound_contains_values(expr, bounds, seed):
    bound = _analyzer(bounds).const_int_bound(expr)
    for env in _samples(bounds, seed):
        value = evaluate(expr, env)
        assert bound.min_value <= value <= bound.max_value, (expr, bound, env, value)


@SETTINGS
@given(conditions(), var_bounds(), st.integers(0, 1000))
def test_can_prove_is_never_wrong(cond, bounds, seed):
    ana = _analyzer(bounds)
    proved, refuted = ana.can_prove(cond), ana.can_prove(tir.expr.logical_not(cond))
    assert not (proved and refuted)
    for env in _samples(bounds, seed):
        value = bool(evaluate(cond, env))
        assert not proved or value, (cond, env)
        assert not refuted or not value, (cond, env)


@SETTINGS
@given(int_exprs(), var_bounds(), st.integers(0, 1000), st.sampled_from(VARS))
@example(tir.truncdiv(X * Z, 2) * 3, {X: (0, 0, False), Y: (0, 0, False), Z: (0, 1, False)}, 0, Z)
@example(tir.truncdiv(X * Z, 2) * -2, {X: (0, 0, False), Y: (0, 0, False), Z: (0, 1, False)}, 0, Z)
def test_int_set_contains_values(expr, bounds, seed, relaxed):
    # the examples: an end folded from the dtype's limits wrapped around int32 (min > max)
    lo, hi, _ = bounds[relaxed]
    fixed = {v: b for v, b in bounds.items() if v is not relaxed}
    ana = _analyzer(fixed)
    interval = ana.int_set(expr, {relaxed: Range(tir.const(lo), tir.const(hi - lo + 1))})
    for env in _samples(bounds, seed):
        value = evaluate(expr, env)
        if interval.min_value is not None:
            assert evaluate(interval.min_value, env) <= value, (expr, interval, env)
        if interval.max_value is not None:
            assert value <= evaluate(interval.max_value, env), (expr, interval, env)


@SETTINGS
@given(int_exprs(), var_bounds(), st.integers(0, 1000))
def test_modular_set_contains_values(expr, bounds, seed):
    ms = _analyzer(bounds).modular_set(expr)
    for env in _samples(bounds, seed):
        value = evaluate(expr, env)
        if ms.coeff == 0:
            assert value == ms.base
        else:
            assert value % ms.coeff == ms.base % ms.coeff


@SETTINGS
@given(int_exprs(), conditions(1), var_bounds(), st.integers(0, 1000))
def test_simplify_under_constraint(expr, cond, bounds, seed):
    ana = _analyzer(bounds)
    with ana.constraint_scope(cond):
        simplified = ana.simplify(expr)
        proved = ana.can_prove(expr < 3)
    for env in _samples(bounds, seed, count=40):
        if evaluate(cond, env):
            assert evaluate(simplified, env) == evaluate(expr, env), (cond, expr, simplified, env)
            assert not proved or evaluate(expr, env) < 3, (cond, expr, env)


@SETTINGS
@given(int_exprs(), st.integers(1, 9), st.integers(1, 6), st.integers(0, 1000))
def test_simplify_with_symbolic_ranges(expr, x_hi, z_ext, seed):
    """x in [1, x_hi], y in [0, x) (a loop bounded by another variable), z in [0, z_ext)."""
    x, y, z = VARS
    ana = Analyzer()
    ana.bind(x, Range(tir.const(1), tir.const(x_hi)))
    ana.bind(y, Range(tir.const(0), x))
    ana.bind(z, Range(tir.const(0), tir.const(z_ext)))
    simplified = ana.simplify(expr)
    bound = ana.const_int_bound(expr)
    rng = random.Random(seed)
    for _ in range(30):
        xv = rng.randint(1, x_hi)
        env = {x: xv, y: rng.randint(0, xv - 1), z: rng.randint(0, z_ext - 1)}
        value = evaluate(expr, env)
        assert evaluate(simplified, env) == value, (expr, simplified, env)
        assert bound.min_value <= value <= bound.max_value


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.integers(0, 1000))
def test_split_and_fuse_index_patterns(e0, e1, e2, seed):
    """Indices produced by split (i0 * e1 * e2 + i1 * e2 + i2) and fuse (f // n, f % n) round-trip."""
    i0, i1, i2, f, n = Var("i0"), Var("i1"), Var("i2"), Var("f"), tir.SizeVar("n")
    ana = Analyzer()
    for v, e in ((i0, e0), (i1, e1), (i2, e2)):
        ana.bind(v, Range(tir.const(0), tir.const(e)))
    fused = i0 * (e1 * e2) + i1 * e2 + i2
    assert ana.can_prove_equal(fused // (e1 * e2), i0)
    assert ana.can_prove_equal(fused % e2, i2)
    assert ana.can_prove_equal(fused // e2 % e1, i1)
    ana.bind(f, Range(tir.const(0), n * e0))
    assert ana.can_prove_equal(f // n * n + f % n, f)
    assert ana.can_prove(f // n < e0)
    outer, inner = Var("o"), Var("in")
    ana.bind(outer, Range(tir.const(0), tir.const(e0)))
    ana.bind(inner, Range(tir.const(0), n))
    assert ana.can_prove_equal((outer * n + inner) // n, outer)
    assert ana.simplify((outer * n + inner) % n) is inner
