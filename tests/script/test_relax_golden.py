"""Golden text: the IRModule tutorial's printed modules, built with the BlockBuilder and parsed.

The files in `relax_golden/` are the tutorial's outputs verbatim (`tvm.script` renamed to
`graphc.script`).
"""

from pathlib import Path

import pytest

from graphc import relax, te, tir
from graphc.ir.structural import structural_equal
from graphc.script import from_source

GOLDEN = Path(__file__).parent / "relax_golden"
EXACT = ["torch_import.txt", "nn_module_forward.txt", "nn_module_main.txt", "legalized.txt"]


def golden(name: str) -> str:
    return (GOLDEN / name).read_text().rstrip("\n")


def tutorial_mlp(prefix: str = "p_", func_name: str = "main", torch_names: bool = True) -> relax.Function:
    """The tutorial's MLP as the torch importer builds it: lv, lv1, ... then gv."""
    def t(*shape):
        return relax.TensorStructInfo(shape, "float32")

    x = relax.Var("x", t(1, 784))
    w1, b1 = relax.Var(f"{prefix}fc1_weight", t(256, 784)), relax.Var(f"{prefix}fc1_bias", t(256))
    w2, b2 = relax.Var(f"{prefix}fc2_weight", t(10, 256)), relax.Var(f"{prefix}fc2_bias", t(10))
    bb = relax.BlockBuilder()
    out_dtype = "float32" if torch_names else None
    with bb.function(func_name, [x, w1, b1, w2, b2], attrs={"num_input": 1}):
        with bb.dataflow():
            names = (["lv"] * 6) if torch_names else ["permute_dims", "matmul", "add", "relu", "permute_dims",
                                                      "matmul", "add"]
            h = bb.emit(relax.op.permute_dims(w1), names[0])
            h = bb.emit(relax.op.matmul(x, h, out_dtype), names[1])
            h = bb.emit(relax.op.add(h, b1), names[2])
            h = bb.emit(relax.op.nn.relu(h), names[3])
            w = bb.emit(relax.op.permute_dims(w2), names[4])
            h = bb.emit(relax.op.matmul(h, w, out_dtype), names[5])
            h = bb.emit(relax.op.add(h, b2), "lv" if torch_names else names[6])
            gv = bb.emit_output(h, "gv")
        bb.emit_func_output(gv)
    return bb.get()


def test_block_builder_mlp_prints_as_the_tutorial():
    assert tutorial_mlp().script() == golden("torch_import.txt")


def test_nn_module_style_names_print_as_the_tutorial():
    mod = tutorial_mlp(prefix="", func_name="forward", torch_names=False)
    assert mod.script() == golden("nn_module_forward.txt")


def _legalized_by_hand() -> object:
    """LegalizeOps' output for the MLP, built with emit_te (the names the tutorial shows)."""
    def f32(*shape):
        return relax.TensorStructInfo(shape, "float32")

    x = relax.Var("x", f32(1, 784))
    w1, b1 = relax.Var("p_fc1_weight", f32(256, 784)), relax.Var("p_fc1_bias", f32(256))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w1, b1], attrs={"num_input": 1}):
        with bb.dataflow():
            lv = bb.emit_te(lambda a: te.compute((a.shape[1], a.shape[0]), lambda i, j: a[j, i],
                                                 name="T_transpose"), w1, primfunc_name_hint="transpose")
            lv1 = bb.emit_te(lambda a: te.compute(a.shape, lambda i, j: tir.max(a[i, j], tir.const(0.0)),
                                                  name="compute"), lv, primfunc_name_hint="relu")
            gv = bb.emit_output(bb.emit(relax.op.add(lv1, lv1)))
        bb.emit_func_output(gv)
    return bb.get()


def test_call_tir_bindings_print_without_annotation_and_with_cls():
    text = _legalized_by_hand().script()
    main = text[text.index("    @R.function"):]
    assert main.split("\n")[3:6] == [
        "        cls = Module",
        "        with R.dataflow():",
        "            lv = R.call_tir(cls.transpose, (p_fc1_weight,), "
        'out_sinfo=R.Tensor((784, 256), dtype="float32"))',
    ]
    assert text.index("def relu(") < text.index("def main(")  # PrimFuncs first, as TVM prints
    assert text.startswith("# from graphc.script import ir as I\n# from graphc.script import tir as T\n"
                           "# from graphc.script import relax as R\n")


@pytest.mark.parametrize("name", EXACT)
def test_tutorial_module_parses_and_prints_back_verbatim(name):
    text = golden(name)
    mod = from_source(text)
    assert mod.script() == text
    assert structural_equal(from_source(mod.script()), mod)


def test_zero_pipeline_module_relax_part_verbatim():
    """The fused module: its Relax function prints verbatim (the PrimFuncs are the TIR printer's)."""
    text = golden("zero_pipeline.txt")
    mod = from_source(text)
    printed = mod.script()
    start = text.index("    @R.function")
    assert printed[printed.index("    @R.function"):] == text[start:]
    assert structural_equal(from_source(printed), mod)
    assert "lv_1 = R.call_tir(cls.fused_matmul_add_relu" in printed  # the namer's lv_1


def test_parsed_tutorial_equals_block_builder_module():
    assert structural_equal(from_source(golden("torch_import.txt")), tutorial_mlp())


def test_legalized_block_builder_mlp_main_prints_as_the_tutorial():
    """LegalizeOps on the BlockBuilder MLP: the Relax function is the tutorial's, verbatim."""
    mod = relax.transform.LegalizeOps()(tutorial_mlp())
    text, expected = mod.script(), golden("legalized.txt")
    assert text[text.index("    @R.function"):] == expected[expected.index("    @R.function"):]
    parsed = from_source(text)
    assert all(structural_equal(parsed[gv.name_hint], mod[gv]) for gv in mod.get_global_vars())
