"""Executables: printing, statistics, and the one-file format (round trip and damaged files)."""

import struct

import numpy as np
import pytest

import graphc
from graphc import relax
from graphc.runtime import load_module
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.vm import Executable, ExecutableFormatError, VirtualMachine
from graphc.vm.executable import FORMAT_VERSION, MAGIC


@I.ir_module
class Scale:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        with R.dataflow():
            y = R.multiply(x, R.const(np.arange(4, dtype="float32")))
            z = R.add(y, R.const(1.0))
            R.output(z)
        return z


@pytest.fixture(scope="module")
def exe():
    return graphc.compile(Scale, "llvm")


def expected(x):
    return x * np.arange(4, dtype="float32") + 1


def test_as_text_and_stats(exe):
    text = exe.as_text()
    assert text.startswith("@main(x)")
    assert "call vm.builtin.match_shape(%0" in text and "ret %" in text
    assert "tensor(shape=(4,), dtype=float32" in text  # the constant pool
    stats = exe.stats()
    assert "VM functions: 1 (main)" in stats and "kernels:" in stats and "constants:" in stats


def test_save_load_round_trip(exe, tmp_path):
    path = tmp_path / "scale.gvm"
    exe.export_library(path)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    for loaded in (Executable.load(path), load_module(path)):
        assert isinstance(loaded, Executable)
        assert loaded.as_text() == exe.as_text()
        out = VirtualMachine(loaded, graphc.cpu())["main"](x)
        np.testing.assert_allclose(out.numpy(), expected(x), rtol=1e-6)


def test_runtime_load_module_still_loads_kernel_modules(tmp_path):
    from graphc import te

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    lib = graphc.build(te.create_prim_func([A, B]), target="llvm")
    lib.export_library(tmp_path / "k.so")
    assert isinstance(load_module(tmp_path / "k.so"), graphc.runtime.Module)


def test_loading_does_not_compile(exe, tmp_path, monkeypatch):
    path = tmp_path / "scale.gvm"
    exe.export_library(path)
    import graphc.target.llvm.build as llvm_build

    def forbidden(*args, **kwargs):
        raise AssertionError("loading an executable must not run LLVM's optimizer")

    monkeypatch.setattr(llvm_build, "optimize", forbidden)
    monkeypatch.setattr(llvm_build, "compile_ir", forbidden)
    out = VirtualMachine(Executable.load(path), graphc.cpu())["main"](np.ones((1, 4), "float32"))
    np.testing.assert_allclose(out.numpy(), expected(np.ones((1, 4), "float32")))


def test_truncated_files_raise(exe, tmp_path):
    data = exe.to_bytes()
    for size in (0, 5, 30, len(data) // 2, len(data) - 1):
        path = tmp_path / f"cut{size}.gvm"
        path.write_bytes(data[:size])
        with pytest.raises(ExecutableFormatError, match="truncated|not a graphc executable"):
            Executable.load(path)


def test_corrupted_files_raise(exe, tmp_path):
    data = bytearray(exe.to_bytes())
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "bad.gvm"
    path.write_bytes(bytes(data))
    with pytest.raises(ExecutableFormatError, match="corrupted"):
        Executable.load(path)
    path.write_bytes(b"PK\x03\x04 not an executable at all")
    with pytest.raises(ExecutableFormatError, match="not a graphc executable"):
        Executable.load(path)


def test_wrong_version_raises(exe, tmp_path):
    data = bytearray(exe.to_bytes())
    struct.pack_into("<I", data, len(MAGIC), FORMAT_VERSION + 1)
    path = tmp_path / "future.gvm"
    path.write_bytes(bytes(data))
    with pytest.raises(ExecutableFormatError, match=f"version {FORMAT_VERSION + 1}.*recompile"):
        Executable.load(path)


def test_format_errors_are_value_errors():
    assert issubclass(ExecutableFormatError, ValueError)
    assert issubclass(ExecutableFormatError, graphc.GraphcError)


def test_bad_indices_are_rejected_before_running():
    from graphc.vm.bytecode import Arg, Call, FuncEntry, Ret

    with pytest.raises(ExecutableFormatError, match="register 7 out of range"):
        Executable([FuncEntry("vm", "main", ["x"], 2, [Call(7, 0, ()), Ret(Arg.reg(0))])], [])
    with pytest.raises(ExecutableFormatError, match="const index 3 out of range"):
        Executable([FuncEntry("vm", "main", ["x"], 1, [Ret(Arg.const(3))])], [])


def test_relax_names_resolve_to_the_vm():
    assert relax.Executable is Executable and relax.VirtualMachine is VirtualMachine


def test_a_saved_executable_runs_without_the_compiler(exe, tmp_path):
    import subprocess
    import sys

    path = tmp_path / "scale.gvm"
    exe.export_library(path)
    script = (
        "import sys, numpy as np, graphc.runtime as rt\n"
        "from graphc.vm import VirtualMachine\n"
        f"exe = rt.load_module({str(path)!r})\n"
        "out = VirtualMachine(exe, rt.cpu())['main'](np.ones((2, 4), 'float32'))\n"
        "assert out.numpy().tolist() == [[1.0, 2.0, 3.0, 4.0]] * 2, out\n"
        "compiler = ('graphc.tir', 'graphc.relax', 'graphc.te', 'graphc.topi', 'graphc.frontend',\n"
        "            'graphc.target', 'graphc.script', 'graphc.dlight', 'graphc.driver')\n"
        "loaded = [m for m in sys.modules if m.startswith(compiler)]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
