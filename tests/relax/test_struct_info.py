"""Struct info construction, subtyping, erasure, LCA and accessors."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.relax.struct_info import defined_tir_vars, dims_equal, tir_vars_in_struct_info

R = relax


def tensor(shape=None, dtype="float32", ndim=-1):
    return R.TensorStructInfo(shape, dtype, ndim)


def test_tensor_struct_info_fields():
    n = tir.Var("n", "int64")
    s = tensor((n, 4))
    assert s.ndim == 2 and s.dtype == "float32"
    assert isinstance(s.shape, R.ShapeExpr)
    assert s.shape.values[0] is n and s.shape.values[1].dtype == "int64"
    assert repr(s) == 'R.Tensor((n, 4), dtype="float32")'


def test_unknown_dtype_and_rank():
    assert tensor(dtype="").dtype == "void" and tensor(dtype=None).is_unknown_dtype
    s = tensor(ndim=3, dtype="void")
    assert s.shape is None and s.ndim == 3 and repr(s) == "R.Tensor(ndim=3)"
    assert tensor().is_unknown_ndim


def test_tensor_ndim_must_match_shape():
    with pytest.raises(TypeInferenceError, match="ndim=3 but the shape has 2 dims"):
        tensor((1, 2), ndim=3)


def test_other_struct_infos_repr():
    assert repr(R.ShapeStructInfo((1, 2))) == "R.Shape([1, 2])"
    assert repr(R.ShapeStructInfo(ndim=2)) == "R.Shape(ndim=2)"
    assert repr(R.PrimStructInfo("int64")) == 'R.Prim("int64")'
    assert repr(R.TupleStructInfo([tensor((2,)), R.ObjectStructInfo()])) == \
        'R.Tuple(R.Tensor((2,), dtype="float32"), R.Object)'
    assert "R.Callable" in repr(R.FuncStructInfo([tensor((2,))], tensor((2,))))


def test_is_base_of_tensor():
    n = tir.Var("n", "int64")
    static = tensor((3, 4))
    assert R.is_base_of(tensor(ndim=2), static)
    assert R.is_base_of(tensor(dtype="void", ndim=-1), static)
    assert not R.is_base_of(static, tensor(ndim=2))
    assert not R.is_base_of(tensor((3, 4), "float16"), static)
    assert not R.is_base_of(tensor(ndim=3), static)
    assert R.is_base_of(tensor((n, 4)), tensor((n, 4)))
    assert not R.is_base_of(tensor((n, 4)), static)
    assert R.is_base_of(tensor((n * 2,)), tensor((n + n,)))
    assert R.ObjectStructInfo().is_base_of(static)


def test_is_base_of_other_kinds():
    assert R.is_base_of(R.ShapeStructInfo(ndim=2), R.ShapeStructInfo((1, 2)))
    assert not R.is_base_of(R.ShapeStructInfo((1, 3)), R.ShapeStructInfo((1, 2)))
    assert R.is_base_of(R.PrimStructInfo("void"), R.PrimStructInfo("int64"))
    assert not R.is_base_of(R.PrimStructInfo("int32"), R.PrimStructInfo("int64"))
    assert R.is_base_of(R.TupleStructInfo([tensor(ndim=1)]), R.TupleStructInfo([tensor((2,))]))
    assert not R.is_base_of(R.TupleStructInfo([tensor(ndim=1)]), R.TupleStructInfo([]))
    assert not R.is_base_of(tensor((2,)), R.ShapeStructInfo((2,)))
    f = R.FuncStructInfo([tensor(ndim=1)], tensor((2,)))
    assert R.is_base_of(R.FuncStructInfo.opaque_func(), f)
    assert R.is_base_of(R.FuncStructInfo([tensor((2,))], tensor(ndim=1)), f)  # contravariant params
    assert not R.is_base_of(f, R.FuncStructInfo([tensor((2,))], tensor((2,))))
    assert not R.is_base_of(f, R.FuncStructInfo([tensor(ndim=1)], tensor((2,)), purity=False))


def test_erase_to_well_defined():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    s = tensor((n, m + 1))
    assert repr(R.erase_to_well_defined(s)) == 'R.Tensor(dtype="float32", ndim=2)'
    assert R.erase_to_well_defined(s, {n: n, m: m}) is s
    assert repr(R.erase_to_well_defined(s, {n: n, m: tir.IntImm("int64", 3)})) == \
        'R.Tensor((n, 4), dtype="float32")'
    tup = R.TupleStructInfo([s, R.ShapeStructInfo((n,))])
    assert repr(R.erase_to_well_defined(tup, {n: n})) == \
        'R.Tuple(R.Tensor(dtype="float32", ndim=2), R.Shape([n]))'
    assert R.erase_to_well_defined(tensor((2, 3))) is not None


def test_struct_info_lca():
    a, b = tensor((2, 3)), tensor((4, 3))
    assert repr(R.struct_info_lca(a, b)) == 'R.Tensor(dtype="float32", ndim=2)'
    assert R.struct_info_lca(a, tensor(ndim=2)).ndim == 2
    assert repr(R.struct_info_lca(a, tensor((2,), "int32"))) == "R.Tensor()"
    assert isinstance(R.struct_info_lca(a, R.ShapeStructInfo((1,))), R.ObjectStructInfo)


def test_symbolic_var_helpers():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    s = R.TupleStructInfo([tensor((n, m * 2)), R.PrimStructInfo(value=m)])
    assert tir_vars_in_struct_info(s) == [n, m]
    assert defined_tir_vars(s) == [n, m]
    assert defined_tir_vars(tensor((n * 2,))) == []
    assert dims_equal((n * 2,), (n + n,)) and not dims_equal((n,), (m,))


def test_accessors():
    assert R.get_ndim(tensor((1, 2))) == 2 and R.get_ndim(R.ShapeStructInfo(ndim=3)) == 3
    assert R.get_ndim(R.ObjectStructInfo()) == -1
    assert R.get_dtype(tensor((1,), "int8")) == "int8" and R.get_dtype(R.PrimStructInfo("bool")) == "bool"
    assert R.get_dtype(R.ObjectStructInfo()) == "void"


def test_structural_equality_of_struct_info():
    from graphc.ir import structural_equal, structural_hash

    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    assert structural_equal(tensor((n, 2)), tensor((m, 2)))
    assert structural_hash(tensor((n, 2))) == structural_hash(tensor((m, 2)))
    assert not structural_equal(tensor((n, 2)), tensor((n, 3)))
    assert not structural_equal(tensor((2,), "float32"), tensor((2,), "float16"))
