"""Where GPU kernels are in a lowered PrimFunc, and the threads they launch.

After `LowerThreadBinding`, threads are `AttrStmt`s "thread_extent" on IterVars tagged
`blockIdx.x`..`threadIdx.z`. A *kernel region* is a subtree rooted at a thread scope with
no thread scope above it: everything inside runs on the device, everything outside on the
host. A tag may be launched by several scopes of one region (sibling loops bound to
`threadIdx.x`); the region launches the largest extent.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((256,), "float32")):
...     bx = T.launch_thread("blockIdx.x", 4)
...     tx = T.launch_thread("threadIdx.x", 64)
...     A[bx * 64 + tx] = T.float32(0)
... ''')
>>> [launch_extents(root) for root in kernel_roots(f.body)]
[{'blockIdx.x': 4, 'threadIdx.x': 64}]
"""

from __future__ import annotations

from ..expr import IntImm, max_value_of
from ..stmt import AttrStmt, IterVar

THREAD_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


def is_thread_scope(stmt) -> bool:
    return isinstance(stmt, AttrStmt) and stmt.attr_key == "thread_extent" and isinstance(stmt.node, IterVar)


def _children(stmt) -> tuple:
    from ..schedule.state import children

    return children(stmt)


def kernel_roots(body) -> list:
    """The outermost thread scopes under `body`, in program order."""
    roots, stack = [], [body]
    while stack:
        stmt = stack.pop()
        if is_thread_scope(stmt):
            roots.append(stmt)
            continue
        stack.extend(reversed(_children(stmt)))
    return roots


def thread_scopes(root) -> list:
    """Every thread scope in the region rooted at `root` (itself included), pre-order."""
    found, stack = [], [root]
    while stack:
        stmt = stack.pop()
        if is_thread_scope(stmt):
            found.append(stmt)
        stack.extend(reversed(_children(stmt)))
    return found


def launch_extents(root) -> dict:
    """Tag -> the extent the region rooted at `root` launches (the largest of its scopes)."""
    from ..arith import Analyzer

    extents: dict = {}
    for scope in thread_scopes(root):
        tag, value = scope.node.thread_tag, scope.value
        old = extents.get(tag)
        if old is None or old is value:
            extents[tag] = value
        elif isinstance(old, IntImm) and isinstance(value, IntImm):
            extents[tag] = old if old.value >= value.value else value
        elif not Analyzer().can_prove_equal(old, value):
            extents[tag] = Analyzer().simplify(max_value_of(old, value))
    return extents


def thread_vars(root) -> dict:
    """Var -> tag for every thread index the region rooted at `root` defines."""
    return {scope.node.var: scope.node.thread_tag for scope in thread_scopes(root)}


__all__ = ["THREAD_TAGS", "is_thread_scope", "kernel_roots", "launch_extents", "thread_scopes", "thread_vars"]
