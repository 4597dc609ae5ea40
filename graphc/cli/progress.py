"""Progress of long steps on stderr: one rewritten status line on a terminal, plain lines elsewhere.

`Progress` is the `progress(message, done, total)` callback `graphc.compile` calls. On a
terminal it redraws one line (`[3.2s] lowering kernels 37/112`); in a log (not a terminal) it
prints each new step once, with its count when it has one, so logs stay short.

>>> import io
>>> log = io.StringIO()
>>> p = Progress(log, tty=False)
>>> p("lowering kernels", 0, 3); p("lowering kernels", 1, 3); p("generating code", 0, 0); p.done("compiled")
>>> print(log.getvalue().strip())
graphc: lowering kernels (3)
graphc: generating code
graphc: compiled
"""

from __future__ import annotations

import sys
import time


class Progress:
    """Report compile steps to `stream` (default stderr); `tty` defaults to `stream.isatty()`."""

    def __init__(self, stream=None, tty: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.start = time.perf_counter()
        self.last = None
        self.width = 0

    def __call__(self, message: str, done: int = 0, total: int = 0) -> None:
        if self.tty:
            count = f" {done}/{total}" if total else ""
            self._draw(f"[{time.perf_counter() - self.start:5.1f}s] {message}{count}")
        elif message != self.last:
            self.stream.write(f"graphc: {message}" + (f" ({total})" if total else "") + "\n")
            self.stream.flush()
        self.last = message

    def _draw(self, line: str) -> None:
        pad = max(self.width - len(line), 0)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self.width = len(line)

    def done(self, message: str) -> None:
        """End the progress display with a final line."""
        if self.tty:
            self._draw("")
            self.stream.write("\r")
        self.stream.write(f"graphc: {message}\n")
        self.stream.flush()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


__all__ = ["Progress"]
