"""FuseOps: group the bindings of dataflow blocks into Primitive functions (TVM's FuseOps).

Each binding of a dataflow block is a node of a graph whose edges go from values to their
users; a node's pattern is its callee PrimFunc's `op_pattern` for `call_tir` (opaque when
absent), the registry pattern for another operator, injective for a `TupleGetItem` and
opaque for anything else. Parameters, constants, values from outside the dataflow block and
the block's outputs are opaque boundaries. On this graph, the post-dominator tree
(`networkx.immediate_dominators` on the reversed graph) says where all paths from a node
meet; TVM's three-phase partitioner (`relax.analysis.graph_partitioner`) then merges a node
into its immediate post-dominator when the paths between them allow it:

- phase 0: an out-elementwise-fusable node (matmul, convolution) takes the elementwise and
  broadcast nodes after it; elementwise and broadcast nodes join injective or reduction
  successors (the sink may already hold an out-elementwise-fusable node);
- phase 1: injective and tuple nodes join injective successors;
- phase 2: injective nodes join tuples that already joined injective successors.

A group may hold at most `relax.FuseOps.max_depth` bindings (PassContext config, default
256); `fuse_opt_level` (the PassContext's opt level when -1) 0 turns fusion off. Every
group of two or more bindings becomes a private Relax function `fused_<callees>` with
`{"Primitive": True}`, whose body is a dataflow block of the member bindings; constants become
its parameters, symbolic variables its parameters cannot define become a trailing
`tir_vars` shape parameter; the caller binds a call to it (a tuple and `TupleGetItem`s when
the group has several outputs). Ordinary binding blocks are never fused. The calls to the
new functions are opaque to a second run, which therefore changes nothing.

>>> from graphc import relax
>>> from graphc.script import from_source
>>> mod = from_source('''
... @I.ir_module
... class Module:
...     @R.function
...     def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
...         with R.dataflow():
...             lv = R.exp(x)
...             gv = R.nn.relu(lv)
...             R.output(gv)
...         return gv
... ''')
>>> mod = relax.transform.LegalizeOps()(mod)
>>> mod = relax.transform.AnnotateTIROpPattern()(mod)
>>> fused = relax.transform.FuseOps()(mod)
>>> [gv.name_hint for gv in fused.get_global_vars()]
['fused_tir_exp_relu', 'main', 'relu', 'tir_exp']
>>> fused["main"].body.blocks[0].bindings[0].value
fused_tir_exp_relu(x)
>>> relax.transform.FuseOps()(fused) is fused
True
"""

from __future__ import annotations

import re

from ...ir.module import GlobalVar
from ...ir.transform import module_pass
from ...tir.expr import Var as TIRVar
from ...tir.function import PrimFunc
from ...tir.functor import substitute
from .. import expr as relax_expr
from ..analysis.graph_partitioner import GraphPartitioner, Group, Node
from ..analysis.vars import free_symbolic_vars, used_vars
from ..block_builder import finish_seq
from ..expr_functor import ExprMutator, ExprVisitor
from ..op.registry import Op, OpPatternKind
from ..struct_info import (
    FuncStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
    defined_tir_vars,
)

__all__ = ["FuseOps"]

K = OpPatternKind
MAX_FUSED_OPS = 256
CALL_TIR = "relax.call_tir"


def is_primitive(func) -> bool:
    """A Relax function made by FuseOps (attribute `Primitive` set to a true value)."""
    return isinstance(func, relax_expr.Function) and bool(func.attrs.get("Primitive"))


def call_tir_args(call: relax_expr.Call) -> tuple:
    """The tensor arguments of a `call_tir` (its second argument, a tuple)."""
    args = call.args[1]
    return args.fields if isinstance(args, relax_expr.Tuple) else (args,)


# --- symbolic variables --------------------------------------------------------------------


def substitute_struct_info(sinfo: StructInfo, vmap: dict) -> StructInfo:
    """`sinfo` with the symbolic vars of `vmap` replaced (the same object when none occurs)."""
    if not vmap or sinfo is None:
        return sinfo
    if isinstance(sinfo, TensorStructInfo):
        values = sinfo.shape_values
        if values is None:
            return sinfo
        new = tuple(substitute(v, vmap) for v in values)
        if all(a is b for a, b in zip(new, values)):
            return sinfo
        return TensorStructInfo(new, sinfo.dtype, sinfo.ndim, sinfo.vdevice)
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is None:
            return sinfo
        new = tuple(substitute(v, vmap) for v in sinfo.values)
        return sinfo if all(a is b for a, b in zip(new, sinfo.values)) else ShapeStructInfo(new)
    if isinstance(sinfo, PrimStructInfo):
        if sinfo.value is None:
            return sinfo
        value = substitute(sinfo.value, vmap)
        return sinfo if value is sinfo.value else PrimStructInfo(sinfo.dtype, value)
    if isinstance(sinfo, TupleStructInfo):
        fields = tuple(substitute_struct_info(f, vmap) for f in sinfo.fields)
        return sinfo if all(a is b for a, b in zip(fields, sinfo.fields)) else TupleStructInfo(fields)
    if isinstance(sinfo, FuncStructInfo):
        params = None if sinfo.params is None else [substitute_struct_info(p, vmap) for p in sinfo.params]
        return FuncStructInfo(params, substitute_struct_info(sinfo.ret, vmap), sinfo.purity)
    return sinfo


class _SymbolicSubstitutor(ExprMutator):
    """Rewrites a function with the symbolic vars of `vmap` replaced everywhere."""

    def __init__(self, vmap: dict):
        super().__init__()
        self.vmap = vmap

    def visit_var_def(self, var):
        new_sinfo = substitute_struct_info(var.struct_info, self.vmap)
        if new_sinfo is var.struct_info:
            return self.var_remap.get(var, var)
        new = type(var)(var.name_hint, new_sinfo)
        self.var_remap[var] = new
        return new

    def visit_ShapeExpr(self, expr):
        values = tuple(substitute(v, self.vmap) for v in expr.values)
        return expr if all(a is b for a, b in zip(values, expr.values)) else relax_expr.ShapeExpr(values)

    def visit_PrimValue(self, expr):
        value = substitute(expr.value, self.vmap)
        return expr if value is expr.value else relax_expr.PrimValue(value)

    def visit_Call(self, call):
        new = super().visit_Call(call)
        sinfo_args = tuple(substitute_struct_info(s, self.vmap) for s in call.sinfo_args)
        if all(a is b for a, b in zip(sinfo_args, call.sinfo_args)):
            return new
        return relax_expr.Call(new.op, new.args, new.attrs, sinfo_args)

    def visit_match_cast(self, binding):
        sinfo = substitute_struct_info(binding.struct_info, self.vmap)
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        self.builder.emit_normalized(relax_expr.MatchCast(var, value, sinfo))

    def rewrite(self, func: relax_expr.Function) -> relax_expr.Function:
        params = [self.visit_var_def(p) for p in func.params]
        body = self.visit_with_new_scope(func.body)
        ret = substitute_struct_info(func.ret_struct_info, self.vmap)
        return relax_expr.Function(params, body, ret, func.is_pure, func.attrs)


def renew_symbolic_vars(func: relax_expr.Function) -> relax_expr.Function:
    """`func` with fresh tir.Vars for the symbolic vars its parameters define (TVM's
    SymbolicVarRenewMutator), so that no two functions share one."""
    vmap = {}
    for param in func.params:
        for var in defined_tir_vars(param.struct_info):
            vmap.setdefault(var, TIRVar(var.name, var.dtype))
    return _SymbolicSubstitutor(vmap).rewrite(func) if vmap else func


# --- the indexed forward graph ------------------------------------------------------------


class _GraphCreator:
    """Builds the graph of every non-primitive Relax function's dataflow blocks."""

    def __init__(self, mod):
        self.mod = mod
        self.node_map: dict = {}
        self.post_dfs_order: list[Node] = []
        self.input_params: set = set()

    def build(self):
        for _, func in self.mod.items():
            if isinstance(func,
                          relax_expr.Function) and not is_primitive(func) and "Codegen" not in func.attrs:
                self.visit_function(func)
        return self

    def visit_function(self, func: relax_expr.Function) -> None:
        for param in func.params:
            node = self.create(param)
            node.extern_ref = True
            self.add(node)
        num_input = func.attrs.get("num_input")
        if num_input is not None:
            self.input_params.update(func.params[int(num_input):])
        self._visit_seq(func.body)

    def _visit_seq(self, body) -> None:
        if not isinstance(body, relax_expr.SeqExpr):
            return
        for block in body.blocks:
            if not isinstance(block, relax_expr.DataflowBlock):
                continue  # ordinary blocks may be impure: never fused
            for binding in block.bindings:
                self.visit_binding(binding)

    def visit_binding(self, binding: relax_expr.Binding) -> None:
        node = self.create(binding.var)
        if isinstance(binding, relax_expr.MatchCast):
            node.pattern = K.kOpaque
        else:
            if not isinstance(binding.var, relax_expr.DataflowVar):
                node.extern_ref = True  # an output of the dataflow block
            value = binding.value
            if isinstance(value, relax_expr.Call):
                self.visit_call(value, node)
            elif isinstance(value, relax_expr.TupleGetItem):
                pattern = K.kOpaque if value.tuple_value in self.input_params else K.kInjective
                node.pattern = pattern
                self.visit_leaf(value.tuple_value, node, pattern)
            else:
                node.pattern = K.kOpaque
                for leaf in _used_leaves(value):
                    self.visit_leaf(leaf, node, K.kOpaque)
        self.add(node)

    def visit_call(self, call: relax_expr.Call, node: Node) -> None:
        args = call.args
        pattern = K.kOpaque
        if isinstance(call.op, Op):
            if call.op.name == CALL_TIR:
                args = call_tir_args(call)
                name = call.args[0].name_hint
                callee = self.mod[name] if name in self.mod else None
                if isinstance(callee, PrimFunc) and callee.attrs.get("op_pattern") is not None:
                    pattern = K(int(callee.attrs["op_pattern"]))
            else:
                pattern = call.op.pattern
        node.pattern = pattern
        for arg in args:
            self.visit_leaf(arg, node, pattern)

    def visit_leaf(self, leaf, node: Node, pattern: OpPatternKind) -> None:
        if isinstance(leaf, relax_expr.Tuple):
            for field in leaf.fields:
                self.visit_leaf(field, node, pattern)
            return
        if not isinstance(leaf, relax_expr.LeafExpr) or isinstance(leaf, relax_expr.ExternFunc):
            return  # GlobalVars, operators
        source = self.node_map.get(leaf)
        if source is None:  # a constant, or a var bound outside the dataflow blocks
            source = self.create(leaf)
            self.add(source)
        source.outputs.append((node, pattern))

    def create(self, key) -> Node:
        node = Node(key)
        self.node_map[key] = node
        return node

    def add(self, node: Node) -> None:
        node.index = len(self.post_dfs_order)
        self.post_dfs_order.append(node)


def _used_leaves(expr) -> list:
    """The Vars and Constants an unsupported binding value uses."""
    out: list = []

    class _Leaves(ExprVisitor):
        def visit_Var(self, var):
            out.append(var)

        def visit_LeafExpr(self, leaf):
            if isinstance(leaf, relax_expr.Constant):
                out.append(leaf)

    _Leaves().visit_expr(expr)
    return out


# --- building the grouped functions --------------------------------------------------------


def _sanitize(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", name)


def _is_inlinable_constant(expr) -> bool:
    """PrimValues and shapes without symbolic vars stay inside the grouped function."""
    if isinstance(expr, relax_expr.Tuple):
        return all(_is_inlinable_constant(f) for f in expr.fields)
    if isinstance(expr, relax_expr.PrimValue):
        return not free_symbolic_vars(expr)
    if isinstance(expr, relax_expr.ShapeExpr):
        return not free_symbolic_vars(expr)
    return False


class _FunctionCreator(ExprMutator):
    """Collects one group's bindings, then builds its Primitive function."""

    def __init__(self, mod):
        super().__init__(mod)
        self.bindings: list[relax_expr.Binding] = []
        self.params: list[relax_expr.Var] = []
        self.arguments: list = []
        self.name_hint = "fused"
        self.function: relax_expr.Function | None = None
        self.output_vars: list[relax_expr.Var] = []
        self._defined: set = set()
        self._n_const = 0
        self._tuple_param_index: dict = {}
        self._partial_tuples: dict = {}  # tuple argument -> indices its TupleGetItems read

    def append_binding(self, binding: relax_expr.Binding) -> None:
        if isinstance(binding, relax_expr.VarBinding):
            value = binding.value
            if isinstance(value, relax_expr.Call):
                if isinstance(value.op, Op) and value.op.name == CALL_TIR:
                    self.name_hint += "_" + value.args[0].name_hint
                    for arg in call_tir_args(value):
                        self._check_def_and_update_param(arg)
                else:
                    if isinstance(value.op, Op):
                        self.name_hint += "_" + _sanitize(value.op.name)
                    elif isinstance(value.op, GlobalVar):
                        self.name_hint += "_" + value.op.name_hint.removeprefix("fused_")
                    for arg in value.args:
                        self._check_def_and_update_param(arg)
                        if isinstance(arg.struct_info_, TupleStructInfo):
                            self._partial_tuples.pop(arg, None)  # used as a whole
            elif isinstance(value, relax_expr.TupleGetItem):
                self._check_def_and_update_param(value.tuple_value)
                if value.tuple_value in self._partial_tuples:
                    self._partial_tuples[value.tuple_value].append(value.index)
            self._defined.add(binding.var)
            if not isinstance(binding.var, relax_expr.DataflowVar):
                self.append_output(binding.var)
        self.bindings.append(binding)

    def append_output(self, var: relax_expr.Var) -> int:
        for i, out in enumerate(self.output_vars):
            if out is var:
                return i
        self.output_vars.append(var)
        return len(self.output_vars) - 1

    def _check_def_and_update_param(self, expr) -> None:
        if any(expr is a for a in self.arguments):
            return
        if isinstance(expr, relax_expr.Var) and expr in self._defined:
            return
        leaf_kinds = (relax_expr.Var, relax_expr.Constant, relax_expr.Tuple, relax_expr.PrimValue,
                      relax_expr.ShapeExpr)
        if not isinstance(expr, leaf_kinds) or _is_inlinable_constant(expr):
            return
        if isinstance(expr, relax_expr.Var):
            name = expr.name_hint
        else:
            name = f"param_{self._n_const}"
            self._n_const += 1
        self.arguments.append(expr)
        self.params.append(relax_expr.Var(name, expr.struct_info))
        if isinstance(expr.struct_info, TupleStructInfo):
            self._partial_tuples[expr] = []
            self._tuple_param_index[expr] = len(self.arguments) - 1

    def visit_expr(self, expr):
        for arg, param in zip(self.arguments, self.params):
            if arg is expr:
                return param
        return super().visit_expr(expr)

    def create_function(self) -> None:
        # Tuple arguments read only through TupleGetItem become one parameter per field read.
        item_params: dict = {}
        for tuple_arg, indices in self._partial_tuples.items():
            if not indices:
                continue
            pos = next(i for i, a in enumerate(self.arguments) if a is tuple_arg)
            param = self.params[pos]
            fields = tuple_arg.struct_info.fields
            new_args = [relax_expr.TupleGetItem(tuple_arg, i) for i in indices]
            new_params = [relax_expr.Var(f"{param.name_hint}_{i}", fields[i]) for i in indices]
            item_params[tuple_arg] = dict(zip(indices, new_params))
            self.arguments[pos:pos + 1] = new_args
            self.params[pos:pos + 1] = new_params

        bb = self.builder
        bb.begin_scope()
        bb.begin_dataflow_block()
        outputs: list = [None] * len(self.output_vars)
        for binding in self.bindings:
            value = binding.value if isinstance(binding, relax_expr.VarBinding) else None
            if isinstance(value, relax_expr.TupleGetItem) and value.tuple_value in item_params:
                param = item_params[value.tuple_value][value.index]
                self.var_remap[binding.var] = param
                index = self._output_index(binding.var)
                if index is not None:
                    outputs[index] = param
                continue
            index = self._output_index(binding.var)
            if index is not None and isinstance(binding, relax_expr.VarBinding):
                new_var = bb.emit_output(self.visit_expr(binding.value))
                self.var_remap[binding.var] = new_var
                outputs[index] = new_var
            else:
                self.visit_binding(binding)
        bb.end_block()
        blocks = bb.end_scope()
        if not outputs:
            self.function = None  # dead code: nothing of the group is used
            return
        body = outputs[0] if len(outputs) == 1 else relax_expr.Tuple(outputs)
        body = finish_seq(None, blocks, body)
        attrs = {"Primitive": True}
        func = relax_expr.Function(self.params, body, None, True, attrs)
        free = free_symbolic_vars(func)
        if free:
            self.params.append(relax_expr.Var("tir_vars", ShapeStructInfo(free)))
            self.arguments.append(relax_expr.ShapeExpr(free))
            func = relax_expr.Function(self.params, body, None, True, attrs)
        self.function = renew_symbolic_vars(func)

    def _output_index(self, var) -> int | None:
        for i, out in enumerate(self.output_vars):
            if out is var:
                return i
        return None


class _OperatorFusor(ExprMutator):
    """Replaces each multi-binding group by a call to its grouped function."""

    def __init__(self, mod, obj2group: dict):
        super().__init__(mod)
        self.mod = mod
        self.obj2group = obj2group
        self.group_deps: dict = {}

    def transform(self):
        changed = False
        for gv, func in self.mod.items():
            if isinstance(func,
                          relax_expr.Function) and not is_primitive(func) and "Codegen" not in func.attrs:
                new = self.visit_expr(func)
                if new is not func:
                    self.builder.update_func(gv, new)
                    changed = True
        return self.builder.get() if changed else self.mod

    def group_of(self, var) -> Group | None:
        group = self.obj2group.get(var)
        return group.find_root() if group is not None else None

    def visit_dataflow_block(self, block: relax_expr.DataflowBlock):
        if any(self.group_of(b.var) is None for b in block.bindings):
            return super().visit_dataflow_block(block)  # not part of the graph (nested function)
        group2func: dict = {}
        for binding in block.bindings:
            group = self.group_of(binding.var)
            if group.num_nodes == 1 and not group.attrs:
                continue
            group2func.setdefault(group, _FunctionCreator(self.mod)).append_binding(binding)
        self._collect_boundary(block.bindings, group2func)
        for creator in group2func.values():
            creator.create_function()

        bb = self.builder
        bb.begin_dataflow_block()
        for binding in self._topo_sort_by_group(block.bindings):
            group = self.group_of(binding.var)
            if group.num_nodes == 1 and not group.attrs:
                self.visit_binding(binding)
                continue
            creator = group2func[group]
            if creator.function is None or creator.bindings[-1] is not binding:
                continue
            gv = bb.add_func(creator.function, creator.name_hint)
            call = relax_expr.Call(gv, [self.visit_expr(arg) for arg in creator.arguments])
            outputs = creator.output_vars
            if len(outputs) == 1:
                emit = bb.emit if isinstance(outputs[0], relax_expr.DataflowVar) else bb.emit_output
                self.var_remap[outputs[0]] = emit(call)
                continue
            result = bb.emit(call)
            for i, var in enumerate(outputs):
                emit = bb.emit if isinstance(var, relax_expr.DataflowVar) else bb.emit_output
                self.var_remap[var] = emit(relax_expr.TupleGetItem(result, i))
        return bb.end_block()

    def _collect_boundary(self, bindings, group2func: dict) -> None:
        """Mark the vars each group hands to another one as that group's outputs. A binding
        using symbolic variables a `match_cast` defines depends on that match_cast's group too
        (not a dataflow edge, but the group must not move before it)."""
        from ..struct_info import defined_tir_vars, tir_vars_in_struct_info

        definer: dict = {}
        for binding in bindings:
            current = self.group_of(binding.var)
            if isinstance(binding, relax_expr.MatchCast):
                for v in defined_tir_vars(binding.struct_info):
                    definer.setdefault(v, current)
            symbolic = tir_vars_in_struct_info(binding.var.struct_info) + free_symbolic_vars(binding.value)
            for v in symbolic:
                producer = definer.get(v)
                if producer is not None and producer is not current:
                    deps = self.group_deps.setdefault(current, [])
                    if producer not in deps:
                        deps.append(producer)
            for used in used_vars(binding.value):
                producer = self.group_of(used)
                if producer is None or producer is current:
                    continue
                deps = self.group_deps.setdefault(current, [])
                if producer not in deps:
                    deps.append(producer)
                if producer in group2func:
                    group2func[producer].append_output(used)

    def _topo_sort_by_group(self, bindings) -> list:
        """Bindings grouped, each group after the groups it uses, in original order otherwise."""
        per_group: dict = {}
        for binding in bindings:
            per_group.setdefault(self.group_of(binding.var), []).append(binding)
        visited: set = set()
        ordered: list = []

        def visit(group):
            if group in visited:
                return
            visited.add(group)
            for dep in self.group_deps.get(group, ()):
                visit(dep)
            ordered.extend(per_group.get(group, ()))

        for group in per_group:
            visit(group)
        return ordered


@module_pass(opt_level=0, name="FuseOps", copy=False)
class FuseOps:
    """Fuse the bindings of dataflow blocks into Primitive Relax functions.

    `fuse_opt_level` -1 uses the PassContext's opt level; at 0 nothing is fused. The largest
    group size comes from the PassContext config `"relax.FuseOps.max_depth"` (default 256).
    """

    def __init__(self, fuse_opt_level: int = -1):
        self.fuse_opt_level = fuse_opt_level

    def transform_module(self, mod, ctx):
        opt_level = ctx.opt_level if self.fuse_opt_level == -1 else self.fuse_opt_level
        max_depth = int(ctx.config.get("relax.FuseOps.max_depth", MAX_FUSED_OPS))
        graph = _GraphCreator(mod).build()
        groups = GraphPartitioner(opt_level, max_depth).partition(graph.post_dfs_order)
        obj2group = {node.ref: groups[node.index] for node in graph.post_dfs_order}
        return _OperatorFusor(mod, obj2group).transform()
