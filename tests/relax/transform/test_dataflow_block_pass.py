"""dataflowblock_pass: function and class forms, options, contracts on what a block pass returns."""

import pytest

from graphc import relax
from graphc.errors import GraphcError
from graphc.ir.structural import assert_structural_equal
from graphc.ir.transform import PassContext, Sequential
from graphc.script import ir as I
from graphc.script import relax as R

RELU = relax.Op.get("relax.nn.relu")


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv = R.nn.relu(x)
            gv = R.add(lv, x)
            R.output(gv)
        y = R.exp(gv)
        with R.dataflow():
            lv1 = R.nn.relu(y)
            gv1 = R.multiply(lv1, lv1)
            R.output(gv1)
        return gv1

    @R.function
    def other(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = R.nn.relu(x)
            R.output(gv)
        return gv


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv = R.nn.silu(x)
            gv = R.add(lv, x)
            R.output(gv)
        y = R.exp(gv)
        with R.dataflow():
            lv1 = R.nn.silu(y)
            gv1 = R.multiply(lv1, lv1)
            R.output(gv1)
        return gv1

    @R.function
    def other(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = R.nn.silu(x)
            R.output(gv)
        return gv


def _replace_op(block, old, new_op):
    bindings = []
    for b in block.bindings:
        if isinstance(b.value, relax.Call) and b.value.op is old:
            b = relax.VarBinding(b.var, relax.Call(relax.Op.get(new_op), b.value.args))
        bindings.append(b)
    return relax.DataflowBlock(bindings)


def test_function_form_rewrites_every_dataflow_block_of_every_function():
    seen = []

    @relax.transform.dataflowblock_pass(opt_level=1, name="ReluToSilu")
    def relu_to_silu(block, mod, ctx):
        seen.append(len(block.bindings))
        return _replace_op(block, RELU, "relax.nn.silu")

    assert isinstance(relu_to_silu, relax.transform.DataflowBlockPass)
    assert relu_to_silu.info.name == "ReluToSilu" and relu_to_silu.info.opt_level == 1
    after = relu_to_silu(Before)
    assert sorted(seen) == [1, 2, 2]
    assert relax.analysis.well_formed(after)
    assert_structural_equal(after, Expected)


def test_class_form_takes_options_and_unchanged_blocks_keep_the_functions():
    @relax.transform.dataflowblock_pass(opt_level=0)
    class ReplaceOp:
        """Replace calls of one operator by another."""

        def __init__(self, old, new):
            self.old, self.new = relax.Op.get(old), new

        def transform_dataflowblock(self, block, mod, ctx):
            if not any(isinstance(b.value, relax.Call) and b.value.op is self.old for b in block.bindings):
                return block
            return _replace_op(block, self.old, self.new)

    p = ReplaceOp("relax.nn.relu", "relax.nn.silu")
    assert p.info.name == "ReplaceOp" and p.new == "relax.nn.silu"
    assert_structural_equal(p(Before), Expected)
    unchanged = ReplaceOp("relax.nn.gelu", "relax.nn.silu")(Before)
    assert unchanged["main"] is Before["main"] and unchanged["other"] is Before["other"]


def test_struct_info_changes_propagate_to_later_bindings():
    @relax.transform.dataflowblock_pass
    def sum_instead(block, mod, ctx):
        return _replace_op(block, RELU, "relax.sum")

    after = sum_instead(Before)
    assert relax.analysis.well_formed(after)
    assert repr(after["other"].body.body.struct_info) == 'R.Tensor((), dtype="float32")'


def test_sequential_skips_a_block_pass_above_the_opt_level():
    @relax.transform.dataflowblock_pass(opt_level=3, name="Late")
    def late(block, mod, ctx):
        return _replace_op(block, RELU, "relax.nn.silu")

    with PassContext(opt_level=2):
        assert Sequential([late])(Before)["main"] is Before["main"]
    with PassContext(opt_level=3):
        assert_structural_equal(Sequential([late])(Before), Expected)


def test_removing_an_output_var_or_returning_something_else_is_an_error():
    @relax.transform.dataflowblock_pass(name="DropAll")
    def drop_all(block, mod, ctx):
        return relax.DataflowBlock([])

    with pytest.raises(GraphcError, match="DropAll removed the block's output var"):
        drop_all(Before)

    @relax.transform.dataflowblock_pass(name="NotABlock")
    def not_a_block(block, mod, ctx):
        return list(block.bindings)

    with pytest.raises(GraphcError, match="NotABlock must return a DataflowBlock, got list"):
        not_a_block(Before)


def test_relax_function_pass_sees_only_relax_functions():
    mod = relax.transform.LegalizeOps()(Before)
    seen = []

    @relax.transform.function_pass(opt_level=0, name="Names")
    def names(func, mod, ctx):
        seen.append(type(func).__name__)
        return func.with_attr("seen", True)

    after = names(mod)
    assert set(seen) == {"Function"} and len(seen) == 2
    assert all(after[n].attrs["seen"] for n in ("main", "other"))
    assert after["relu"] is mod["relu"]  # PrimFuncs untouched
