"""DeadCodeElimination: unused pure bindings and unreachable functions go (Before/Expected)."""

# ruff: noqa: F841 - the @R.function bodies are IR: their unused bindings are the test's point

import pytest

from graphc import relax
from graphc.ir.structural import assert_structural_equal
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


def dce(mod, entry_functions=None):
    after = relax.transform.DeadCodeElimination(entry_functions)(mod)
    assert relax.analysis.well_formed(after)
    again = relax.transform.DeadCodeElimination(entry_functions)(after)
    assert all(again[gv] is after[gv] for gv in after.get_global_vars()), "not idempotent"
    assert set(again.functions) == set(after.functions)
    return after


@I.ir_module
class Unused:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 3), "float32")):
        with R.dataflow():
            lv0 = R.permute_dims(w)
            lv1 = R.matmul(x, w)
            unused0 = R.add(lv0, lv0)
            unused1 = R.exp(unused0)
            gv = R.nn.relu(lv1)
            gv_unused = R.exp(gv)
            R.output(gv, gv_unused)
        return gv


@I.ir_module
class UnusedExpected:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 3), "float32")):
        with R.dataflow():
            lv1 = R.matmul(x, w)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv


def test_unused_bindings_go_transitively_outputs_included():
    assert_structural_equal(dce(Unused), UnusedExpected)


def test_nothing_to_remove_keeps_the_same_functions():
    after = relax.transform.DeadCodeElimination()(UnusedExpected)
    assert after["main"] is UnusedExpected["main"]


@I.ir_module
class Impure:
    @R.function(pure=False)
    def main(x: R.Tensor((2,), "float32")):
        y = R.call_packed("my.print", x, sinfo_args=R.Object)
        z = R.exp(x)
        return x


@I.ir_module
class ImpureExpected:
    @R.function(pure=False)
    def main(x: R.Tensor((2,), "float32")):
        y = R.call_packed("my.print", x, sinfo_args=R.Object)
        return x


def test_impure_calls_are_kept_even_when_unused():
    assert_structural_equal(dce(Impure), ImpureExpected)


@I.ir_module
class Functions:
    @T.prim_func(private=True)
    def used_kernel(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        for i in range(2):
            with T.block("b"):
                vi = T.axis.spatial(2, i)
                B[vi] = A[vi]

    @T.prim_func(private=True)
    def dead_kernel(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        for i in range(2):
            with T.block("b"):
                vi = T.axis.spatial(2, i)
                B[vi] = A[vi]

    @T.prim_func
    def public_kernel(A: T.Buffer((2,), "float32")):
        for i in range(2):
            with T.block("b"):
                vi = T.axis.spatial(2, i)
                A[vi] = T.float32(0)

    @R.function(private=True)
    def helper(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        cls = Functions
        y = R.call_tir(cls.used_kernel, (x,), R.Tensor((2,), dtype="float32"))
        return y

    @R.function(private=True)
    def only_called_by_dead_code(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        cls = Functions
        y = R.call_tir(cls.dead_kernel, (x,), R.Tensor((2,), dtype="float32"))
        return y

    @R.function(private=True)
    def never_called(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        cls = Functions
        with R.dataflow():
            lv = cls.only_called_by_dead_code(x)
            gv = cls.helper(x)
            R.output(gv)
        return gv


def test_functions_unreachable_from_entry_functions_go():
    after = dce(Functions)
    assert sorted(gv.name_hint for gv in after.get_global_vars()) == [
        "helper", "main", "public_kernel", "used_kernel"]
    assert len(after["main"].body.blocks[0].bindings) == 1


def test_entry_functions_are_kept_with_what_they_call():
    after = dce(Functions, ["only_called_by_dead_code", "never_called"])
    assert {"only_called_by_dead_code", "dead_kernel", "never_called"} <= {gv.name_hint for gv in after}


def test_an_unknown_entry_function_is_an_error():
    with pytest.raises(ValueError, match="entry function 'nope' is not in the module"):
        relax.transform.DeadCodeElimination(["nope"])(Functions)


@I.ir_module
class MatchCast:
    @R.function
    def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(ndim=1, dtype="float32")):
        n = T.int64()
        with R.dataflow():
            z = R.match_cast(y, R.Tensor(("m",), "float32"))
            unused = R.exp(z)
            gv = R.add(x, x)
            R.output(gv)
        return gv


def test_match_casts_defining_symbolic_vars_stay():
    after = dce(MatchCast)
    kinds = [type(b).__name__ for b in after["main"].body.blocks[0].bindings]
    assert kinds == ["MatchCast", "VarBinding"]


@I.ir_module
class Nested:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
        if c:
            a = R.exp(x)
            b = R.nn.relu(x)
            r = b
        else:
            r = x
        unused = R.exp(x)
        return r


def test_bindings_inside_branches_go_too():
    after = dce(Nested)
    (block,) = after["main"].body.blocks
    (binding,) = block.bindings
    branch = binding.value.true_branch
    names = [b.var.name_hint for blk in branch.blocks for b in blk.bindings]
    assert "a" not in names and "b" in names


@I.ir_module
class FreedByBranch:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
        y = R.exp(x)
        if c:
            a = R.nn.relu(y)
            r = R.nn.relu(x)
        else:
            r = x
        return r


def test_vars_used_only_by_dead_branch_bindings_go_in_one_run():
    after = dce(FreedByBranch)
    names = [b.var.name_hint for blk in after["main"].body.blocks for b in blk.bindings]
    assert "y" not in names


def test_an_extern_function_is_kept():
    bb = relax.BlockBuilder()
    bb.add_func(relax.extern("extern_func"), "extern_func")
    before = bb.get()
    after = dce(before)
    assert_structural_equal(after, before)
    assert isinstance(after["extern_func"], relax.ExternFunc)
    assert after["extern_func"].global_symbol == "extern_func"
    t = relax.TensorStructInfo((2,), "float32")
    sinfo = relax.FuncStructInfo([t], t)
    assert relax.extern("f", sinfo).struct_info is sinfo
