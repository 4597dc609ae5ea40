"""The CPU parallel runtime: libgomp's thread pool and the thread count kernels read.

Compiled kernels run `parallel` loops by calling OpenMP's `GOMP_parallel` (libgomp's native
thread pool) on an outlined body; no Python thread is involved per call. Two process-wide
32-bit integers, exported to JIT-compiled code with `llvm.add_symbol`, steer them:

- `graphc_num_threads`: how many threads a parallel region uses. It starts from the
  `GRAPHC_NUM_THREADS` environment variable (else the cores this process may run on) and
  is changed with `set_num_threads`.
- `graphc_parallel_active`: parallel regions running now. A kernel that finds one already
  running (another Python thread called a kernel) runs its loop serially instead of
  spawning a second team of `num_threads` threads, so concurrent callers never
  oversubscribe the cores.

libgomp's threads wait for the next region by spinning, then sleeping on a futex. Its
default spin (`GOMP_SPINCOUNT` 300,000 pauses, milliseconds on AMD's long `pause`) is a
pathology when the cores are oversubscribed: the idle worker and the master waiting at the
region's end barrier burn the time slices the other thread needs (the batch-64 MLP took
24 ms instead of 0.12 ms at load 6 on 2 cores). graphc loads libgomp with a bounded spin,
`SPIN_COUNT` pauses (tens of microseconds), then the futex wait, unless the environment sets
`GOMP_SPINCOUNT` or `OMP_WAIT_POLICY` itself; the variable is set only while libgomp loads
(its constructor reads it once, then). The system's libgomp is loaded by its full path and the
kernels' `GOMP_parallel` / `omp_get_*` are bound to that copy's, so a libgomp of the same
soname loaded before (PyTorch ships one and loads it on import) keeps its own settings and
threads, and graphc's kernels still get the bounded spin. A library loaded after graphc that
names `libgomp.so.1` (PyTorch imported second) shares graphc's copy, as the dynamic loader
matches sonames.

When libgomp cannot be found, `GOMP_parallel` and the `omp_get_*` queries are served by
serial stand-ins (with one warning), so kernels still load and run, on one thread.

Importing `graphc.runtime` registers the symbols, so every Module loads after it.

>>> old = get_num_threads()
>>> set_num_threads(1); get_num_threads()
1
>>> set_num_threads(old)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
import warnings

import llvmlite.binding as llvm

NUM_THREADS_SYMBOL = "graphc_num_threads"
ACTIVE_SYMBOL = "graphc_parallel_active"
ENV_VAR = "GRAPHC_NUM_THREADS"
# libgomp's spin before a waiting thread sleeps on a futex (see the module docstring)
# 3,000: on a quiet machine a shorter spin sleeps between a model's back-to-back kernels (100
# made the batch-64 MLP 0.107 ms vs 0.075 ms, shufflenet 8.4 ms vs 3.5 ms); under load 6 it
# still keeps the batch-64 MLP near 0.3-0.5 ms, where libgomp's default took 10-12 ms
SPIN_COUNT = 3000
_WAIT_VARS = ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")
# what kernels call (graphc.target.llvm.parallel, and omp_get_* in call_extern)
_GOMP_SYMBOLS = ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads")
# libgomp's soname on glibc systems; the dynamic loader finds it without a search
_GOMP_NAMES = ("libgomp.so.1", "/usr/lib/x86_64-linux-gnu/libgomp.so.1", "/lib/x86_64-linux-gnu/libgomp.so.1")

# ctypes owns the storage; the generated code reads and updates it through its address
_num_threads = ctypes.c_int32(1)
_active = ctypes.c_int32(0)
_lock = threading.Lock()
_state = {"gomp": None, "fallback": None}


def default_num_threads() -> int:
    """`GRAPHC_NUM_THREADS` when set to a positive integer, else the usable cores."""
    text = os.environ.get(ENV_VAR, "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value > 0:
            return value
        warnings.warn(f"{ENV_VAR}={text!r} is not a positive integer; using all cores", stacklevel=2)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not Linux
        return max(os.cpu_count() or 1, 1)


def set_num_threads(n: int) -> None:
    """Use `n` threads (at least 1) for the parallel loops of every kernel from now on."""
    n = int(n)
    if n < 1:
        raise ValueError(f"set_num_threads needs a positive thread count, got {n}")
    _num_threads.value = n


def get_num_threads() -> int:
    """The number of threads a parallel loop uses."""
    return int(_num_threads.value)


def gomp_path() -> str | None:
    """Where libgomp was loaded from, or None when kernels run parallel loops serially."""
    return _state["gomp"]


# -- serial stand-ins used only when libgomp is missing ---------------------------------------
_BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PARALLEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32)
_QUERY = ctypes.CFUNCTYPE(ctypes.c_int32)


def _serial_parallel(fn, data, num_threads, flags):
    _BODY(fn)(data)  # one thread: omp_get_thread_num() is 0 of 1, the whole range


def _install_fallback() -> None:
    callbacks = {
        "GOMP_parallel": _PARALLEL(_serial_parallel),
        "omp_get_thread_num": _QUERY(lambda: 0),
        "omp_get_num_threads": _QUERY(lambda: 1),
    }
    for name, cb in callbacks.items():
        llvm.add_symbol(name, ctypes.cast(cb, ctypes.c_void_p).value)
    _state["fallback"] = callbacks  # keep the trampolines alive for the process


def _load_gomp() -> str | None:
    candidates = [p for p in _GOMP_NAMES if os.path.isabs(p) and os.path.exists(p)]
    found = ctypes.util.find_library("gomp")
    candidates += [n for n in (found, "libgomp.so.1") if n and n not in candidates]
    bounded = not any(os.environ.get(v) for v in _WAIT_VARS)
    if bounded:  # read by libgomp's constructor when it loads (a no-op if it is loaded already)
        os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    try:
        for name in candidates:
            try:
                lib = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
                llvm.load_library_permanently(name)
                entries = {s: ctypes.cast(getattr(lib, s), ctypes.c_void_p).value for s in _GOMP_SYMBOLS}
            except (OSError, RuntimeError, AttributeError):
                continue
            for sym, address in entries.items():  # this copy's, whatever else the process loaded
                llvm.add_symbol(sym, address)
            _state["library"] = lib
            return name
        return None
    finally:
        if bounded:
            os.environ.pop("GOMP_SPINCOUNT", None)


def init() -> None:
    """Export the thread state to JIT code and load libgomp (once; called on import)."""
    with _lock:
        if _state.get("ready"):
            return
        _num_threads.value = default_num_threads()
        llvm.add_symbol(NUM_THREADS_SYMBOL, ctypes.addressof(_num_threads))
        llvm.add_symbol(ACTIVE_SYMBOL, ctypes.addressof(_active))
        _state["gomp"] = _load_gomp()
        if _state["gomp"] is None:
            warnings.warn("libgomp (gcc's OpenMP runtime) was not found; parallel loops will run "
                          "serially. Install libgomp1 to use all cores.", RuntimeWarning, stacklevel=2)
            _install_fallback()
        _state["ready"] = True


def active_regions() -> int:
    """Parallel regions running right now (for tests and diagnostics)."""
    return int(_active.value)


init()

__all__ = ["active_regions", "default_num_threads", "get_num_threads", "gomp_path", "set_num_threads"]
