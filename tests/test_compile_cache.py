"""The compile cache: what its key depends on, hits and misses, damaged entries, trimming."""

import io

import numpy as np
import pytest

import graphc
from graphc import compile_cache, relax
from graphc.ir import transform
from graphc.progress import CompileProgress


def scale_module(factor: float, name: str = "x"):
    x = relax.Var(name, relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.multiply(x, relax.const(np.full(4, factor, "float32"))))
        bb.emit_func_output(out)
    return bb.get()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory that stores every compile; the suite's own instruments set aside."""
    monkeypatch.setenv("GRAPHC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compile_cache, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(transform, "_GLOBAL_INSTRUMENTS", [])
    for k in compile_cache.STATS:
        monkeypatch.setitem(compile_cache.STATS, k, 0)
    return tmp_path / "exe"


def run(exe, x):
    return relax.VirtualMachine(exe, graphc.cpu())["main"](x).numpy()


def compile_and_store(*args, **kwargs):
    exe = graphc.compile(*args, **kwargs)
    compile_cache.wait()  # the entry is written in the background
    return exe


def test_the_second_compile_loads_the_first_ones_executable(cache):
    x = np.arange(4, dtype="float32")
    first = compile_and_store(scale_module(2.0), "llvm")
    assert compile_cache.STATS == {"hits": 0, "misses": 1, "stores": 1}
    second = compile_and_store(scale_module(2.0, name="y"), "llvm")  # names do not matter
    assert compile_cache.STATS["hits"] == 1 and second is not first
    np.testing.assert_array_equal(run(second, x), 2 * x)
    assert len(list(cache.glob("*.gvm"))) == 1


def test_a_loaded_executable_returns_what_the_model_returns(cache):
    torch = pytest.importorskip("torch")

    class Structured(torch.nn.Module):
        def forward(self, x):
            return {"sum": x + 1, "pair": (x * 2, x - 1)}

    x = torch.arange(3, dtype=torch.float32)
    compile_and_store(Structured(), example_inputs=(x,))
    loaded = compile_and_store(Structured(), example_inputs=(x,))
    assert compile_cache.STATS["hits"] == 1
    out = loaded(x.numpy())
    assert sorted(out) == ["pair", "sum"] and isinstance(out["pair"], tuple)
    np.testing.assert_array_equal(out["pair"][1].numpy(), x.numpy() - 1)


def test_constants_target_and_options_are_part_of_the_key(cache):
    compile_and_store(scale_module(2.0), "llvm")
    compile_and_store(scale_module(3.0), "llvm")
    compile_and_store(scale_module(2.0), "llvm -opt-level=2")
    with transform.PassContext(opt_level=3):
        compile_and_store(scale_module(2.0), "llvm")
    assert compile_cache.STATS["hits"] == 0 and compile_cache.STATS["stores"] == 4
    x = np.ones(4, "float32")
    np.testing.assert_array_equal(run(compile_and_store(scale_module(3.0), "llvm"), x), 3 * x)
    assert compile_cache.STATS["hits"] == 1


def test_custom_pipelines_instruments_and_cache_off_bypass_the_cache(cache, monkeypatch):
    from graphc.ir.instrument import PassTimingInstrument

    compile_and_store(scale_module(2.0), "llvm", pipeline=relax.get_pipeline("zero"))
    with transform.PassContext(instruments=[PassTimingInstrument()]):
        compile_and_store(scale_module(2.0), "llvm")
    monkeypatch.setenv("GRAPHC_CACHE", "0")
    compile_and_store(scale_module(2.0), "llvm")
    assert compile_cache.STATS == {"hits": 0, "misses": 0, "stores": 0}


def test_a_damaged_entry_is_a_miss_and_is_rewritten(cache):
    compile_and_store(scale_module(2.0), "llvm")
    (entry,) = cache.glob("*.gvm")
    entry.write_bytes(entry.read_bytes()[:100])
    exe = compile_and_store(scale_module(2.0), "llvm")
    assert compile_cache.STATS["misses"] == 2 and compile_cache.STATS["stores"] == 2
    np.testing.assert_array_equal(run(exe, np.ones(4, "float32")), np.full(4, 2, "float32"))
    assert compile_cache.load(entry.stem) is not None


def test_the_cache_keeps_under_its_size_limit(cache, monkeypatch):
    compile_and_store(scale_module(2.0), "llvm")
    size = next(cache.glob("*.gvm")).stat().st_size
    monkeypatch.setenv("GRAPHC_CACHE_MAX_BYTES", str(int(size * 2.5)))
    for factor in (3.0, 4.0, 5.0):
        compile_and_store(scale_module(factor), "llvm")
    assert len(list(cache.glob("*.gvm"))) == 2  # the two most recent


def test_module_digest_follows_structural_equality():
    digest = compile_cache.module_digest
    assert digest(scale_module(2.0)) == digest(scale_module(2.0, "y"))
    assert digest(scale_module(2.0)) != digest(scale_module(2.5))
    big = np.arange(3 << 20, dtype="float32")  # hashed in pieces, on several threads
    changed = big.copy()
    changed[-1] += 1
    assert compile_cache.array_digest(big) == compile_cache.array_digest(big.copy())
    assert compile_cache.array_digest(big) != compile_cache.array_digest(changed)


def test_progress_is_drawn_only_on_a_terminal_or_when_forced():
    quiet = io.StringIO()
    with CompileProgress(stream=quiet, delay=0.0) as progress:
        progress.stage("FuseOps", 0.2)
    assert quiet.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    shown = Terminal()
    with CompileProgress(stream=shown, delay=0.0):
        compile_and_store(scale_module(2.0), "llvm", pipeline=relax.get_pipeline("zero"))
    text = shown.getvalue()
    assert "LegalizeOps" in text and "tir.lower" in text and "done" in text and text.endswith("\n")
