"""EliminateCommonSubexpr: duplicates become aliases of the first binding (Before/Expected)."""

# ruff: noqa: F841 - the @R.function bodies are IR: their unused bindings are the test's point

from graphc import relax
from graphc.ir.structural import assert_structural_equal
from graphc.script import ir as I
from graphc.script import relax as R


def cse(mod, call_only=False):
    after = relax.transform.EliminateCommonSubexpr(call_only)(mod)
    assert relax.analysis.well_formed(after)
    again = relax.transform.EliminateCommonSubexpr(call_only)(after)
    assert all(again[gv] is after[gv] for gv in after.get_global_vars()), "not idempotent"
    return after


def check(before, expected, call_only=False):
    assert_structural_equal(cse(before, call_only), expected)


def test_duplicate_calls_in_a_dataflow_block():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                lv0 = R.add(x, y)
                lv1 = R.add(x, y)
                gv = R.multiply(lv0, lv1)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                lv0 = R.add(x, y)
                lv1 = lv0
                gv = R.multiply(lv0, lv0)
                R.output(gv)
            return gv

    check(Before, Expected)


def test_same_shape_different_vars_are_not_duplicates():
    @I.ir_module
    class Distinct:
        @R.function
        def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
            with R.dataflow():
                a = R.exp(x)
                b = R.exp(y)
                c = R.add(a, b)
                d = R.add(b, a)
                gv = R.multiply(c, d)
                R.output(gv)
            return gv

    assert relax.transform.EliminateCommonSubexpr()(Distinct)["main"] is Distinct["main"]


def test_nested_duplicates_collapse_in_one_pass():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                a = R.exp(x)
                b = R.exp(x)
                c = R.add(a, x)
                d = R.add(b, x)
                gv = R.multiply(c, d)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                a = R.exp(x)
                b = a
                c = R.add(a, x)
                d = c
                gv = R.multiply(c, c)
                R.output(gv)
            return gv

    check(Before, Expected)


def test_call_only_leaves_tuples_and_constants():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            t0 = (x, x)
            t1 = (x, x)
            a = R.exp(x)
            b = R.exp(x)
            return (t0, t1, a, b)

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            t0 = (x, x)
            t1 = (x, x)
            a = R.exp(x)
            b = a
            return (t0, t1, a, a)

    check(Before, Expected, call_only=True)
    after = cse(Before)
    assert after["main"].body.blocks[0].bindings[1].value is after["main"].body.blocks[0].bindings[0].var


def test_impure_calls_are_never_merged():
    @I.ir_module
    class Impure:
        @R.function(pure=False)
        def main(x: R.Tensor((2,), "float32")):
            a = R.call_packed("my.rand", x, sinfo_args=R.Tensor((2,), "float32"))
            b = R.call_packed("my.rand", x, sinfo_args=R.Tensor((2,), "float32"))
            return (a, b)

    assert relax.transform.EliminateCommonSubexpr()(Impure)["main"] is Impure["main"]


def test_dataflow_vars_are_forgotten_after_their_block_and_branches_are_scopes():
    @I.ir_module
    class Before:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
            with R.dataflow():
                lv = R.exp(x)
                gv = R.add(lv, lv)
                R.output(gv)
            y = R.exp(x)
            if c:
                z = R.nn.relu(y)
                r = R.nn.relu(y)
                out = R.add(z, r)
            else:
                out = R.nn.relu(y)
            w = R.nn.relu(y)
            return (gv, out, w)

    @I.ir_module
    class Expected:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
            with R.dataflow():
                lv = R.exp(x)
                gv = R.add(lv, lv)
                R.output(gv)
            y = R.exp(x)
            if c:
                z = R.nn.relu(y)
                r = z
                out = R.add(z, z)
            else:
                out = R.nn.relu(y)
            w = R.nn.relu(y)
            return (gv, out, w)

    check(Before, Expected)


def test_match_casts_to_different_struct_info_are_different():
    @I.ir_module
    class Casts:
        @R.function
        def main(x: R.Tensor(ndim=1, dtype="float32")):
            a = R.match_cast(x, R.Tensor(("m",), "float32"))
            b = R.match_cast(x, R.Tensor(("n",), "float32"))
            return (a, b)

    assert relax.transform.EliminateCommonSubexpr()(Casts)["main"] is Casts["main"]


def test_allocations_with_equal_arguments_stay_two_buffers():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            a = R.builtin.alloc_tensor(R.shape([64]), R.dtype("int32"), R.prim_value(0))
            b = R.builtin.alloc_tensor(R.shape([64]), R.dtype("int32"), R.prim_value(0))
            s1 = R.vm.alloc_storage(R.shape([64]), runtime_device_index=0, dtype="uint8")
            s2 = R.vm.alloc_storage(R.shape([64]), runtime_device_index=0, dtype="uint8")
            c = R.vm.alloc_tensor(s1, offset=0, shape=R.shape([16]), dtype="int32")
            d = R.vm.alloc_tensor(s1, offset=0, shape=R.shape([16]), dtype="int32")
            out = R.add(a, b)
            return out

    check(Before, Before)
