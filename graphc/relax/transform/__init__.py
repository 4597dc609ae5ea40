"""Relax passes (`relax.transform`): module-to-module rewrites of Relax functions.

>>> from graphc import relax
>>> relax.transform.LegalizeOps().info.name
'LegalizeOps'
"""

from .legalize_ops import LegalizeOps

__all__ = ["LegalizeOps"]
