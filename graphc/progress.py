"""`CompileProgress`: a one-line progress bar for long compiles, drawn only on a terminal.

`graphc.compile` runs one around its work. It watches the passes go by (a pass instrument)
and, once the compile has run for `delay` seconds, redraws one line on stderr: a bar, the
stage and the elapsed time. Nothing is drawn when stderr is not a terminal, when the compile
ends sooner, or under `GRAPHC_PROGRESS=0`; `GRAPHC_PROGRESS=1` draws on any stream.

>>> import io
>>> out = io.StringIO()
>>> with CompileProgress(stream=out, delay=0.0, force=True) as progress:
...     progress.stage("LegalizeOps")
>>> "LegalizeOps" in out.getvalue() and out.getvalue().endswith("\\n")
True
"""

from __future__ import annotations

import os
import sys
import time

from .ir.instrument import PassInstrument

# Where each stage begins, as a fraction of a typical compile (the bar's position); the
# kernels' TIR lowering counts from 0.40 to 0.55, LLVM (no passes) takes the rest.
_MILESTONES = {
    "LegalizeOps": 0.02, "AnnotateTIROpPattern": 0.12, "FoldConstant": 0.13, "FuseOps": 0.14,
    "FuseTIR": 0.22, "InlinePermuteIntoConsumers": 0.24, "ApplyDefaultSchedule": 0.25,
    "VMLoweringPipeline": 0.32,
}
_LOWER = 0.40  # kernels lowered one at a time (the `progress` callback counts them)
_LLVM = 0.55
_BYTECODE = 0.97
_WIDTH = 24


class CompileProgress(PassInstrument):
    """Draws the progress of the passes run while it is active (a context manager)."""

    def __init__(self, stream=None, delay: float = 1.0, force: bool | None = None, label="graphc.compile",
                 enabled: bool = True):
        self.stream = stream if stream is not None else sys.stderr
        setting = os.environ.get("GRAPHC_PROGRESS", "").strip()
        if force is None:
            force = setting == "1"
        tty = getattr(self.stream, "isatty", lambda: False)()
        self.enabled = enabled and setting != "0" and (force or tty)
        self.delay, self.label = delay, label
        self.start = 0.0
        self.depth = 0
        self.fraction = 0.0
        self.text = ""
        self.phase, self.last_phase = "", False  # the step graphc.compile last reported
        self.drawn = False

    # -- as a context manager ----------------------------------------------------------------
    def __enter__(self) -> CompileProgress:
        from .ir.transform import add_global_instrument

        self.start = time.perf_counter()
        if self.enabled:
            add_global_instrument(self)
        return self

    def __exit__(self, *exc) -> None:
        from .ir.transform import remove_global_instrument

        if not self.enabled:
            return
        remove_global_instrument(self)
        if self.drawn:
            failed = exc[0] is not None
            self.fraction = self.fraction if failed else 1.0
            self.draw("failed" if failed else "done", force=True)
            self.stream.write("\n")
            self.stream.flush()

    # -- the display ---------------------------------------------------------------------------
    def stage(self, text: str, fraction: float | None = None) -> None:
        """Show `text` as the current stage (the bar at `fraction`, else where it is)."""
        if fraction is not None:
            self.fraction = max(self.fraction, min(fraction, 1.0))
        self.text = text
        self.draw(text)

    def draw(self, text: str, force: bool = False) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        if not force and elapsed < self.delay:
            return
        filled = int(self.fraction * _WIDTH)
        bar = "#" * filled + "." * (_WIDTH - filled)
        line = f"\r{self.label} [{bar}] {elapsed:5.1f} s  {text}"
        self.stream.write(line[:100].ljust(80))
        self.stream.flush()
        self.drawn = True

    def __call__(self, message: str, done: int, total: int) -> None:
        """`graphc.compile`'s `progress(message, done, total)` callback: the step its passes belong to."""
        if message.startswith("generating the bytecode"):
            self.phase, self.last_phase = message, True
            self.stage(message, _BYTECODE)
        elif message.startswith(("compiling", "generating machine code")):
            self.phase, self.last_phase = "LLVM: optimizing and emitting machine code", True
            self.stage(self.phase, _LLVM)
        elif message.startswith("lowering kernels") and total:
            self.phase = f"lowering kernels {done}/{total}"
            self.stage(self.phase, _LOWER + (_LLVM - _LOWER) * done / total)
        else:
            self.phase = message
            self.stage(message)

    # -- the pass instrument -------------------------------------------------------------------
    def run_before_pass(self, mod, info) -> None:
        self.depth += 1
        milestone = _MILESTONES.get(info.name)
        if self.last_phase:  # the passes left before LLVM are quick: the phase says what takes time
            self.stage(self.phase, milestone)
        else:
            self.stage(f"{self.phase}: {info.name}" if self.phase else info.name, milestone)

    def run_after_pass(self, mod, info) -> None:
        self.depth -= 1


__all__ = ["CompileProgress"]
