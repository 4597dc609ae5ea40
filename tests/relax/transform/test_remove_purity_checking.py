"""RemovePurityChecking: pure functions get relax.force_pure; impure ones are left alone."""

from graphc import relax
from graphc.script import from_source

R = relax

SOURCE = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x

    @R.function(pure=False)
    def effect(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x
'''


def test_remove_purity_checking():
    mod = from_source(SOURCE)
    after = R.transform.RemovePurityChecking()(mod)
    assert after["main"].attrs["relax.force_pure"] is True
    assert after["effect"] is mod["effect"]
    assert R.transform.RemovePurityChecking()(after)["main"] is after["main"]
    assert 'R.func_attr({"relax.force_pure": True})' in after.script()
