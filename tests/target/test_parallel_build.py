"""Large modules compile in parts, one per core: here in this process and in worker processes."""

import os
import subprocess
import sys

import numpy as np
import pytest

import graphc
from graphc import te
from graphc.runtime import Module
from graphc.target import cache
from graphc.target.llvm import build as llvm_build
from graphc.target.llvm import object_compiler


def scale_module(count: int):
    funcs = {}
    for k in range(count):
        A = te.placeholder((64,), name="A")
        factor = float(k + 1)
        B = te.compute((64,), lambda i: A[i] * factor, name="B")
        funcs[f"scale{k}"] = te.create_prim_func([A, B]).with_attr("global_symbol", f"scale{k}")
    return graphc.IRModule(funcs)


@pytest.fixture
def in_parts(monkeypatch, isolated_cache):
    monkeypatch.setattr(llvm_build, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setenv("GRAPHC_COMPILE_JOBS", "3")
    return isolated_cache


def check(lib, count):
    x = np.arange(64, dtype="float32")
    for k in range(count):
        y = np.zeros(64, "float32")
        lib[f"scale{k}"](x, y)
        np.testing.assert_array_equal(y, x * (k + 1))


def test_a_module_in_parts_runs_and_saves_as_several_objects(in_parts):
    before = object_compiler.POOL.cpu_seconds
    lib = graphc.build(scale_module(5), "llvm")
    assert len(lib.objects) == 3 and object_compiler.POOL.cpu_seconds > before  # two parts in workers
    check(lib, 5)
    again = Module.from_bytes(lib.to_bytes())
    assert len(again.objects) == 3 and "scale4" in again.get_source("ll")
    check(again, 5)
    assert "scale0" in lib.get_source("asm")


def test_each_part_has_its_own_cache_entry(in_parts):
    graphc.build(scale_module(4), "llvm")
    hits = cache.STATS["hits"]
    check(graphc.build(scale_module(4), "llvm"), 4)
    assert cache.STATS["hits"] == hits + 3


def test_the_worker_reports_llvm_errors():
    worker = object_compiler.POOL.ensure(1)[0]
    object_compiler.POOL.submit(worker, ("define i32 @f() {\n  ret i64 0\n}\n", "", "", "", 3))
    with pytest.raises(RuntimeError, match="f"):
        object_compiler.POOL.result(worker)
    object_compiler.POOL.submit(worker, ("define i32 @g() {\n  ret i32 1\n}\n", "", "", "", 3))
    obj, ll = object_compiler.POOL.result(worker)  # the worker survives a rejected module
    assert obj and "ret i32 1" in ll


def test_parts_no_worker_could_take_are_compiled_here(in_parts, monkeypatch):
    def unreachable(count):
        raise OSError("no worker")

    monkeypatch.setattr(object_compiler.POOL, "ensure", unreachable)
    lib = graphc.build(scale_module(3), "llvm")
    assert len(lib.objects) == 3
    check(lib, 3)


# A module whose kernels have parallel loops (each hands its outlined body to libgomp by
# address) and vector constants, built in two parts: before every object file had its own
# MCJIT engine, the second part's addresses of local functions and constants were resolved
# against the first part's GOT, and a worker thread died with SIGILL. Run in a subprocess,
# where such a crash is a failed test rather than a dead test worker.
_TWO_PARTS = """
import os
import subprocess
import sys

import numpy as np
import graphc
from graphc import te, tir
from graphc.target.llvm import build as llvm_build

llvm_build.PARALLEL_MIN_CHARS = 0
graphc.runtime.set_num_threads(2)
funcs = {}
for k in range(4):
    A = te.placeholder((1024, 512), name="A")
    B = te.compute((1024, 512), lambda i, j: te.exp(A[i, j] * (0.25 * (k + 1))) + float(k) + 0.5 * j,
                   name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    rows, cols = sch.get_loops(sch.get_block("B"))
    sch.parallel(rows)
    _, lanes = sch.split(cols, [None, 16])
    sch.vectorize(lanes)
    funcs[f"k{k}"] = sch.mod["main"].with_attr("global_symbol", f"k{k}")
lib = graphc.build(graphc.IRModule(funcs), "llvm")
assert len(lib.objects) == 2, len(lib.objects)
again = graphc.runtime.Module.from_bytes(lib.to_bytes())
x = np.random.default_rng(0).standard_normal((1024, 512)).astype("float32")
j = np.arange(512, dtype="float32")
for module in (lib, again):
    for k in range(4):
        for _ in range(3):
            y = np.zeros((1024, 512), "float32")
            module[f"k{k}"](x, y)
            np.testing.assert_allclose(y, np.exp(x * (0.25 * (k + 1))) + k + 0.5 * j, rtol=1e-5, atol=1e-5)
print("ok")
"""


def test_kernels_with_parallel_loops_built_in_two_parts_run(tmp_path):
    env = {**os.environ, "GRAPHC_CACHE_DIR": str(tmp_path / "cache"), "GRAPHC_COMPILE_JOBS": "2"}
    done = subprocess.run([sys.executable, "-c", _TWO_PARTS], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr[-2000:])
