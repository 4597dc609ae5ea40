"""Where a schedule error happened: a few lines of the printed function around a block or loop.

`ScheduleError` messages say why a primitive is illegal; `locate` adds where, marking the
line of the block or loop the primitive was given:

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4,), "float32")):
...     for i in range(4):
...         with T.block("A"):
...             vi = T.axis.spatial(4, i)
...             A[vi] = 1.0
... ''')
>>> print(locate(f, "main", block="A").splitlines()[0])
  in function 'main':
"""

from __future__ import annotations

import re


def locate(func, func_name: str, block: str | None = None, loop: str | None = None, context: int = 2) -> str:
    """Lines of `func`'s script around block `block` (or the loop over `loop`), or "" if unprintable."""
    try:
        lines = [line for line in func.script().splitlines() if line.strip()]
    except Exception:  # noqa: BLE001 - rendering is best effort; the error message stands without it
        return ""
    if block is not None:
        pattern = re.compile(rf'T\.block\("{re.escape(block)}"\)')
    elif loop is not None:
        pattern = re.compile(rf"^\s*for\b[^:]*(?<![\w.]){re.escape(loop)}(?!\w)[^:]*\bin\b")
    else:
        return ""
    hit = next((n for n, line in enumerate(lines) if pattern.search(line)), None)
    if hit is None:
        return ""
    lo, hi = max(0, hit - context), min(len(lines), hit + context + 1)
    body = [("--> " if n == hit else "    ") + lines[n] for n in range(lo, hi)]
    return f"  in function {func_name!r}:\n" + "\n".join(body)
