"""Relax passes (`relax.transform`): module-to-module rewrites of Relax functions.

>>> from graphc import relax
>>> relax.transform.LegalizeOps().info.name
'LegalizeOps'
"""

# fmt: off
from .annotate_tir_op_pattern import *  # noqa: F403
from .attach_global_symbol import *  # noqa: F403
from .bind_params import *  # noqa: F403
from .call_tir_rewrite import *  # noqa: F403
from .canonicalize_bindings import *  # noqa: F403
from .convert_to_dataflow import *  # noqa: F403
from .dataflow_block_pass import *  # noqa: F403
from .dead_code_elimination import *  # noqa: F403
from .decompose_ops import *  # noqa: F403
from .eliminate_common_subexpr import *  # noqa: F403
from .fold_constant import *  # noqa: F403
from .fuse_ops import *  # noqa: F403
from .fuse_tir import *  # noqa: F403
from .inline_permute import *  # noqa: F403
from .kill_after_last_use import *  # noqa: F403
from .layout_rewrite import *  # noqa: F403
from .legalize_ops import LegalizeOps
from .lift_transform_params import *  # noqa: F403
from .lower_alloc_tensor import *  # noqa: F403
from .remove_purity_checking import *  # noqa: F403
from .rewrite_dataflow_reshape import *  # noqa: F403
from .static_plan_block_memory import *  # noqa: F403
from .to_non_dataflow import *  # noqa: F403
from .vm_builtin_lower import *  # noqa: F403
from .vm_lowering import *  # noqa: F403
from .vm_shape_lower import *  # noqa: F403

# fmt: on

__all__ = [name for name in dir() if not name.startswith("_")]
