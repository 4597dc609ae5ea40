"""TVM's module path `relax.transform.transform`: the passes of `graphc.relax.transform`.

>>> from graphc.relax.transform.transform import CanonicalizeBindings
>>> CanonicalizeBindings().info.name
'CanonicalizeBindings'
"""

from . import *  # noqa: F403
from . import __all__  # noqa: F401
