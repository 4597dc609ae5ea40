"""Annotations on blocks and loops: free-form key/value pairs later passes read.

Values are kept as given (ints, floats, strings, PrimExprs, lists of these).
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..stmt import For
from .state import check_exists, find_block_path, find_loop_path, replace_stmts


def _target(func, func_name: str, rv):
    from .trace import BlockRV

    if isinstance(rv, BlockRV):
        path = check_exists(find_block_path(func.body, rv.name), f"block {rv.name!r}", func_name)
        return path[-1].block
    path = check_exists(find_loop_path(func.body, rv.var), f"loop {rv.var.name}", func_name)
    return path[-1]


def annotate(func, func_name: str, rv, key: str, value):
    """Set annotation `key` = `value` on the block or loop `rv`."""
    if not isinstance(key, str):
        raise ScheduleError(f"annotation keys are strings, got {type(key).__name__}")
    node = _target(func, func_name, rv)
    annotations = dict(node.annotations)
    annotations[key] = value
    return func.with_body(replace_stmts(func.body, {node: _with_annotations(node, annotations)}))


def unannotate(func, func_name: str, rv, key: str):
    """Remove annotation `key` from the block or loop `rv`."""
    node = _target(func, func_name, rv)
    if key not in node.annotations:
        what = f"loop {node.loop_var.name}" if isinstance(node, For) else f"block {node.name_hint!r}"
        have = ", ".join(sorted(node.annotations)) or "none"
        raise ScheduleError(f"{what} has no annotation {key!r} (it has: {have})")
    annotations = {k: v for k, v in node.annotations.items() if k != key}
    return func.with_body(replace_stmts(func.body, {node: _with_annotations(node, annotations)}))


def _with_annotations(node, annotations: dict):
    import dataclasses

    return dataclasses.replace(node, annotations=annotations)
