"""ToNonDataflow: dataflow blocks become binding blocks, dataflow vars become vars."""

from graphc import relax
from graphc.ir import assert_structural_equal
from graphc.script import from_source

R = relax

BEFORE = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), c: R.Prim("bool")) -> R.Tensor(("n", 4), "float32"):
        n = T.int64()
        y = R.add(x, x)
        with R.dataflow():
            lv = R.multiply(y, x)
            lv1 = R.nn.relu(lv)
            gv = R.add(lv1, x)
            R.output(gv)
        if c:
            with R.dataflow():
                lv2 = R.exp(gv)
                z = R.add(lv2, lv2)
                R.output(z)
            r = z
        else:
            r = gv
        return r
'''

EXPECTED = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), c: R.Prim("bool")) -> R.Tensor(("n", 4), "float32"):
        n = T.int64()
        y = R.add(x, x)
        lv = R.multiply(y, x)
        lv1 = R.nn.relu(lv)
        gv = R.add(lv1, x)
        if c:
            lv2 = R.exp(gv)
            z = R.add(lv2, lv2)
            r = z
        else:
            r = gv
        return r
'''


def test_dataflow_blocks_become_binding_blocks():
    after = R.transform.ToNonDataflow()(from_source(BEFORE))
    assert_structural_equal(after, from_source(EXPECTED))
    assert R.analysis.well_formed(after)
    blocks = after["main"].body.blocks
    assert [type(b) for b in blocks] == [R.BindingBlock]
    assert not any(isinstance(b.var, R.DataflowVar) for b in blocks[0].bindings)


def test_idempotent_and_copy_on_write():
    after = R.transform.ToNonDataflow()(from_source(BEFORE))
    again = R.transform.ToNonDataflow()(after)
    assert again["main"] is after["main"]
    expected = from_source(EXPECTED)
    assert R.transform.ToNonDataflow()(expected)["main"] is expected["main"]


def test_printable():
    after = R.transform.ToNonDataflow()(from_source(BEFORE))
    assert "R.dataflow" not in after.script()
    assert_structural_equal(from_source(after.script()), after)
