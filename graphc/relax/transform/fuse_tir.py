"""FuseTIR: turn every Primitive Relax function into one PrimFunc (TVM's FuseTIR).

A Primitive function (made by FuseOps) is a dataflow block of `call_tir`s. Its PrimFunc of
the same name takes one buffer per tensor parameter (named after the parameter; tuple
parameters give one buffer per field), then one per output, then the scalar parameters
(symbolic variables passed as `tir_vars` shapes or `R.Prim` values). Its body is the callees'
bodies in binding order, each with its parameter buffers replaced by the fused function's
buffers: inputs by the parameters, intermediate results by `T.alloc_buffer`s of the root
block named `<callee output>_intermediate`, results by the output parameters. The callees'
symbolic variables are matched against the shapes at each call; loop and block variables are
fresh for each inlined body, and block names are made unique (`T_add`, `T_add_1`, ...).

Every call of a fused function becomes `R.call_tir(cls.fused_..., (args), out_sinfo=...)`
(with `tir_vars` when it takes symbolic variables), and the PrimFuncs the fused functions
called that nothing calls any more are removed. As in TVM (whose FuseTIR starts with
ExpandTupleArguments and its CanonicalizeBindings), bindings are canonicalized first, so
`lv = fused(...); gv = lv` becomes `gv = R.call_tir(cls.fused, ...)` as the tutorial shows.

A Primitive function FuseTIR cannot express as one PrimFunc (it calls something other than
`call_tir`, has a tensor of unknown shape, a constant, a `match_cast` or shapes its callees'
buffers cannot match, or returns one of its inputs) is left as it is. A module in which
nothing fuses comes back as the same object, so a second run changes nothing.

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
>>> seq = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
...        relax.transform.FuseOps(), relax.transform.FuseTIR()]
>>> for p in seq:
...     mod = p(mod)
>>> [gv.name_hint for gv in mod.get_global_vars()]
['fused_tir_exp_relu', 'main']
>>> mod["main"].body.blocks[0].bindings[0].value
R.call_tir(fused_tir_exp_relu, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
>>> relax.transform.FuseTIR()(mod) is mod
True
"""

from __future__ import annotations

import dataclasses

from ...ir.module import GlobalVar
from ...ir.transform import module_pass
from ...tir.analysis import verify_well_formed
from ...tir.arith import Analyzer
from ...tir.buffer import Buffer, decl_buffer
from ...tir.expr import IntImm, PrimExpr, const
from ...tir.expr import Var as TIRVar
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprMutator, StmtMutator, substitute
from ...tir.stmt import Block, BlockRealize, SeqStmt
from .. import expr as relax_expr
from ..analysis.vars import all_global_vars
from ..expr_functor import ExprMutator
from ..op.base import call_tir
from ..op.registry import Op
from ..struct_info import PrimStructInfo, ShapeStructInfo, TensorStructInfo, TupleStructInfo, tir_vars_in_expr
from .fuse_ops import CALL_TIR, call_tir_args, is_primitive

__all__ = ["FuseTIR"]


class _Unsupported(Exception):
    """The Primitive function cannot become one PrimFunc; it is left as it is."""


# --- symbolic matching ---------------------------------------------------------------------


class _SymbolicMatcher:
    """Binds a callee's symbolic vars to the fused function's expressions, checking the rest."""

    def __init__(self, analyzer: Analyzer):
        self.vmap: dict = {}
        self.analyzer = analyzer

    def match(self, lhs: PrimExpr, rhs: PrimExpr, what: str) -> None:
        if not self._match(lhs, rhs):
            # Inconsistent shapes, or a dimension like `n * 2` that only run time can solve.
            raise _Unsupported(f"{what}: the callee's {lhs} does not match {rhs}")

    def _match(self, lhs, rhs) -> bool:
        if lhs is rhs:
            return True
        if isinstance(lhs, TIRVar):
            bound = self.vmap.get(lhs)
            if bound is None:
                self.vmap[lhs] = rhs
                return True
            return bound is rhs or self.analyzer.can_prove_equal(bound, rhs)
        if isinstance(lhs, IntImm) and isinstance(rhs, IntImm):
            return lhs.value == rhs.value
        if type(lhs) is type(rhs) and dataclasses.is_dataclass(lhs):
            fields = [f.name for f in dataclasses.fields(lhs) if f.name != "dtype"]
            if all(self._match(getattr(lhs, f), getattr(rhs, f)) for f in fields):
                return True
        if not (isinstance(lhs, PrimExpr) and isinstance(rhs, PrimExpr)):
            return False  # a non-expression field (an op name, a tuple) that is not the same object
        return self.analyzer.can_prove_equal(substitute(lhs, self.vmap), rhs)


# --- inlining one callee body --------------------------------------------------------------


def _fresh_buffer(buf: Buffer, shape=None, name: str | None = None) -> Buffer:
    data = TIRVar(buf.data.name if name is None else name, buf.data.dtype, buf.data.type_annotation)
    return dataclasses.replace(buf, data=data, shape=tuple(shape if shape is not None else buf.shape),
                               name=buf.name if name is None else name)


class _Inliner(StmtExprMutator):
    """A callee's body with its buffers and symbolic vars replaced and fresh local definitions."""

    def __init__(self, buffers: dict, var_map: dict):
        self.buffers = dict(buffers)
        self.vars = dict(var_map)
        for src, dst in buffers.items():
            self.vars[src.data] = dst.data

    def visit_Var(self, op):
        return self.vars.get(op, op)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.buffers.get(buffer, buffer)

    def fresh_buffer(self, buf: Buffer) -> Buffer:
        shape = tuple(self.visit_expr(d) for d in buf.shape)
        new = _fresh_buffer(buf, shape)
        changes = {}
        if buf.strides:
            changes["strides"] = tuple(self.visit_expr(s) for s in buf.strides)
        if buf.elem_offset is not None:
            changes["elem_offset"] = self.visit_expr(buf.elem_offset)
        new = dataclasses.replace(new, **changes) if changes else new
        self.buffers[buf] = new
        self.vars[buf.data] = new.data
        return new

    def visit_For(self, op):
        new_var = TIRVar(op.loop_var.name, op.loop_var.dtype)
        self.vars[op.loop_var] = new_var
        return super().visit_For(op).replace(loop_var=new_var)

    def visit_LetStmt(self, op):
        value = self.visit_expr(op.value)
        new_var = TIRVar(op.var.name, op.var.dtype)
        self.vars[op.var] = new_var
        return op.replace(var=new_var, value=value, body=self.visit_stmt(op.body))

    def visit_Block(self, op: Block):
        iter_vars = []
        for iv in op.iter_vars:
            new_var = TIRVar(iv.var.name, iv.var.dtype)
            self.vars[iv.var] = new_var
            iter_vars.append(iv.replace(var=new_var))
        allocs = tuple(self.fresh_buffer(b) for b in op.alloc_buffers)
        matches = tuple(m.replace(buffer=self.fresh_buffer(m.buffer),
                                  source=self.visit_buffer_region(m.source)) for m in op.match_buffers)
        block = super().visit_Block(op.replace(match_buffers=()))
        iter_vars = tuple(iv if iv.dom is None else iv.replace(dom=self.visit_range(iv.dom))
                          for iv in iter_vars)
        return block.replace(iter_vars=iter_vars, alloc_buffers=allocs, match_buffers=matches,
                             reads=_union_regions(block.reads), writes=_union_regions(block.writes))


def _union_regions(regions: tuple) -> tuple:
    """Regions with one entry per buffer (the first); two callee buffers may become one."""
    seen, out = set(), []
    for region in regions:
        if id(region.buffer) not in seen:
            seen.add(id(region.buffer))
            out.append(region)
    return regions if len(out) == len(regions) else tuple(out)


class _BlockNameDeduplicator(StmtMutator):
    """Renames repeated block names `name_1`, `name_2`, ... (children before parents)."""

    def __init__(self):
        self.count: dict[str, int] = {}

    def visit_Block(self, op: Block):
        block = super().visit_Block(op)
        return block.replace(name_hint=self.unique(block.name_hint))

    def unique(self, prefix: str) -> str:
        name = prefix
        while name in self.count:
            self.count[prefix] += 1
            name = f"{prefix}_{self.count[prefix]}"
        self.count[name] = 0
        return name


# --- building the fused PrimFunc -----------------------------------------------------------


def _num_tensors(sinfo) -> int:
    if isinstance(sinfo, TupleStructInfo):
        return sum(_num_tensors(f) for f in sinfo.fields)
    return 1


class _FusedTIRConstructor:
    """Builds the PrimFunc of one Primitive Relax function (raises _Unsupported if it cannot)."""

    def __init__(self, mod, name: str, func: relax_expr.Function):
        self.mod, self.name, self.func = mod, name, func
        self.sym: dict = {}  # the Relax function's symbolic vars -> the PrimFunc's own
        self.expr2buffers: dict = {}
        self.allocs: list[Buffer] = []
        self.bodies: list = []
        self.callees: list[str] = []
        self.analyzer = Analyzer()

    def fused_expr(self, expr: PrimExpr) -> PrimExpr:
        for var in tir_vars_in_expr(expr):
            if var not in self.sym:
                self.sym[var] = TIRVar(var.name, var.dtype)
        return substitute(expr, self.sym)

    def shape_of(self, sinfo) -> tuple:
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None or sinfo.is_unknown_dtype:
            raise _Unsupported(f"{sinfo} is not a tensor of known shape and dtype")
        return tuple(self.fused_expr(v) for v in sinfo.shape_values)

    def build(self) -> PrimFunc:
        func = self.func
        handles, buffer_map, scalars = [], {}, []
        for param in func.params:
            buffers: list = []
            self._collect_param(param.struct_info, param.name_hint, buffers, scalars)
            self.expr2buffers[param] = buffers
            for buf in buffers:
                handle = TIRVar(f"p_{buf.name}", "handle")
                handles.append(handle)
                buffer_map[handle] = buf
        inputs = {id(b) for b in buffer_map.values()}
        body = func.body
        if not isinstance(body, relax_expr.SeqExpr):
            raise _Unsupported("the body is not a sequence of bindings")
        for block in body.blocks:
            for binding in block.bindings:
                if not isinstance(binding, relax_expr.VarBinding):
                    raise _Unsupported("match_cast in a primitive function")
                self.expr2buffers[binding.var] = self.visit_value(binding.value)
        outputs = self.visit_value(body.body)
        if len({id(b) for b in outputs}) != len(outputs) or any(id(b) in inputs for b in outputs):
            raise _Unsupported("an output is an input or appears twice")
        for i, buf in enumerate(outputs):
            handle = TIRVar(f"p_output{i}", "handle")
            handles.append(handle)
            buffer_map[handle] = buf
        out_ids = {id(b) for b in outputs}
        allocs = tuple(b for b in self.allocs if id(b) not in out_ids)
        stmt = _BlockNameDeduplicator().visit_stmt(SeqStmt.flatten(*self.bodies))
        root = Block((), (), (), "root", stmt, None, allocs)
        fused = PrimFunc(handles + scalars, BlockRealize((), const(True), root), None, buffer_map,
                         {"tir.noalias": True})
        if not verify_well_formed(fused, assert_mode=False):
            # e.g. a symbolic var only the Relax side knows (no parameter defines it)
            raise _Unsupported("the fused PrimFunc would not be well formed")
        return fused

    def _collect_param(self, sinfo, name: str, buffers: list, scalars: list) -> None:
        if isinstance(sinfo, TensorStructInfo):
            buffers.append(decl_buffer(self.shape_of(sinfo), sinfo.dtype, name))
        elif isinstance(sinfo, TupleStructInfo):
            for i, field in enumerate(sinfo.fields):
                self._collect_param(field, f"{name}_{i}", buffers, scalars)
        elif isinstance(sinfo, PrimStructInfo) and isinstance(sinfo.value, TIRVar):
            scalars.append(self.fused_expr(sinfo.value))
        elif isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None and \
                all(isinstance(v, TIRVar) for v in sinfo.values):
            scalars.extend(self.fused_expr(v) for v in sinfo.values)
        else:
            raise _Unsupported(f"parameter {name} of struct info {sinfo}")

    def visit_value(self, value) -> list:
        if isinstance(value, relax_expr.Var):
            if value not in self.expr2buffers:
                raise _Unsupported(f"{value.name_hint} is not defined by the function")
            return self.expr2buffers[value]
        if isinstance(value, relax_expr.Tuple):
            return [b for field in value.fields for b in self.visit_value(field)]
        if isinstance(value, relax_expr.TupleGetItem):
            buffers = self.visit_value(value.tuple_value)
            fields = value.tuple_value.struct_info.fields
            begin = sum(_num_tensors(f) for f in fields[:value.index])
            return buffers[begin:begin + _num_tensors(fields[value.index])]
        if isinstance(value, relax_expr.Call) and isinstance(value.op, Op) and value.op.name == CALL_TIR:
            return self.visit_call_tir(value)
        raise _Unsupported(f"unsupported binding value {value!r}")

    def visit_call_tir(self, call: relax_expr.Call) -> list:
        gv = call.args[0]
        callee = self.mod[gv.name_hint] if gv.name_hint in self.mod else None
        if not isinstance(callee, PrimFunc):
            raise _Unsupported(f"{gv.name_hint} is not a PrimFunc")
        realize = callee.body
        if not (isinstance(realize, BlockRealize) and not realize.block.iter_vars):
            raise _Unsupported(f"{gv.name_hint} is not schedulable (its body is not a root block)")
        root = realize.block
        self.callees.append(gv.name_hint)
        inputs = [b for arg in call_tir_args(call) for b in self.visit_value(arg)]
        out_sinfo = call.sinfo_args[0]
        out_fields = out_sinfo.fields if isinstance(out_sinfo, TupleStructInfo) else (out_sinfo,)
        params = callee.params
        n_in, n_out = len(inputs), len(out_fields)
        if len(params) < n_in + n_out or any(p not in callee.buffer_map for p in params[:n_in + n_out]):
            raise _Unsupported(f"{gv.name_hint} does not take {n_in} inputs and {n_out} outputs")
        matcher = _SymbolicMatcher(self.analyzer)
        buffers: dict = {}
        for k, (param, target) in enumerate(zip(params[:n_in], inputs)):
            src = callee.buffer_map[param]
            if len(src.shape) != len(target.shape):
                raise _Unsupported(f"argument {k} of {gv.name_hint} has the wrong rank")
            for a, b in zip(src.shape, target.shape):
                matcher.match(a, b, f"argument {k} of {gv.name_hint}")
            buffers[src] = target
        for root_buf in root.alloc_buffers:
            self.allocs.append(root_buf)  # replaced by its fresh copy below
        outputs = []
        for k, (param, sinfo) in enumerate(zip(params[n_in:n_in + n_out], out_fields)):
            src = callee.buffer_map[param]
            shape = self.shape_of(sinfo)
            if len(src.shape) != len(shape):
                raise _Unsupported(f"output {k} of {gv.name_hint} has the wrong rank")
            for a, b in zip(src.shape, shape):
                matcher.match(a, b, f"output {k} of {gv.name_hint}")
            new = _fresh_buffer(src, shape, self._intermediate_name(src.name))
            self.allocs.append(new)
            buffers[src] = new
            outputs.append(new)
        scalars = params[n_in + n_out:]
        tir_vars = call.args[2].values if len(call.args) > 2 and isinstance(call.args[2],
                                                                            relax_expr.ShapeExpr) else ()
        if len(scalars) != len(tir_vars):
            raise _Unsupported(
                f"{gv.name_hint} takes {len(scalars)} scalars, the call passes {len(tir_vars)}")
        for k, (param, value) in enumerate(zip(scalars, tir_vars)):
            matcher.match(param, self.fused_expr(value), f"tir_vars[{k}] of {gv.name_hint}")
        inliner = _Inliner(buffers, matcher.vmap)
        fresh_allocs = [inliner.fresh_buffer(b) for b in root.alloc_buffers]
        start = len(self.allocs) - n_out - len(root.alloc_buffers)
        self.allocs[start:start + len(root.alloc_buffers)] = fresh_allocs
        self.bodies.append(inliner.visit_stmt(root.body))
        return outputs

    def _intermediate_name(self, base: str) -> str:
        names = {b.name for b in self.allocs}
        name, k = f"{base}_intermediate", 0
        while name in names:
            k += 1
            name = f"{name}_{k}"
        return name


# --- rewriting the callers -----------------------------------------------------------------


class _CallRewriter(ExprMutator):
    """Calls of fused functions become `call_tir`s of their PrimFuncs."""

    def __init__(self, mod, fused: dict):
        super().__init__(mod)
        self.fused = fused  # name -> GlobalVar of the PrimFunc

    def visit_Call(self, call: relax_expr.Call):
        new = super().visit_Call(call)
        op = new.op
        if not isinstance(op, GlobalVar) or op.name_hint not in self.fused:
            return new
        if new is not call:
            new = self.builder.normalize(new)
        args, tir_vars = [], []
        for arg in new.args:
            self._flatten(arg, args, tir_vars)
        return call_tir(self.fused[op.name_hint], args, new.struct_info, tir_vars or None)

    def _flatten(self, arg, args: list, tir_vars: list) -> None:
        sinfo = arg.struct_info
        if isinstance(sinfo, ShapeStructInfo):
            tir_vars.extend(sinfo.values)
        elif isinstance(sinfo, PrimStructInfo):
            tir_vars.append(sinfo.value)
        elif isinstance(sinfo, TupleStructInfo):
            for i in range(len(sinfo.fields)):
                field = arg.fields[i] if isinstance(arg, relax_expr.Tuple) else \
                    self.builder.emit(relax_expr.TupleGetItem(arg, i))
                self._flatten(field, args, tir_vars)
        else:
            args.append(arg)


@module_pass(opt_level=0, name="FuseTIR", copy=False)
class FuseTIR:
    """Replace each Primitive Relax function by one PrimFunc and its calls by `call_tir`s."""

    def transform_module(self, mod, ctx):
        if not any(is_primitive(func) for _, func in mod.items()):
            return mod
        # TVM's FuseTIR starts with ExpandTupleArguments, which canonicalizes bindings: an
        # output bound to a fused call's result (`lv = fused(...); gv = lv`) binds the call.
        from .canonicalize_bindings import CanonicalizeBindings

        # A step of this pass, not a pass of its own: run it without the context's instruments.
        original, mod = mod, CanonicalizeBindings().transform_module(mod, ctx)
        fused: dict = {}
        callees: set = set()
        for gv, func in mod.items():
            if not is_primitive(func):
                continue
            constructor = _FusedTIRConstructor(mod, gv.name_hint, func)
            try:
                fused[gv] = constructor.build()
            except _Unsupported:
                continue
            callees.update(constructor.callees)
        if not fused:
            return original
        new = mod.copy()
        for gv, prim_func in fused.items():
            new[gv] = prim_func
        # The rewriter normalizes against the old module, where the callees are still Relax functions.
        rewriter = _CallRewriter(mod, {gv.name_hint: new.get_global_var(gv.name_hint) for gv in fused})
        for gv, func in new.items():
            if isinstance(func, relax_expr.Function):
                updated = rewriter.visit_expr(func)
                if updated is not func:
                    new[gv] = updated
        used = {g.name_hint for _, func in new.items() if isinstance(func, relax_expr.Function)
                for g in all_global_vars(func)}
        for name in callees - used:
            if name in new and name not in {gv.name_hint for gv in fused}:
                del new[name]
        return new
