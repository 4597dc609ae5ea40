"""The on-disk object cache: hits skip LLVM, the env var disables it, corrupt entries rebuild."""

import numpy as np

from graphc import tir
from graphc.target import cache


def _func(scale=2.0):
    A = tir.decl_buffer((8,), "float32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    body = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL, tir.BufferStore(A, A[i] * scale, (i,)))
    return tir.PrimFunc([a], body, buffer_map={a: A})


def _run(lib):
    x = np.ones(8, "float32")
    lib["main"](x)
    return x


def test_second_build_hits_and_skips_optimization(build_func, isolated_cache, monkeypatch):
    before = dict(cache.STATS)
    lib1 = build_func(_func())
    assert cache.STATS["misses"] == before["misses"] + 1
    assert list(isolated_cache.rglob("*.gcobj"))

    from graphc.target.llvm import build as build_mod

    def no_opt(*args, **kwargs):
        raise AssertionError("LLVM optimization ran on a cache hit")

    monkeypatch.setattr(build_mod, "optimize", no_opt)
    lib2 = build_func(_func())
    assert cache.STATS["hits"] == before["hits"] + 1
    assert lib2.get_source("ll") == lib1.get_source("ll")
    np.testing.assert_array_equal(_run(lib2), np.full(8, 2.0))


def test_different_code_or_target_misses(build_func):
    build_func(_func(2.0))
    misses = cache.STATS["misses"]
    build_func(_func(3.0))
    build_func(_func(2.0), target="llvm -opt-level=1")
    assert cache.STATS["misses"] == misses + 2


def test_cache_disabled_by_env(build_func, isolated_cache, monkeypatch):
    monkeypatch.setenv("GRAPHC_CACHE", "0")
    before = dict(cache.STATS)
    lib = build_func(_func())
    build_func(_func())
    assert cache.STATS == before
    assert not isolated_cache.exists()
    np.testing.assert_array_equal(_run(lib), np.full(8, 2.0))


def test_corrupted_entry_is_ignored_and_rebuilt(build_func, isolated_cache):
    build_func(_func())
    (entry,) = isolated_cache.rglob("*.gcobj")
    data = bytearray(entry.read_bytes())
    data[-20:] = b"\xff" * 20  # damage the object code
    entry.write_bytes(bytes(data))
    misses, hits = cache.STATS["misses"], cache.STATS["hits"]
    lib = build_func(_func())
    assert (cache.STATS["misses"], cache.STATS["hits"]) == (misses + 1, hits)
    np.testing.assert_array_equal(_run(lib), np.full(8, 2.0))
    entry.write_bytes(b"garbage")
    np.testing.assert_array_equal(_run(build_func(_func())), np.full(8, 2.0))
    assert cache.load(entry.stem) is not None  # rewritten with a good entry


def test_cache_dir_follows_platform_conventions(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "graphc"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "graphc"
