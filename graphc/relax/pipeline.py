"""Named pass pipelines: `relax.get_pipeline(name)` returns a ready-made `Sequential`.

"zero" (TVM's `zero_pipeline`) lowers a high-level model to fused tensor programs:
LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR. Every pass accepts any
legal module, so the pipeline may follow or be followed by any of them, and running it
twice is harmless. Extend it by wrapping it: `Sequential([get_pipeline("zero"), MyPass()])`.

>>> from graphc import relax
>>> sorted(relax.pipeline.PIPELINES)
['zero']
>>> relax.get_pipeline("fast")
Traceback (most recent call last):
  ...
ValueError: unknown pipeline 'fast'; available pipelines: zero
"""

from __future__ import annotations

from ..ir.transform import Pass, Sequential
from .transform import AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR, LegalizeOps

__all__ = ["get_pipeline", "zero_pipeline"]


def zero_pipeline(*, enable_warning: bool = False) -> Sequential:
    """Legalize every operator, fold constants and fuse the resulting tensor programs."""
    return Sequential(
        [
            LegalizeOps(enable_warning=enable_warning),
            AnnotateTIROpPattern(),
            FoldConstant(),
            FuseOps(),
            FuseTIR(),
        ],
        opt_level=0,
        name="zero_pipeline",
    )


PIPELINES = {"zero": zero_pipeline}


def get_pipeline(name: str = "zero", **kwargs) -> Pass:
    """The pipeline called `name` (options such as `enable_warning` are passed to its maker)."""
    maker = PIPELINES.get(name)
    if maker is None:
        raise ValueError(f"unknown pipeline {name!r}; available pipelines: {', '.join(sorted(PIPELINES))}")
    return maker(**kwargs)
