"""ir.transform.ApplyPassToFunction, and the TVM names graphc exports at the top level."""

import pytest

import graphc
from graphc import relax
from graphc.errors import GraphcError, ScriptError
from graphc.ir import IRModule
from graphc.ir.transform import ApplyPassToFunction
from graphc.script import ir as I
from graphc.script import relax as R


@I.ir_module
class TwoFunctions:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.add(x, x)
        return y

    @R.function
    def other(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.multiply(x, x)
        return y


def test_only_the_matching_functions_are_transformed():
    after = ApplyPassToFunction(relax.transform.LegalizeOps(), "main")(TwoFunctions)
    assert after["other"] is TwoFunctions["other"]
    assert "add" in after and "multiply" not in after  # the PrimFunc the pass added is kept
    assert after["main"].body.blocks[0].bindings[0].value.op is relax.Op.get("relax.call_tir")
    both = ApplyPassToFunction(relax.transform.LegalizeOps(), "main|other")(TwoFunctions)
    assert "multiply" in both


def test_no_match():
    assert ApplyPassToFunction(relax.transform.LegalizeOps(), "nothing")(TwoFunctions) is TwoFunctions
    with pytest.raises(GraphcError, match="no function name matches 'nothing'"):
        ApplyPassToFunction(relax.transform.LegalizeOps(), "nothing", True)(TwoFunctions)


def test_a_private_function_is_kept_while_the_pass_runs():
    @I.ir_module
    class Private:
        @R.function(private=True)
        def helper(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
            return x

    after = ApplyPassToFunction(relax.transform.DeadCodeElimination(), "helper")(Private)
    assert "helper" in after and "global_symbol" not in after["helper"].attrs


def test_top_level_tvm_names():
    assert graphc.TVMError is GraphcError
    with pytest.raises(graphc.TVMError):
        graphc.script.from_source("@R.function\ndef f(x):\n    return x\n")
    assert issubclass(ScriptError, graphc.TVMError)
    assert graphc.DataType("float32").bits == 32
    assert graphc.ir.transform.ApplyPassToFunction is ApplyPassToFunction
    assert isinstance(IRModule().with_attrs({"a": 1}), IRModule)


def test_tvm_module_paths_of_structural_comparison():
    from graphc.ir import base

    assert base.assert_structural_equal is graphc.ir.assert_structural_equal
    assert base.structural_equal(relax.const(1), relax.const(1))
    with pytest.raises(AssertionError):
        base.assert_structural_equal(relax.const(1), relax.const(2))
