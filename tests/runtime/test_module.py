"""The runtime Module: look-up by name, single-entry calls, sources, timing, save/load."""

import numpy as np
import pytest

import graphc
from graphc import IRModule, tir
from graphc.errors import GraphcError
from graphc.runtime.module import Module, load_module
from graphc.target import Target
from graphc.target.llvm import build_llvm


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHC_CACHE_DIR", str(tmp_path / "cache"))


def _fill(value):
    A = tir.decl_buffer((4,), "int32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    store = tir.BufferStore(A, tir.const(value), (i,))
    body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, store)
    return tir.PrimFunc([a], body, buffer_map={a: A})


def _two_funcs():
    return build_llvm(IRModule({"ones": _fill(1), "twos": _fill(2).with_attr("global_symbol", "twos")}),
                      Target("llvm"))


def test_lookup_by_name_and_contains():
    lib = _two_funcs()
    x = np.zeros(4, "int32")
    lib["twos"](x)
    assert x.tolist() == [2, 2, 2, 2]
    lib.get_function("ones")(x)
    assert x.tolist() == [1, 1, 1, 1]
    assert "ones" in lib and "threes" not in lib
    assert lib["ones"] is lib["ones"]
    with pytest.raises(KeyError, match="ones, twos"):
        lib["threes"]


def test_single_function_module_is_callable():
    lib = build_llvm(IRModule({"only": _fill(7)}), Target("llvm"))
    assert lib.entry_name == "only"
    x = np.zeros(4, "int32")
    lib(x)
    assert x.tolist() == [7] * 4


def test_ambiguous_call_lists_names():
    lib = _two_funcs()
    assert lib.entry_name is None
    with pytest.raises(GraphcError, match="ones, twos"):
        lib(np.zeros(4, "int32"))


def test_kernels_outlive_the_module_object():
    kernel = build_llvm(IRModule({"k": _fill(3)}), Target("llvm"))["k"]
    import gc

    gc.collect()
    x = np.zeros(4, "int32")
    kernel(x)
    assert x.tolist() == [3] * 4


def test_sources():
    lib = _two_funcs()
    assert "define" in lib.get_source("ll")
    asm = lib.get_source("asm")
    assert "ones" in asm and "twos" in asm


def test_time_evaluator():
    lib = build_llvm(IRModule({"main": _fill(1)}), Target("llvm"))
    evaluator = lib.time_evaluator(lib.entry_name, graphc.cpu(), number=3, repeat=2)
    result = evaluator(np.zeros(4, "int32"))
    assert len(result.results) == 2 and result.mean > 0
    assert result.median >= 0 and result.std >= 0


def test_save_and_load_round_trip(tmp_path):
    lib = _two_funcs()
    path = tmp_path / "lib.gmod"
    lib.save(path)
    loaded = load_module(path)
    x = np.zeros(4, "int32")
    loaded["twos"](x)
    assert x.tolist() == [2] * 4
    assert loaded.get_source("ll") == lib.get_source("ll")
    with pytest.raises(GraphcError, match="magic"):
        Module.from_bytes(b"nonsense")


def test_kernel_is_thread_safe():
    from concurrent.futures import ThreadPoolExecutor

    n = tir.Var("n")
    A = tir.decl_buffer((n,), "int64", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    body = tir.For(i, tir.const(0), n, tir.ForKind.SERIAL, tir.BufferStore(A, tir.Cast("int64", i * 2), (i,)))
    kernel = build_llvm(IRModule({"k": tir.PrimFunc([a], body, buffer_map={a: A})}), Target("llvm"))["k"]

    def work(size):
        x = np.zeros(size, "int64")
        for _ in range(50):
            kernel(x)
        return bool((x == np.arange(size) * 2).all())

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, [3, 100, 7, 1000] * 4))
