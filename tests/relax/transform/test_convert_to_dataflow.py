"""ConvertToDataflow: runs of pure bindings become dataflow blocks (Before/Expected)."""

# ruff: noqa: F841 - the @R.function bodies are IR: their unused bindings are the test's point

from graphc import relax
from graphc.ir.structural import assert_structural_equal
from graphc.script import ir as I
from graphc.script import relax as R


def convert(mod, min_size=2):
    after = relax.transform.ConvertToDataflow(min_size)(mod)
    assert relax.analysis.well_formed(after)
    again = relax.transform.ConvertToDataflow(min_size)(after)
    assert all(again[gv] is after[gv] for gv in after.get_global_vars()), "not idempotent"
    return after


def test_pure_runs_split_around_impure_calls():
    @I.ir_module
    class Before:
        @R.function(pure=False)
        def main(x: R.Tensor((2,), "float32")):
            a = R.exp(x)
            b = R.add(a, x)
            p = R.call_packed("my.print", b, sinfo_args=R.Object)
            c = R.nn.relu(b)
            d = R.multiply(c, c)
            e = R.add(d, a)
            return e

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                a = R.exp(x)
                b = R.add(a, x)
                R.output(a, b)
            p = R.call_packed("my.print", b, sinfo_args=R.Object)
            with R.dataflow():
                c = R.nn.relu(b)
                d = R.multiply(c, c)
                e = R.add(d, a)
                R.output(e)
            return e

    assert_structural_equal(convert(Before), Expected)


def test_runs_shorter_than_min_size_stay():
    @I.ir_module
    class Short:
        @R.function(pure=False)
        def main(x: R.Tensor((2,), "float32")):
            a = R.exp(x)
            p = R.call_packed("my.print", a, sinfo_args=R.Object)
            b = R.exp(a)
            c = R.exp(b)
            return c

    after = convert(Short, min_size=3)
    assert after["main"] is Short["main"]
    after = convert(Short, min_size=2)
    kinds = [type(b).__name__ for b in after["main"].body.blocks]
    assert kinds == ["BindingBlock", "DataflowBlock"]


def test_pure_bindings_join_an_adjacent_dataflow_block():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            a = R.exp(x)
            with R.dataflow():
                lv = R.add(a, a)
                gv = R.nn.relu(lv)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                a = R.exp(x)
                lv = R.add(a, a)
                gv = R.nn.relu(lv)
                R.output(gv)
            return gv

    assert_structural_equal(convert(Before), Expected)


def test_if_bindings_are_not_dataflow_but_their_branches_are_converted():
    @I.ir_module
    class Before:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
            if c:
                a = R.exp(x)
                b = R.exp(a)
                r = R.add(a, b)
            else:
                r = x
            return r

    after = convert(Before)
    (block,) = after["main"].body.blocks
    assert type(block).__name__ == "BindingBlock"
    branch = block.bindings[0].value.true_branch
    assert [type(b).__name__ for b in branch.blocks] == ["DataflowBlock"]


def test_already_dataflow_is_unchanged():
    @I.ir_module
    class Done:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                lv = R.exp(x)
                gv = R.add(lv, x)
                R.output(gv)
            return gv

    assert relax.transform.ConvertToDataflow()(Done)["main"] is Done["main"]
