"""CanonicalizeBindings: aliases, trivial match_casts, outputs and constants (Before/Expected)."""

# ruff: noqa: F841 - the @R.function bodies are IR: their unused bindings are the test's point

import pytest

from graphc import relax
from graphc.ir.structural import assert_structural_equal
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


def canonicalize(mod):
    after = relax.transform.CanonicalizeBindings()(mod)
    assert relax.analysis.well_formed(after)
    again = relax.transform.CanonicalizeBindings()(after)
    assert all(again[gv] is after[gv] for gv in after.get_global_vars()), "not idempotent"
    return after


def check(before, expected):
    assert_structural_equal(canonicalize(before), expected)


def test_simple_aliases_are_removed():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor):
            y = x
            z = y
            w = z
            o = R.add(w, y)
            return o

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor):
            o = R.add(x, x)
            return o

    check(Before, Expected)


def test_output_bound_to_a_dataflow_var_takes_over_its_binding():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                lv = R.exp(x)
                lv1 = lv
                gv = lv1
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                gv = R.exp(x)
                R.output(gv)
            return gv

    check(Before, Expected)


def test_outputs_used_only_inside_the_block_become_dataflow_vars():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                a = R.exp(x)
                b = R.add(a, a)
                R.output(a, b)
            return b

    after = canonicalize(Before)
    kinds = [type(b.var).__name__ for b in after["main"].body.blocks[0].bindings]
    assert kinds == ["DataflowVar", "Var"]


def test_trivial_match_cast_is_an_alias_but_a_refining_one_stays():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor(ndim=2, dtype="float32")):
            a = R.match_cast(x, R.Tensor((2, 3), "float32"))
            b = R.match_cast(y, R.Tensor((2, 3), "float32"))
            c = R.add(a, b)
            return c

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor(ndim=2, dtype="float32")):
            b = R.match_cast(y, R.Tensor((2, 3), "float32"))
            c = R.add(x, b)
            return c

    check(Before, Expected)


def test_tuple_items_of_known_tuples_read_the_field():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
            t = (x, y)
            a = t[1]
            b = R.add(a, x)
            return b

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
            t = (x, y)
            b = R.add(y, x)
            return b

    check(Before, Expected)


def test_vars_bound_to_constants_are_inlined():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((), "float32")):
            c = R.const(2.0, "float32")
            y = R.multiply(x, c)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((), "float32")):
            c = R.const(2.0, "float32")
            y = R.multiply(x, R.const(2.0, "float32"))
            return y

    check(Before, Expected)


def test_nothing_to_do_returns_the_same_function():
    @I.ir_module
    class Canonical:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                lv = R.exp(x)
                gv = R.add(lv, x)
                R.output(gv)
            return gv

    assert relax.transform.CanonicalizeBindings()(Canonical)["main"] is Canonical["main"]


def test_aliases_across_branches_keep_the_module_well_formed():
    @I.ir_module
    class Before:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
            y = x
            if c:
                z = y
                r = R.exp(z)
            else:
                r = y
            return r

    @I.ir_module
    class Expected:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
            if c:
                r = R.exp(x)
            else:
                r = x
            return r

    check(Before, Expected)


def test_symbolic_vars_defined_from_known_sizes_are_replaced():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4, 2), "float32")):
            y = R.match_cast(x, R.Tensor(("n", "m"), "float32"))
            z = R.nn.relu(y)
            return z

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4, 2), "float32")) -> R.Tensor(ndim=2, dtype="float32"):  # as declared before
            z = R.nn.relu(x)
            return z

    check(Before, Expected)


def test_match_casts_that_disagree_are_an_error():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32"), w: R.Tensor((5,), "float32")):
            y = R.match_cast(x, R.Tensor(("n",), "float32"))
            v = R.match_cast(w, R.Tensor(("n",), "float32"))
            return (y, v)

    with pytest.raises(ValueError, match="match_casts disagree: the match_cast of 'v' implies that n is 5"):
        relax.transform.CanonicalizeBindings()(Before)


def test_a_match_cast_checking_a_known_symbolic_var_stays():
    # n is defined by the parameter: the cast checks the sliced length against it at run time
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 64), "float32"), y: R.Tensor((2, "n"), "float32")):
            n = T.int64()
            a = R.strided_slice(x, axes=[1], begin=[0], end=[n])
            b = R.match_cast(a, R.Tensor((1, n), "float32"))
            c = R.add(b, y)
            return c

    after = canonicalize(Before)
    assert "R.match_cast(a, R.Tensor((1, n)" in after.script()
    assert_structural_equal(after, Before)
