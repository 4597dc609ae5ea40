"""AttachGlobalSymbol: every Relax function and PrimFunc named after its GlobalVar."""

from graphc import relax, tir
from graphc.ir import IRModule
from graphc.script import from_source

R = relax

SOURCE = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def exp(a: T.handle, b: T.handle):
        T.evaluate(0)

    @R.function(private=True)
    def helper(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x
'''


def test_attach_global_symbol():
    mod = from_source(SOURCE)
    assert "global_symbol" not in mod["exp"].attrs and "global_symbol" not in mod["helper"].attrs
    after = R.transform.AttachGlobalSymbol()(mod)
    assert {gv.name_hint: f.attrs["global_symbol"] for gv, f in after.items()} == {
        "exp": "exp", "helper": "helper", "main": "main"}
    assert after["main"] is mod["main"]


def test_idempotent():
    after = R.transform.AttachGlobalSymbol()(from_source(SOURCE))
    again = R.transform.AttachGlobalSymbol()(after)
    assert all(again[gv] is after[gv] for gv in after.get_global_vars())


def test_system_lib_prefix():
    mod = IRModule({"add": tir.PrimFunc([], tir.Evaluate(0))}, attrs={"system_lib_prefix": "lib_"})
    assert R.transform.AttachGlobalSymbol()(mod)["add"].attrs["global_symbol"] == "lib_add"
