"""Frontends: import models from other frameworks into a Relax IRModule.

`graphc.frontend.torch.from_exported_program` imports a `torch.export.ExportedProgram`;
`detach_params` (defined in `graphc.relax.frontend`) splits the parameters bound into a module
off as separate arrays.
Frontends produce IR only, never executables.

>>> from graphc import frontend
>>> frontend.detach_params
<function detach_params at ...>
"""

from ..relax.frontend.common import detach_params

__all__ = ["detach_params"]
