"""Model authoring inside Relax (`relax.frontend.nn`, also `graphc.nn`), TVM's spelling.

Importers of other frameworks' models live in `graphc.frontend`; `detach_params` is
re-exported here because TVM's tutorial calls it as `relax.frontend.detach_params`.
"""

from . import nn


def detach_params(mod):
    """See `graphc.frontend.detach_params`."""
    from ...frontend.common import detach_params as _detach

    return _detach(mod)


__all__ = ["detach_params", "nn"]
