"""Pass instruments: hooks the PassContext calls around every pass (printing, timing, ...).

>>> from graphc import IRModule
>>> from graphc.ir.transform import PassContext, Sequential, module_pass
>>> timing = PassTimingInstrument()
>>> with PassContext(instruments=[timing]):
...     _ = Sequential([module_pass(lambda m, c: m, name="Nop")], name="Pipe")(IRModule())
>>> [name for name, depth, seconds in timing.timings]
['Pipe', 'Nop']
>>> "Nop" in timing.render()
True
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .transform import PassInfo


class PassInstrument:
    """Hooks called around every pass a PassContext runs; override any of them."""

    def enter_pass_ctx(self) -> None:
        """Called when the PassContext holding this instrument is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when that PassContext is exited."""

    def should_run(self, mod, info: PassInfo) -> bool:
        """Return False to skip the pass."""
        return True

    def run_before_pass(self, mod, info: PassInfo) -> None:
        """Called before each pass that runs."""

    def run_after_pass(self, mod, info: PassInfo) -> None:
        """Called after each pass that ran, with its result."""


def pass_instrument(cls):
    """Make `cls` a PassInstrument (methods it lacks get the do-nothing defaults).

    >>> @pass_instrument
    ... class Count:
    ...     def __init__(self):
    ...         self.n = 0
    ...     def run_before_pass(self, mod, info):
    ...         self.n += 1
    >>> isinstance(Count(), PassInstrument)
    True
    """
    if not isinstance(cls, type):
        raise TypeError(f"pass_instrument decorates a class, got {type(cls).__name__}")
    if issubclass(cls, PassInstrument):
        return cls
    return type(cls.__name__, (cls, PassInstrument), {"__module__": cls.__module__, "__doc__": cls.__doc__})


class PrintBeforeAll(PassInstrument):
    """Print the module before every pass."""

    def __init__(self, file=None):
        self.file = file

    def run_before_pass(self, mod, info):
        print(f"Before Running Pass: {info.name}\n{mod.script()}", file=self.file or sys.stdout)


class PrintAfterAll(PassInstrument):
    """Print the module after every pass."""

    def __init__(self, file=None):
        self.file = file

    def run_after_pass(self, mod, info):
        print(f"After Running Pass: {info.name}\n{mod.script()}", file=self.file or sys.stdout)


class PassTimingInstrument(PassInstrument):
    """Time every pass; `render()` gives a table (nested passes indented under their parent).

    `timings` lists `(pass name, nesting depth, seconds)` in the order the passes started.
    """

    def __init__(self):
        self.timings: list[tuple[str, int, float]] = []
        self._open: list[tuple[int, float]] = []

    def enter_pass_ctx(self):
        self.timings, self._open = [], []

    def run_before_pass(self, mod, info):
        self.timings.append((info.name, len(self._open), 0.0))
        self._open.append((len(self.timings) - 1, time.perf_counter()))

    def run_after_pass(self, mod, info):
        index, start = self._open.pop()
        name, depth, _ = self.timings[index]
        self.timings[index] = (name, depth, time.perf_counter() - start)

    def render(self) -> str:
        """One line per pass run: name, milliseconds and share of its parent's time."""
        total = sum(seconds for _, depth, seconds in self.timings if depth == 0)
        lines = [f"Total: {total * 1e3:.3f}ms"]
        parents: list[float] = []
        for name, depth, seconds in self.timings:
            del parents[depth:]
            parent = parents[-1] if parents else total
            share = 100.0 * seconds / parent if parent > 0 else 0.0
            lines.append(f"{'  ' * (depth + 1)}{name}: {seconds * 1e3:.3f}ms [{share:.1f}%]")
            parents.append(seconds)
        return "\n".join(lines)


__all__ = ["PassInstrument", "PassTimingInstrument", "PrintAfterAll", "PrintBeforeAll", "pass_instrument"]
