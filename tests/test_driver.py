"""graphc.lower and graphc.build: inputs accepted, naming, targets."""

import numpy as np
import pytest

import graphc
from graphc import IRModule, tir
from graphc.errors import TargetError


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHC_CACHE_DIR", str(tmp_path / "cache"))


def _vector_add(n=16):
    A, B, C = (tir.decl_buffer((n,), "float32", nm) for nm in "ABC")
    hs = [tir.Var(nm.lower(), "handle") for nm in "ABC"]
    i = tir.Var("i")
    body = tir.For(i, tir.const(0), tir.const(n), tir.ForKind.SERIAL, tir.BufferStore(C, A[i] + B[i], (i,)))
    return tir.PrimFunc(hs, body, buffer_map=dict(zip(hs, (A, B, C))))


def _check_add(kernel, n=16):
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    c = np.zeros(n, "float32")
    kernel(a, b, c)
    np.testing.assert_allclose(c, a + b)


def test_build_prim_func_default_name():
    lib = graphc.build(_vector_add(), target="llvm")
    assert lib.entry_name == "main"
    _check_add(lib["main"])


def test_build_prim_func_with_name_and_global_symbol():
    assert graphc.build(_vector_add(), name="vadd").entry_name == "vadd"
    f = _vector_add().with_attr("global_symbol", "sym")
    assert graphc.build(f).entry_name == "sym"


def test_build_irmodule_names_functions_by_symbol_or_global_var():
    mod = IRModule({"first": _vector_add(), "second": _vector_add().with_attr("global_symbol", "renamed")})
    lib = graphc.build(mod, target=graphc.Target("llvm"))
    assert sorted(lib.functions) == ["first", "renamed"]
    _check_add(lib["first"])
    _check_add(lib["renamed"])


def test_build_uses_current_target():
    with graphc.Target("llvm -opt-level=1"):
        lib = graphc.build(_vector_add())
    assert "opt-level=1" in lib.target["str"]


def test_lower_returns_lowered_module():
    mod = graphc.lower(_vector_add())
    assert isinstance(mod, IRModule)
    assert isinstance(mod["main"], tir.PrimFunc)


def test_build_lowers_block_form():
    n = 8
    A, B = tir.decl_buffer((n, n), "float32", "A"), tir.decl_buffer((n, n), "float32", "B")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    i, j = tir.Var("i"), tir.Var("j")
    vi, vj = tir.Var("vi"), tir.Var("vj")
    iv = [tir.IterVar(tir.Range.from_min_extent(0, n), v, tir.IterType.DATA_PAR) for v in (vi, vj)]
    block = tir.Block(tuple(iv), (tir.BufferRegion.from_point(A, (vi, vj)),),
                      (tir.BufferRegion.from_point(B, (vi, vj)),), "B",
                      tir.BufferStore(B, A[vi, vj] * 2.0, (vi, vj)))
    loops = tir.For(i, tir.const(0), tir.const(n), tir.ForKind.SERIAL,
                    tir.For(j, tir.const(0), tir.const(n), tir.ForKind.SERIAL,
                            tir.BlockRealize((i, j), tir.const(True), block)))
    root = tir.BlockRealize((), tir.const(True), tir.Block((), (), (), "root", loops))
    lib = graphc.build(tir.PrimFunc([a, b], root, buffer_map={a: A, b: B}))
    x = np.random.rand(n, n).astype("float32")
    y = np.zeros_like(x)
    lib["main"](x, y)
    np.testing.assert_allclose(y, 2 * x)


@pytest.mark.parametrize("target, kind", [("cuda", "cuda"), ("cuda -arch=sm_80", "cuda"), ("nvptx", "nvptx"),
                                          ("opencl", "opencl")])
def test_targets_without_a_backend_raise_clear_errors(target, kind):
    with pytest.raises(TargetError, match=f"no code generator is registered for target kind '{kind}'.*llvm"):
        graphc.build(_vector_add(), target=target)


def test_bad_input_type():
    with pytest.raises(TypeError, match="IRModule, a PrimFunc"):
        graphc.build(42)


def test_build_te_tensors_with_symbolic_shape():
    from graphc import te

    n = tir.Var("n")
    A = te.placeholder((n, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    lib = graphc.build([A, B], name="rowsum")
    assert lib.entry_name == "rowsum"
    for rows in (1, 5):
        a = np.random.rand(rows, 8).astype("float32")
        b = np.zeros(rows, "float32")
        lib["rowsum"](a, b)
        np.testing.assert_allclose(b, a.sum(1), rtol=1e-5)
    lowered = graphc.lower(te.create_prim_func([A, B]))
    assert isinstance(lowered["main"], tir.PrimFunc)
