"""Relax operators: the registry and the call builders (`relax.op.add(a, b)` returns a Call).

Each operator is registered once with its struct-info inference, its legalization (a TE
compute from `graphc.topi`) and its fusion pattern; `relax.transform.LegalizeOps` reads them.

>>> from graphc import relax
>>> relax.op.add
<function add at ...>
>>> relax.op.Op.get("relax.nn.relu").pattern.name
'kElemWise'
"""

from . import builtin, image, image_regions, memory, nn, vm
from .base import call_tir, call_tir_inplace
from .binary import *  # noqa: F403
from .binary import __all__ as _binary_all
from .concat_split import concat, split, stack
from .create import *  # noqa: F403
from .create import __all__ as _create_all
from .data_dependent import non_max_suppression, nonzero, unique
from .datatype import astype, decode_float, encode_float, reinterpret
from .gather_scatter import *  # noqa: F403
from .gather_scatter import __all__ as _gs_all
from .index import slice_window, strided_slice, take
from .layout_transform import layout_transform
from .linear_algebra import einsum, matmul, outer
from .manipulate import broadcast_to, expand_dims, flatten, permute_dims, reshape, squeeze
from .packed import *  # noqa: F403
from .packed import __all__ as _packed_all
from .registry import Op, OpInfo, OpPatternKind, infer_struct_info, list_ops, register_op, set_legalize
from .replicate import flip, repeat, tile
from .scan import *  # noqa: F403
from .scan import __all__ as _scan_all
from .search import where
from .sort import *  # noqa: F403
from .sort import __all__ as _sort_all
from .statistical import *  # noqa: F403
from .statistical import __all__ as _statistical_all
from .unary import *  # noqa: F403
from .unary import __all__ as _unary_all

__all__ = [
    "builtin", "image", "image_regions", "memory", "vm", *_gs_all, *_scan_all, *_sort_all, *_packed_all,
    "Op", "OpInfo", "OpPatternKind", "call_tir", "call_tir_inplace", "infer_struct_info", "list_ops",
    "matmul", "nn", "einsum", "layout_transform",
    "outer",
    "permute_dims", "register_op", "reshape", "set_legalize", "where",
    "astype", "decode_float", "encode_float", "broadcast_to", "concat", "slice_window",
    "expand_dims", "flatten", "flip", "repeat", "split", "squeeze", "stack", "strided_slice", "take", "tile",
    *_binary_all, *_create_all, *_statistical_all, *_unary_all,
]
