"""Parsing `with T.block(...)` and what may appear inside it (axes, reads/writes, init, ...).

When `T.reads` / `T.writes` are left out the regions are computed with
`graphc.tir.analysis.get_block_access_region`, as TVM's parser does.
"""

from __future__ import annotations

from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from .frames import BlockFrame, to_region

_AXIS_TYPES = {"axis.spatial": tir_stmt.IterType.DATA_PAR, "axis.reduce": tir_stmt.IterType.COMM_REDUCE,
               "axis.scan": tir_stmt.IterType.ORDERED, "axis.opaque": tir_stmt.IterType.OPAQUE}
_REMAP_TYPES = {"S": tir_stmt.IterType.DATA_PAR, "R": tir_stmt.IterType.COMM_REDUCE}


class BlockRules:
    """Block-related statement rules, mixed into TIRParser."""

    def block_frame(self, node, what: str) -> BlockFrame:
        frame = self.frames[-1] if self.frames else None
        if not isinstance(frame, BlockFrame):
            raise self.error(node, f"{what} must be directly inside a `with T.block(...)`")
        return frame

    # -- with T.block / T.init --------------------------------------------------------------
    def with_block(self, node, name_hint: str = "", no_realize: bool = False):
        frame = BlockFrame(name_hint, no_realize)
        self.frames.append(frame)
        self.ev.scopes.append({})
        try:
            body = self.parse_body(node.body)
        finally:
            self.ev.scopes.pop()
            self.frames.pop()
        return frame.finish(body)

    def with_init(self, node):
        frame = self.block_frame(node, "T.init()")
        if frame.init is not None:
            raise self.error(node, "a block can have only one T.init()")
        self.frames.append(None)  # T.reads etc. are not allowed directly inside init
        try:
            frame.init = self.scoped_body(node.body)
        finally:
            self.frames.pop()
        return None

    # -- statement calls --------------------------------------------------------------------
    def reads(self, node, *regions):
        frame = self.block_frame(node, "T.reads")
        frame.reads = self._regions(regions)

    def writes(self, node, *regions):
        frame = self.block_frame(node, "T.writes")
        frame.writes = self._regions(regions)

    @staticmethod
    def _regions(regions) -> tuple:
        if len(regions) == 1 and isinstance(regions[0], list | tuple):
            regions = regions[0]
        return tuple(to_region(r) for r in regions)

    def where(self, node, predicate):
        self.block_frame(node, "T.where").predicate = tir_expr.convert(predicate)

    def block_attr(self, node, attrs):
        if not isinstance(attrs, dict):
            raise self.error(node, f"T.block_attr expects a dict, got {type(attrs).__name__}")
        self.block_frame(node, "T.block_attr").annotations.update(attrs)

    # -- axes -------------------------------------------------------------------------------
    def axis(self, kind: str):
        def rule(self, node, name, dom, binding=None, dtype="int32"):
            frame = self.block_frame(node, f"T.{kind}")
            if binding is None and not frame.no_realize:
                raise self.error(node, f"T.{kind}(extent, binding) expects 2 arguments: the extent (or "
                                       "a (begin, end) pair) and the loop expression it binds to")
            value = tir_expr.convert(binding) if binding is not None else None
            dtype = value.dtype if value is not None else dtype
            if isinstance(dom, tuple | list):
                if len(dom) != 2:
                    raise self.error(node, f"T.{kind} domain must be an extent or a (begin, end) pair")
                from .evaluator import range_extent

                lo = tir_expr.convert(dom[0], dtype)
                rng = tir_expr.Range(lo, tir_expr.convert(range_extent(lo, tir_expr.convert(dom[1], dtype))))
            else:
                extent = tir_expr.convert(dom, dtype) if not isinstance(dom, tir_expr.PrimExpr) else dom
                rng = tir_expr.Range(tir_expr.const(0, extent.dtype), extent)
            var = tir_expr.Var(name, dtype)
            frame.iter_vars.append(tir_stmt.IterVar(rng, var, _AXIS_TYPES[kind]))
            if value is not None:
                frame.iter_values.append(value)
            self.ev.bind(name, var)

        return rule

    def axis_remap(self, node, names, kinds, bindings):
        frame = self.block_frame(node, "T.axis.remap")
        if not isinstance(kinds, str) or len(kinds) != len(names) or len(bindings) != len(names):
            raise self.error(node, f'T.axis.remap expects a kind string and a list with one entry per '
                                   f'name ({len(names)} names), e.g. T.axis.remap("SSR", [i, j, k])')
        for name, kind, loop_var in zip(names, kinds, bindings):
            if kind not in _REMAP_TYPES:
                raise self.error(node, f"T.axis.remap kinds are 'S' and 'R', got {kind!r}")
            extent = self.loop_extents.get(id(loop_var))
            if extent is None:
                raise self.error(node, f"T.axis.remap binds loop variables only; {loop_var!r} is not one")
            var = tir_expr.Var(name, loop_var.dtype)
            frame.iter_vars.append(tir_stmt.IterVar(tir_expr.Range(tir_expr.const(0, extent.dtype), extent),
                                                    var,
                                             _REMAP_TYPES[kind]))
            frame.iter_values.append(loop_var)
            self.ev.bind(name, var)
        return None

    def axis_remap_one(self, node, name, kinds, bindings):
        return self.axis_remap(node, [name], kinds, bindings)

    STMT_CALLS = {"reads": reads, "writes": writes, "where": where, "block_attr": block_attr}
    ASSIGN_CALLS = {"axis.remap": axis_remap_one}
    BLOCK_WITH = {"block": with_block, "init": with_init}


for _kind in _AXIS_TYPES:
    BlockRules.ASSIGN_CALLS[_kind] = BlockRules.axis(None, _kind)
