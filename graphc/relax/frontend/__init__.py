"""Importer helpers and model authoring inside Relax: `relax.frontend.nn` (also `graphc.nn`) and
`detach_params`, TVM's spelling. Importers of other frameworks' models live in `graphc.frontend`.
"""

from . import nn
from .common import detach_params

__all__ = ["detach_params", "nn"]
