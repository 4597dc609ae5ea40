"""The intrinsic lowering table: custom intrinsics, levels and overriding built-in lowerings."""

import numpy as np
import pytest

from graphc import tir
from graphc.errors import CodegenError, TargetError
from graphc.ir import structural_equal
from graphc.target import register_intrin_lowering
from graphc.target.intrin import _RULES, lower_intrin


@pytest.fixture
def clean_rules():
    saved = {k: list(v) for k, v in _RULES.items()}
    yield
    _RULES.clear()
    _RULES.update(saved)


def mylog(x):
    """The TE notebook's custom log intrinsic."""
    return tir.call_intrin(x.dtype, "tir.mylog", x)


def test_custom_intrinsic_with_llvm_rule(clean_rules, run_ew):
    tir.register_intrin("tir.mylog", 1)

    def llvm_mylog_rule(op):
        if op.dtype == "float32":
            return tir.call_pure_extern("float32", "logf", op.args[0])
        return op

    register_intrin_lowering("tir.mylog", target="llvm", f=llvm_mylog_rule, level=99)
    x = np.linspace(0.5, 4, 16).astype("float32")
    np.testing.assert_allclose(run_ew(mylog, [x], "float32"), np.log(x), rtol=1e-6)


def test_intrinsic_without_rule_is_a_clear_error(clean_rules, run_ew):
    tir.register_intrin("tir.nolowering", 1)
    with pytest.raises(CodegenError, match="register_intrin_lowering"):
        run_ew(lambda v: tir.call_intrin("float32", "tir.nolowering", v), [np.ones(4, "float32")], "float32")


def test_higher_level_wins_and_overrides_builtin(clean_rules, run_ew):
    register_intrin_lowering("tir.exp", "llvm", lambda op: op.args[0] + 1.0, level=5)
    register_intrin_lowering("tir.exp", "llvm", lambda op: op.args[0] * 3.0, level=50)
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(run_ew(tir.exp, [x], "float32"), x * 3)


def test_rule_returning_none_falls_through(clean_rules):
    call = tir.exp(tir.Var("x", "float32"))
    below = lower_intrin(call, "llvm")  # the lower-level rules' result (the LLVM back end's own exp)
    register_intrin_lowering("tir.exp", "llvm", lambda op: None, level=7)
    assert structural_equal(lower_intrin(call, "llvm"), below)
    tir.register_intrin("tir.norule", 1)
    register_intrin_lowering("tir.norule", "llvm", lambda op: None, level=7)
    other = tir.call_intrin("float32", "tir.norule", tir.Var("y", "float32"))
    assert lower_intrin(other, "llvm") is other  # no rule left: the call stays


def test_duplicate_level_is_rejected_unless_override(clean_rules):
    register_intrin_lowering("tir.cos", "llvm", lambda op: None, level=3)
    with pytest.raises(TargetError, match="level 3"):
        register_intrin_lowering("tir.cos", "llvm", lambda op: None, level=3)
    register_intrin_lowering("tir.cos", "llvm", lambda op: None, level=3, override=True)


def test_decorator_form(clean_rules):
    @register_intrin_lowering("sin", "llvm", level=20)
    def rule(op):
        return op.args[0]

    x = tir.Var("x", "float32")
    assert lower_intrin(tir.sin(x), "llvm") is x


def test_float32_call_of_a_libm_double_function_binds_the_float_variant(run_ew):
    # tir.call_pure_extern("float32", "log", x) as the TE notebook writes it: must call logf.
    x = np.linspace(0.5, 4.0, 16).astype("float32")
    out = run_ew(lambda a: tir.call_pure_extern("float32", "log", a), [x], "float32")
    np.testing.assert_allclose(out, np.log(x), rtol=1e-6)
    x64 = x.astype("float64")
    out64 = run_ew(lambda a: tir.call_pure_extern("float64", "log", a), [x64], "float64")
    np.testing.assert_allclose(out64, np.log(x64), rtol=1e-12)


@pytest.mark.parametrize("kind", ["cuda", "opencl", "c"])
def test_device_code_clamps_checked_indices(kind):
    """GPU kernels cannot report a failed check yet: the index is clamped into its range (memory
    stays safe) and a bad size becomes 0, where the CPU back end raises."""
    from graphc.target.intrin import lower_intrin
    from graphc.tir.interpreter import Interpreter

    def evaluate(expr, env):
        interp = Interpreter()
        interp.env.update(env)
        return int(interp.eval(expr))

    i = tir.Var("i", "int32")
    for wrap, value, want in [(True, -3, 7), (True, 12, 9), (False, -3, 0), (False, 4, 4), (True, -30, 0)]:
        lowered = lower_intrin(tir.check_index(i, 10, wrap), kind)
        assert evaluate(lowered, {i: value}) == want, (wrap, value)
    n = tir.Var("n", "int64")
    size = lower_intrin(tir.check_size(n, n >= 0, "bad {value}"), kind)
    assert [evaluate(size, {n: v}) for v in (5, -2)] == [5, 0]
