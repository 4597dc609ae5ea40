"""The garbage collector during a compile: `fewer_collections`, which `graphc.compile` runs in.

A compile allocates millions of short-lived IR nodes, and CPython's collector, at its default
thresholds, walked every object of the process again and again meanwhile: the model, torch's
modules, the compiler's memo tables (a fifth of a cold DenseNet-121 compile; the first cache
hit after a cold compile in the same process paid a full collection of 400,000 objects).
IR nodes are immutable trees, so a compile makes few reference cycles.
"""

from __future__ import annotations

import contextlib
import threading

_GC_THRESHOLD = (100_000, 50, 1000)
_GC_LOCK = threading.Lock()
_GC_STATE: list = []  # [depth, saved threshold, whether this froze the heap] while compiles run


@contextlib.contextmanager
def fewer_collections():
    """Collect garbage less often while compiling: the objects alive when the outermost compile
    starts are set aside (`gc.freeze`: the collector no longer walks them) and the young
    generation is collected every `_GC_THRESHOLD[0]` allocations, not every 700; full
    collections wait until the compile is over. Everything is put back as it was after it
    (nested and concurrent compiles: when the last one ends). Left alone where the collector
    is off or the program froze objects itself.

    >>> import gc
    >>> before = gc.get_threshold()
    >>> with fewer_collections():
    ...     gc.get_threshold() == _GC_THRESHOLD or not gc.isenabled()
    True
    >>> gc.get_threshold() == before
    True
    """
    import gc

    with _GC_LOCK:
        if not _GC_STATE:
            tune = gc.isenabled()
            freeze = tune and gc.get_freeze_count() == 0
            _GC_STATE[:] = [0, gc.get_threshold(), freeze, tune]
            if freeze:
                gc.freeze()
            if tune:
                gc.set_threshold(*_GC_THRESHOLD)
        _GC_STATE[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_STATE[0] -= 1
            if _GC_STATE[0] == 0:
                _, threshold, freeze, tune = _GC_STATE
                _GC_STATE.clear()
                if tune:
                    gc.set_threshold(*threshold)
                if freeze:
                    gc.unfreeze()


__all__ = ["fewer_collections"]
