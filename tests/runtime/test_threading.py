"""The CPU parallel runtime: thread count control, concurrent callers, the no-libgomp fallback."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import graphc
import graphc.runtime as rt
from graphc.runtime import thread_pool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def threads():
    old = rt.get_num_threads()
    yield rt.set_num_threads
    rt.set_num_threads(old)


def thread_count_kernel(n=1 << 15):
    """`N[i] = omp_get_num_threads()` for every i of a parallel loop, built with graphc.build."""
    from graphc.script import tir as T

    @T.prim_func
    def record(n_h: T.handle):
        N = T.match_buffer(n_h, (n,), "int32")
        for i in T.parallel(n):
            with T.block("N"):
                vi = T.axis.spatial(n, i)
                N[vi] = T.call_extern("int32", "omp_get_num_threads")

    return graphc.build(record, target="llvm")["record"]


def add_kernel(n):
    from graphc.script import tir as T

    @T.prim_func
    def add(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in T.parallel(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] * 2.0 + B[vi]

    return graphc.build(add, target="llvm")["add"]


def test_set_and_get_num_threads(threads):
    threads(3)
    assert rt.get_num_threads() == 3
    with pytest.raises(ValueError, match="positive thread count"):
        rt.set_num_threads(0)
    assert rt.get_num_threads() == 3


def test_kernels_use_the_set_thread_count(threads):
    if thread_pool.gomp_path() is None:
        pytest.skip("libgomp is not installed")
    record = thread_count_kernel()
    out = np.zeros(1 << 15, "int32")
    for count in (1, 2, 4):
        threads(count)
        record(out)
        assert set(out.tolist()) == {count}


def test_a_running_region_makes_other_callers_serial(threads):
    # what a second Python thread sees while another kernel holds the pool
    threads(4)
    record = thread_count_kernel()
    out = np.zeros(1 << 15, "int32")
    thread_pool._active.value += 1
    try:
        record(out)
    finally:
        thread_pool._active.value -= 1
    assert set(out.tolist()) == {1}
    record(out)
    assert set(out.tolist()) == ({4} if thread_pool.gomp_path() else {1})


def test_concurrent_calls_from_python_threads(threads):
    threads(max(os.cpu_count() or 1, 2))
    n = 1 << 18
    add = add_kernel(n)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(15):
            a, b = rng.random(n, dtype="float32"), rng.random(n, dtype="float32")
            c = np.zeros(n, "float32")
            add(a, b, c)
            if not np.array_equal(c, a * 2 + b):
                errors.append(seed)

    workers = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert thread_pool.active_regions() == 0


def _run(code, env_extra):
    env = {**os.environ, **env_extra}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=120)


def test_environment_variable_sets_the_default():
    code = "import graphc.runtime as rt; print(rt.get_num_threads())"
    assert _run(code, {"GRAPHC_NUM_THREADS": "3"}).stdout.strip() == "3"
    bad = _run(code, {"GRAPHC_NUM_THREADS": "lots"})
    assert bad.stdout.strip() == str(len(os.sched_getaffinity(0)))
    assert "not a positive integer" in bad.stderr
    unset = {k: v for k, v in os.environ.items() if k != "GRAPHC_NUM_THREADS"}
    result = subprocess.run([sys.executable, "-c", code], env=unset, capture_output=True, text=True)
    assert result.stdout.strip() == str(len(os.sched_getaffinity(0)))


def test_without_libgomp_kernels_run_serially_with_a_warning(tmp_path):
    code = """
        import ctypes, ctypes.util, warnings
        import llvmlite.binding as llvm
        real_cdll, real_load = ctypes.CDLL, llvm.load_library_permanently
        def no_gomp(real):
            def load(name, *args, **kwargs):
                if "gomp" in str(name):
                    raise OSError("hidden for the test")
                return real(name, *args, **kwargs)
            return load
        ctypes.CDLL, llvm.load_library_permanently = no_gomp(real_cdll), no_gomp(real_load)
        ctypes.util.find_library = lambda name: None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import graphc.runtime as rt
        ctypes.CDLL = real_cdll
        assert rt.thread_pool.gomp_path() is None
        assert any("libgomp" in str(w.message) for w in caught)
        import numpy as np
        from tests.runtime.test_threading import add_kernel, thread_count_kernel
        n = 1 << 16
        a, b, c = np.ones(n, "float32"), np.arange(n, dtype="float32"), np.zeros(n, "float32")
        add_kernel(n)(a, b, c)
        assert np.array_equal(c, 2 + b)
        out = np.zeros(1 << 15, "int32")
        thread_count_kernel()(out)
        assert set(out.tolist()) == {1}
        print("serial ok")
    """
    result = _run(code, {"GRAPHC_CACHE_DIR": str(tmp_path), "GRAPHC_NUM_THREADS": "4",
                         "PYTHONPATH": ROOT})
    assert "serial ok" in result.stdout, result.stderr


def test_libgomp_loads_with_a_bounded_spin_unless_the_environment_says():
    # what GOMP_SPINCOUNT libgomp's constructor sees when it loads, and what is left after
    code = """
        import ctypes, os
        seen = []
        real_cdll = ctypes.CDLL
        def record(name, *args, **kwargs):
            if "gomp" in str(name):
                seen.append(os.environ.get("GOMP_SPINCOUNT"))
            return real_cdll(name, *args, **kwargs)
        ctypes.CDLL = record
        import graphc.runtime as rt
        ctypes.CDLL = real_cdll
        print(seen[-1] if seen else "not loaded", os.environ.get("GOMP_SPINCOUNT"))
    """
    clean = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}

    def run(extra):
        result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**clean, **extra},
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.split()

    if thread_pool.gomp_path() is None:
        pytest.skip("libgomp is not installed")
    assert run({}) == [str(thread_pool.SPIN_COUNT), "None"]  # bounded while loading, then unset
    assert run({"GOMP_SPINCOUNT": "5000"}) == ["5000", "5000"]  # the user's choice stands
    assert run({"OMP_WAIT_POLICY": "active"}) == ["None", "None"]


def test_kernels_bind_graphcs_libgomp_even_when_another_copy_loaded_first():
    # PyTorch ships a libgomp.so.1 and loads it on import; graphc's kernels must still call
    # the copy graphc loaded (with its bounded spin), not whichever the process found first
    code = """
        import ctypes
        import torch  # noqa: F401 - may load its own libgomp.so.1
        import llvmlite.binding as llvm
        import graphc.runtime as rt
        lib = rt.thread_pool._state["library"]
        for sym in ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads"):
            assert llvm.address_of_symbol(sym) == ctypes.cast(getattr(lib, sym), ctypes.c_void_p).value, sym
        print("bound")
    """
    if thread_pool.gomp_path() is None:
        pytest.skip("libgomp is not installed")
    result = _run(code, {})
    assert "bound" in result.stdout, result.stderr
    n = 1 << 16
    a, b, c = np.ones(n, "float32"), np.arange(n, dtype="float32"), np.zeros(n, "float32")
    add_kernel(n)(a, b, c)
    assert np.array_equal(c, 2 + b)
