"""Shared fixtures for the target tests: an isolated object cache and kernel builders."""

import numpy as np
import pytest

from graphc import IRModule, tir
from graphc.target import Target
from graphc.target.llvm import build_llvm


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """Point the object cache at a per-test directory, never the user's real one."""
    monkeypatch.setenv("GRAPHC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GRAPHC_CACHE", raising=False)
    return tmp_path / "cache"


def compile_func(func, name="main", target="llvm"):
    """Build one hand-lowered PrimFunc with the LLVM back end (no lowering passes)."""
    return build_llvm(IRModule({name: func.with_attr("global_symbol", name)}), Target(target))


def elementwise(fn, in_dtypes, out_dtype, n=16):
    """A kernel `out[i] = fn(*ins[i])` over flat buffers of length n, built and returned."""
    handles = [tir.Var(f"h{k}", "handle") for k in range(len(in_dtypes) + 1)]
    bufs = [tir.decl_buffer((n,), dt, f"in{k}") for k, dt in enumerate(in_dtypes)]
    out = tir.decl_buffer((n,), out_dtype, "out")
    i = tir.Var("i", "int32")
    value = tir.convert(fn(*[b[i] for b in bufs]))
    body = tir.For(i, tir.const(0), tir.const(n), tir.ForKind.SERIAL, tir.BufferStore(out, value, (i,)))
    func = tir.PrimFunc(handles, body, buffer_map=dict(zip(handles, [*bufs, out])))
    return compile_func(func)


def run_elementwise(fn, inputs, out_dtype):
    n = inputs[0].shape[0]
    lib = elementwise(fn, [str(a.dtype) for a in inputs], out_dtype, n)
    from graphc.ir.dtype import to_numpy_dtype

    out = np.zeros(n, dtype=to_numpy_dtype(out_dtype))
    lib["main"](*inputs, out)
    return out


@pytest.fixture
def run_ew():
    """`run_ew(fn, inputs, out_dtype)`: build and run an elementwise kernel, return the output."""
    return run_elementwise


@pytest.fixture
def build_func():
    """`build_func(prim_func, name="main", target="llvm")`: compile without lowering passes."""
    return compile_func


# the GPU tests share their programs through tests/target/gpu_programs.py
import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
