"""target="c": the C source compiles with the system C compiler and, loaded as a shared library,
computes what the LLVM back end computes (it follows the runtime's calling convention)."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.runtime.kernel import Kernel

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _compile(source: str, tmp_path):
    if CC is None:
        pytest.skip("no C compiler (cc) on this machine")
    src, lib = tmp_path / "kernels.c", tmp_path / "kernels.so"
    src.write_text(source)
    command = [CC, "-std=c99", "-O2", "-Wall", "-shared", "-fPIC", "-o", str(lib), str(src), "-lm"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"cc rejected the generated C:\n{proc.stderr}\n{source}"
    assert "warning" not in proc.stderr, proc.stderr
    return ctypes.CDLL(str(lib))


def _c_kernel(built, shared, name):
    """The C-compiled `name` behind the runtime's argument checks (the same metadata)."""
    address = ctypes.cast(getattr(shared, name), ctypes.c_void_p).value
    return Kernel(built.functions[name], address)


def _programs():
    n = te.var("n")
    A = te.placeholder((n, 12), name="A")
    k = te.reduce_axis((0, 12), "k")
    rowmax = te.compute((n,), lambda i: te.max(A[i, k], axis=k), name="rowmax")
    soft = te.compute((n, 12), lambda i, j: te.exp(A[i, j] - rowmax[i]), name="soft")
    H = te.placeholder((16,), "float16", name="H")
    Bf = te.placeholder((16,), "bfloat16", name="Bf")
    mix = te.compute((16,), lambda i: (H[i] * H[i]).astype("float32") + Bf[i].astype("float32") // 2.0,
                     name="mix")
    X = te.placeholder((16,), "int32", name="X")
    ints = te.compute((16,), lambda i: X[i] // 3 + X[i] % 4 + tir.max(X[i], -2) * 2, name="ints")
    return graphc.IRModule({
        "softmax_num": te.create_prim_func([A, soft]).with_attr("global_symbol", "softmax_num"),
        "mix": te.create_prim_func([H, Bf, mix]).with_attr("global_symbol", "mix"),
        "ints": te.create_prim_func([X, ints]).with_attr("global_symbol", "ints"),
    })


def test_c_source_compiles_and_matches_llvm(tmp_path):
    built = graphc.build(_programs(), target="c")
    source = built.get_source()
    assert source.startswith("// graphc: C99") and "int32_t softmax_num(int64_t* slots)" in source
    shared = _compile(source, tmp_path)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 12)).astype("float32")
    outs = [np.zeros((5, 12), "float32") for _ in range(2)]
    built["softmax_num"](a, outs[0])
    _c_kernel(built, shared, "softmax_num")(a, outs[1])
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)
    np.testing.assert_allclose(outs[0], np.exp(a - a.max(1, keepdims=True)), rtol=1e-6)

    h = rng.standard_normal(16).astype("float16")
    bf = graphc.runtime.tensor(rng.standard_normal(16), dtype="bfloat16")
    outs = [np.zeros(16, "float32") for _ in range(2)]
    built["mix"](h, bf, outs[0])
    _c_kernel(built, shared, "mix")(h, bf, outs[1])
    np.testing.assert_array_equal(outs[1], outs[0])

    i = np.arange(-8, 8, dtype="int32")
    outs = [np.zeros(16, "int32") for _ in range(2)]
    built["ints"](i, outs[0])
    _c_kernel(built, shared, "ints")(i, outs[1])
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_array_equal(outs[0], i // 3 + i % 4 + np.maximum(i, -2) * 2)


def test_c_module_saves_and_loads(tmp_path):
    built = graphc.build(_programs(), target="c")
    path = tmp_path / "lib.graphc"
    built.export_library(path)
    loaded = graphc.runtime.load_module(path)
    assert loaded.get_source() == built.get_source()
    i = np.arange(16, dtype="int32")
    out = np.zeros(16, "int32")
    loaded["ints"](i, out)
    np.testing.assert_array_equal(out, i // 3 + i % 4 + i * 2)


def test_c_rejects_thread_bindings():
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    bx, tx = sch.split(i, [None, 32])
    sch.bind(bx, "blockIdx.x")
    with pytest.raises(graphc.errors.CodegenError, match="thread bindings need a GPU target"):
        graphc.build(sch.mod, target="c")
