"""relax.layout_transform: struct info from the index map, padding, legalized numerics, printing."""

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal
from graphc.script import from_source

R = relax


def infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


def test_transpose_and_split_layouts(legalize_run):
    x = np.arange(32 * 8, dtype="float32").reshape(32, 8)
    sinfo = [R.TensorStructInfo((32, 8), "float32")]
    out = legalize_run(lambda a: R.op.layout_transform(a, lambda i, j: (j, i)), sinfo, [x],
                       "te_layout_transform")[0]
    np.testing.assert_array_equal(out, x.T)
    out = legalize_run(lambda a: R.op.layout_transform(a, lambda i, j: (i // 16, j, i % 16)), sinfo, [x])[0]
    np.testing.assert_array_equal(out, x.reshape(2, 16, 8).transpose(0, 2, 1))


def test_padding_fills_the_positions_no_element_maps_to(legalize_run):
    x = np.arange(20 * 3, dtype="float32").reshape(20, 3) + 1
    sinfo = [R.TensorStructInfo((20, 3), "float32")]
    out = legalize_run(lambda a: R.op.layout_transform(a, lambda i, j: (i // 8, j, i % 8), pad_value=-1.0),
                       sinfo, [x])[0]
    ref = np.full((3, 3, 8), -1, "float32")
    for i in range(20):
        ref[i // 8, :, i % 8] = x[i]
    np.testing.assert_array_equal(out, ref)


def test_struct_info_and_errors():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 4), "float32"))
    assert infer(R.op.layout_transform(x, lambda i, j: (j, i))) == 'R.Tensor((4, n), dtype="float32")'
    with pytest.raises(TypeInferenceError, match="expects an index map of 2 indices"):
        infer(R.op.layout_transform(x, lambda i: (i,)))
    y = R.Var("y", R.TensorStructInfo((20, 3), "float32"))
    with pytest.raises(TypeInferenceError, match="not bijective.*pass pad_value"):
        infer(R.op.layout_transform(y, lambda i, j: (i // 8, j, i % 8)))
    with pytest.raises(TypeInferenceError, match="axis_separators .* not supported by graphc"):
        infer(R.op.layout_transform(y, lambda i, j: (j, i), axis_separators=[1]))


def test_script_round_trip():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((20, 8), "float32")):
        y = R.layout_transform(x, index_map=lambda i, j: (i // 16, j, i % 16), pad_value=0.0)
        return y
''')
    text = mod.script()
    assert "index_map=T.index_map(lambda i, j: (i // T.int64(16), j, i % T.int64(16)))" in text
    assert structural_equal(from_source(text), mod)
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), graphc.cpu())
    x = np.arange(160, dtype="float32").reshape(20, 8)
    out = vm["main"](x).numpy()
    assert out.shape == (2, 8, 16) and out[1, 1, 0] == x[16, 1] and out[1, 0, 4] == 0
