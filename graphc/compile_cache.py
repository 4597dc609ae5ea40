"""The compile cache: `graphc.compile`'s executables on disk, keyed by what determines them.

The key is a SHA-256 over the module's structural digest (its program and every constant's
bytes, names ignored, as `structural_equal` compares), the resolved target, the compile
options, and the compiler itself (graphc's version and the size and modification time of
each of its source files, so an edited compiler never reuses an old result). Compiling the
same model again, in any process, then loads the executable instead of rebuilding it.

Entries live in the object cache's directory (`graphc.target.cache.cache_dir()`, under
`exe/`); `GRAPHC_CACHE=0` turns both off. Only compiles that took at least `MIN_SECONDS`
are stored (on a background thread: the compile returns while its entry is written), and the
directory is kept under `GRAPHC_CACHE_MAX_BYTES` (default 4 GiB) by removing the least
recently used entries. Entries are written atomically (temporary file
and rename) and are read without their checksum: the cache wrote them itself, and a
truncated or otherwise unreadable entry counts as a miss. `STATS` counts hits, misses and
stores.

>>> len(compiler_digest()) == 64
True
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

STATS = {"hits": 0, "misses": 0, "stores": 0}
MIN_SECONDS = 0.5  # cheaper compiles are not worth the disk
_DEFAULT_MAX_BYTES = 4 << 30
_SUFFIX = ".gvm"
_CHUNK = 4 << 20  # arrays are hashed in pieces of this many bytes, on all cores


def cache_directory() -> Path | None:
    """Where executables are cached, or None when caching is off."""
    from .target.cache import cache_dir

    base = cache_dir()
    return None if base is None else base / "exe"


_COMPILER: list[str] = []
_LOCK = threading.Lock()


def compiler_digest() -> str:
    """SHA-256 of graphc's version and of the name, size and modification time of every source
    file of the package (computed once per process; editing any file changes it)."""
    with _LOCK:
        if not _COMPILER:
            import graphc

            root = Path(graphc.__file__).parent
            h = hashlib.sha256(graphc.__version__.encode())
            for path in sorted(root.rglob("*.py")):
                st = path.stat()
                h.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
            _COMPILER.append(h.hexdigest())
    return _COMPILER[0]


_POOL: list[ThreadPoolExecutor] = []


def _pool() -> ThreadPoolExecutor:
    with _LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max(1, min(os.cpu_count() or 1, 8)),
                                            thread_name_prefix="graphc-hash"))
    return _POOL[0]


def _sha(view) -> bytes:
    return hashlib.sha256(view).digest()


def array_digest(array: np.ndarray) -> bytes:
    """The digests of `array`'s bytes in pieces, hashed in parallel (hashlib releases the GIL).

    >>> a = np.arange(10, dtype="float32")
    >>> array_digest(a) == array_digest(a.copy()) != array_digest(a[::-1].copy())
    True
    >>> import ml_dtypes
    >>> len(array_digest(np.zeros((2, 0), ml_dtypes.bfloat16)))
    32
    """
    # bytes through a uint8 view: the buffer protocol knows neither ml_dtypes' bfloat16 nor
    # a cast of an array with a zero-size dimension
    data = memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
    if data.nbytes <= _CHUNK:
        return _sha(data)
    pieces = [data[i:i + _CHUNK] for i in range(0, data.nbytes, _CHUNK)]
    return b"".join(_pool().map(_sha, pieces))


def module_digest(mod) -> str:
    """The structural digest of `mod`, its constants' bytes included (hex)."""
    from .ir.structural import structural_digest

    return structural_digest(mod, array_bytes=array_digest).hex()


def cache_key(mod, target, options: dict | None = None) -> str:
    """The key of compiling `mod` for `target` with `options` (JSON-able keyword arguments)."""
    import llvmlite

    h = hashlib.sha256()
    for part in (compiler_digest(), llvmlite.__version__, str(target),
                 json.dumps(options or {}, sort_keys=True, default=repr), module_digest(mod)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def compile_key(mod, target, pipeline, options: dict) -> str | None:
    """The key of `graphc.compile(mod, target, **options)`, or None when it must not be cached:
    caching is off, a custom `pipeline` runs (its passes are not part of the key), or pass
    instruments are watching (a cache hit would run no pass for them to see)."""
    from .ir.transform import _GLOBAL_INSTRUMENTS, PassContext

    ctx = PassContext.current()
    if cache_directory() is None or pipeline is not None or ctx.instruments or _GLOBAL_INSTRUMENTS:
        return None
    context = {"opt_level": ctx.opt_level, "required": sorted(map(str, ctx.required_pass)),
               "disabled": sorted(map(str, ctx.disabled_pass)),
               "config": sorted(map(repr, ctx.config.items()))}
    resolved = target.resolved() if hasattr(target, "resolved") else str(target)
    return cache_key(mod, resolved, {"options": options, "pass_context": context})


def entry_path(key: str) -> Path | None:
    directory = cache_directory()
    return None if directory is None else directory / f"{key}{_SUFFIX}"


def load(key: str):
    """The cached executable for `key`, or None (a miss, an unreadable entry, caching off)."""
    from .vm.executable import Executable, ExecutableFormatError

    wait()
    path = entry_path(key)
    if path is None:
        return None
    try:
        exe = Executable.load(path, verify=False, map_file=True)
        os.utime(path)  # recently used: evicted last
    except (OSError, ExecutableFormatError):
        STATS["misses"] += 1
        return None
    STATS["hits"] += 1
    return exe


def store(key: str, exe) -> None:
    """Write `exe` under `key` atomically, then trim the cache; failures to write are ignored."""
    _write(entry_path(key), exe, max_bytes())


def _write(path: Path | None, exe, limit: int) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        os.close(fd)
        try:
            exe.export_library(tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        STATS["stores"] += 1
        trim(path.parent, keep=path, limit=limit)
    except OSError:
        pass


_PENDING: list[threading.Thread] = []


def store_in_background(key: str, exe) -> None:
    """`store` on a thread, so the compile returns while the entry is written (hashing and
    writing release the GIL); the interpreter waits for it at exit, `load` and `wait` before."""
    # where and how much, decided now: the environment may change before the thread runs
    thread = threading.Thread(target=_write, args=(entry_path(key), exe, max_bytes()),
                              name="graphc-cache-store")
    with _LOCK:
        _PENDING.append(thread)
    thread.start()


def _after_fork_in_child() -> None:
    """A forked child (`graphc.driver.map_kernels`) has none of its parent's threads: a lock
    another thread held at the fork would never be released there, and the hash pool's work
    would never be done. The child gets its own lock and, when it hashes, its own pool."""
    global _LOCK
    _LOCK = threading.Lock()
    _POOL.clear()
    _PENDING.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def wait() -> None:
    """Wait until the entries being written in the background are written."""
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
    for thread in pending:
        thread.join()


def max_bytes() -> int:
    try:
        return int(os.environ.get("GRAPHC_CACHE_MAX_BYTES", _DEFAULT_MAX_BYTES))
    except ValueError:
        return _DEFAULT_MAX_BYTES


def trim(directory: Path, keep: Path | None = None, limit: int | None = None) -> None:
    """Remove the least recently used entries until the directory is under `limit` bytes
    (default `max_bytes()`)."""
    entries = []
    for path in directory.glob(f"*{_SUFFIX}"):
        try:
            st = path.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, path))
    total, limit = sum(e[1] for e in entries), max_bytes() if limit is None else limit
    for _, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if path == keep:
            continue
        try:
            path.unlink()
            total -= size
        except OSError:
            pass


__all__ = ["MIN_SECONDS", "STATS", "cache_directory", "cache_key", "compile_key", "compiler_digest", "load",
           "module_digest", "store", "store_in_background", "wait"]
