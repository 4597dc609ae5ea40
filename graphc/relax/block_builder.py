"""BlockBuilder: build Relax functions binding by binding, normalized as they are emitted.

TVM's API: scoped `with bb.function(...)` / `with bb.dataflow()`, `emit`, `emit_output`,
`match_cast`, `emit_func_output`, `call_te` / `emit_te`, `add_func`, `get`.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((1, 4), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         lv = bb.emit(relax.op.nn.relu(x))
...         gv = bb.emit_output(relax.op.add(lv, x))
...     _ = bb.emit_func_output(gv)
>>> lv, gv, gv.struct_info
(lv, gv, R.Tensor((1, 4), dtype="float32"))
>>> type(lv).__name__, type(gv).__name__
('DataflowVar', 'Var')
"""

from __future__ import annotations

from contextlib import contextmanager

from ..errors import TypeInferenceError
from ..ir.module import GlobalVar, IRModule
from ..ir.structural import structural_equal, structural_hash
from ..tir.arith import Analyzer
from . import expr as relax_expr
from .call_te import CallTEMixin
from .normalize import Normalizer, global_struct_info
from .struct_info import StructInfo, TensorStructInfo, erase_to_well_defined


class BlockBuilderError(TypeInferenceError):
    """The builder was used out of order (emit outside a function, output twice, ...)."""


class _Block:
    __slots__ = ("is_dataflow", "bindings", "implicit", "defined")

    def __init__(self, is_dataflow: bool, implicit: bool = False):
        self.is_dataflow, self.bindings, self.implicit = is_dataflow, [], implicit
        self.defined: set = set()

    def build(self) -> relax_expr.BindingBlock:
        return (relax_expr.DataflowBlock if self.is_dataflow else relax_expr.BindingBlock)(self.bindings)


class _Scope:
    """One SeqExpr under construction: finished blocks and the open one."""

    __slots__ = ("blocks", "current")

    def __init__(self):
        self.blocks: list = []
        self.current: _Block | None = None


class _FunctionFrame:
    __slots__ = ("name", "params", "attrs", "private", "pure", "output_done")

    def __init__(self, name, params, attrs, private, pure):
        self.name, self.params, self.attrs, self.private, self.pure = name, params, attrs, private, pure
        self.output_done = False


class BlockBuilder(CallTEMixin, Normalizer):
    """Builds functions into an IRModule (a copy of `mod`, if given)."""

    def __init__(self, mod: IRModule | None = None):
        self._mod = mod.copy() if mod is not None else IRModule()
        self.analyzer = Analyzer()
        self._scopes: list[_Scope] = [_Scope()]
        self._func: _FunctionFrame | None = None
        self._names: dict[str, int] = {}
        self._bindings: dict = {}
        self._dedup_table: dict[int, list[GlobalVar]] | None = None  # built on first use

    @property
    def _dedup(self) -> dict[int, list[GlobalVar]]:
        """structural_hash -> GlobalVars, for add_func's deduplication (hashing is not free)."""
        if self._dedup_table is None:
            self._dedup_table = {}
            for gv, func in self._mod.functions.items():
                self._dedup_table.setdefault(structural_hash(func), []).append(gv)
        return self._dedup_table

    # -- module ----------------------------------------------------------------------------
    def get(self) -> IRModule:
        """The module built so far."""
        return self._mod

    def finalize(self) -> IRModule:
        return self._mod

    def add_func(self, func, func_name: str) -> GlobalVar:
        """Add `func`, deduplicated structurally; returns its GlobalVar (names made unique)."""
        for gv in self._dedup.get(structural_hash(func), ()):
            if gv in self._mod and structural_equal(self._mod[gv], func):
                return gv
        gv = GlobalVar(self._unique_global_name(func_name))
        self._mod[gv] = func
        self._dedup.setdefault(structural_hash(func), []).append(gv)
        return gv

    def update_func(self, gv: GlobalVar, func) -> None:
        """Bind `gv` to `func` (replacing the old function)."""
        self._mod[gv] = func
        if self._dedup_table is not None:
            bound = self._mod.get_global_var(gv.name_hint)
            self._dedup_table.setdefault(structural_hash(func), []).append(bound)

    def get_unique_name(self, hint: str) -> str:
        return self._unique_global_name(hint)

    def _unique_global_name(self, hint: str) -> str:
        name, i = hint, 0
        while name in self._mod:
            i += 1
            name = f"{hint}{i}"
        return name

    def _global_struct_info(self, gv: GlobalVar) -> StructInfo:
        if gv.name_hint not in self._mod:
            raise BlockBuilderError(f"call to {gv.name_hint!r}, which is not a function of the module")
        return global_struct_info(self._mod[gv.name_hint])

    # -- scopes ----------------------------------------------------------------------------
    @contextmanager
    def function(self, name: str, params=None, attrs=None, pure: bool = True, private: bool = False):
        """Scope of one function; finish it with `emit_func_output` inside the `with`."""
        if self._func is not None:
            raise BlockBuilderError(f"cannot open function {name!r} inside function {self._func.name!r}")
        if isinstance(params, relax_expr.Var):
            params = [params]
        self._func = _FunctionFrame(name, None if params is None else list(params), dict(attrs or {}),
                                    private, pure)
        self._names = {}
        self._scopes.append(_Scope())
        try:
            yield self
            if not self._func.output_done:
                raise BlockBuilderError(f"function {name!r} ended without bb.emit_func_output(...)")
        finally:
            self._func = None
            self._scopes.pop()

    @contextmanager
    def dataflow(self):
        """Scope of a dataflow block: emitted vars are DataflowVars unless emitted as outputs."""
        if self._func is None:
            raise BlockBuilderError("bb.dataflow() must be used inside `with bb.function(...)`")
        scope = self._scopes[-1]
        if scope.current is not None and scope.current.is_dataflow:
            raise BlockBuilderError("dataflow blocks cannot be nested")
        self.begin_dataflow_block()
        try:
            yield self
        finally:
            if scope.current is not None:
                self.end_block()

    def begin_dataflow_block(self) -> None:
        self._begin_block(True)

    def begin_binding_block(self) -> None:
        self._begin_block(False)

    def _begin_block(self, is_dataflow: bool) -> None:
        scope = self._scopes[-1]
        self._close_implicit(scope)
        if scope.current is not None:
            raise BlockBuilderError("a block is already open; end it with end_block() first")
        scope.current = _Block(is_dataflow)

    def end_block(self) -> relax_expr.BindingBlock:
        """Close the open block, add it to the current scope (if not empty) and return it."""
        scope = self._scopes[-1]
        if scope.current is None:
            raise BlockBuilderError("end_block() without an open block")
        block, scope.current = scope.current.build(), None
        if block.bindings:
            scope.blocks.append(block)
        return block

    def _close_implicit(self, scope: _Scope) -> None:
        if scope.current is not None and scope.current.implicit:
            if scope.current.bindings:
                scope.blocks.append(scope.current.build())
            scope.current = None

    def begin_scope(self) -> None:
        """Start a nested scope (a SeqExpr's blocks); `end_scope` returns its blocks."""
        self._scopes.append(_Scope())

    def end_scope(self) -> list:
        scope = self._scopes.pop()
        self._close_implicit(scope)
        if scope.current is not None:
            raise BlockBuilderError("end_scope() with a block still open")
        return scope.blocks

    def discard_scope(self) -> None:
        """Drop the innermost scope and whatever it holds (error recovery)."""
        self._scopes.pop()

    def current_block_is_dataflow(self) -> bool:
        current = self._scopes[-1].current
        return current is not None and current.is_dataflow

    def _open_block(self) -> _Block:
        scope = self._scopes[-1]
        if scope.current is None:
            if len(self._scopes) == 1 and self._func is None:
                raise BlockBuilderError(
                    "emit outside a function: open one with `with bb.function(name, params):` "
                    "(or begin_binding_block() for a free-standing block)")
            scope.current = _Block(False, implicit=True)
        return scope.current

    # -- emission --------------------------------------------------------------------------
    def _fresh_name(self, hint: str) -> str:
        count = self._names.get(hint)
        self._names[hint] = 0 if count is None else count + 1
        return hint if count is None else f"{hint}{count + 1}"

    def _new_var(self, hint: str, sinfo: StructInfo, dataflow: bool) -> relax_expr.Var:
        name = self._fresh_name(hint or ("lv" if dataflow else "gv"))
        return (relax_expr.DataflowVar if dataflow else relax_expr.Var)(name, sinfo)

    def _emit_value(self, expr: relax_expr.Expr) -> relax_expr.Var:
        return self.emit(expr)

    def emit(self, expr, name_hint: str = "") -> relax_expr.Var:
        """Normalize `expr` and bind it to a fresh var (a DataflowVar in a dataflow block)."""
        block = self._open_block()
        value = self.normalize(expr)
        self._check_visible(value)
        var = self._new_var(name_hint, value.struct_info, block.is_dataflow)
        return self._append(block, relax_expr.VarBinding(var, value))

    def emit_normalized(self, binding: relax_expr.Binding) -> relax_expr.Var:
        """Append an already normalized binding as it is (mutators use this)."""
        return self._append(self._open_block(), binding)

    def _append(self, block: _Block, binding: relax_expr.Binding) -> relax_expr.Var:
        if isinstance(binding.var, relax_expr.DataflowVar) and not block.is_dataflow:
            raise BlockBuilderError(f"dataflow var {binding.var.name_hint!r} bound outside a dataflow block")
        block.bindings.append(binding)
        block.defined.add(binding.var)
        self._bindings[binding.var] = binding.value
        return binding.var

    def emit_output(self, output, name_hint: str = "") -> relax_expr.Var:
        """Bind `output` to a non-dataflow Var visible after the dataflow block (`R.output`)."""
        block = self._scopes[-1].current
        if block is None or not block.is_dataflow:
            raise BlockBuilderError("emit_output is only valid inside `with bb.dataflow():`")
        if isinstance(output, list | tuple):
            output = relax_expr.Tuple(output)
        value = self.normalize(output)
        self._check_visible(value)
        var = self._new_var(name_hint or "gv", value.struct_info, False)
        return self._append(block, relax_expr.VarBinding(var, value))

    def match_cast(self, value, struct_info: StructInfo, name_hint: str = "") -> relax_expr.Var:
        """Bind `value`, checked at run time to match `struct_info` (which may define symbolic vars)."""
        block = self._open_block()
        value = self.normalize_arg(value)
        self._check_visible(value)
        actual = value.struct_info
        if not isinstance(struct_info, StructInfo):
            raise BlockBuilderError(f"match_cast expects a StructInfo, got {struct_info!r}")
        if type(actual).__name__ != "ObjectStructInfo" and type(actual) is not type(struct_info):
            raise BlockBuilderError(f"match_cast of {value!r} ({actual}) to {struct_info} can never succeed")
        var = self._new_var(name_hint, struct_info, block.is_dataflow)
        return self._append(block, relax_expr.MatchCast(var, value, struct_info))

    def emit_func_output(self, output, params=None) -> GlobalVar:
        """Finish the current function with `output` as its result; returns its GlobalVar."""
        frame = self._func
        if frame is None:
            raise BlockBuilderError("emit_func_output outside `with bb.function(...)`")
        if frame.output_done:
            raise BlockBuilderError(f"emit_func_output called twice for function {frame.name!r}")
        scope = self._scopes[-1]
        if scope.current is not None and scope.current.is_dataflow:
            raise BlockBuilderError("emit_func_output must be called after the dataflow block ends")
        if params is not None:
            if frame.params is not None:
                raise BlockBuilderError(
                    f"function {frame.name!r} got params both in function() and "
                    f"emit_func_output")
            frame.params = [params] if isinstance(params, relax_expr.Var) else list(params)
        if frame.params is None:
            raise BlockBuilderError(f"function {frame.name!r} has no params: pass them to function() or here")
        if isinstance(output, list | tuple):
            output = relax_expr.Tuple(output)
        output = self.normalize(output)
        if not (relax_expr.is_leaf(output) or isinstance(output, relax_expr.Tuple)):
            output = self.emit(output)
        self._check_visible(output, where=f"the output of function {frame.name!r}")
        self._close_implicit(scope)
        body = relax_expr.SeqExpr(scope.blocks, output)
        relax_expr.set_struct_info(body, output.struct_info)
        attrs = dict(frame.attrs)
        if not frame.private:
            attrs.setdefault("global_symbol", frame.name)
        func = relax_expr.Function(frame.params, body, None, frame.pure, attrs)
        if frame.name in self._mod:
            raise BlockBuilderError(f"the module already has a function named {frame.name!r}")
        gv = GlobalVar(frame.name)
        self._mod[gv] = func
        if self._dedup_table is not None:
            self._dedup_table.setdefault(structural_hash(func), []).append(gv)
        frame.output_done = True
        return gv

    def lookup_binding(self, var: relax_expr.Var):
        """The value bound to `var` by this builder, or None."""
        return self._bindings.get(var)

    # -- scoped normalization (If branches, nested SeqExprs, function bodies) --------------
    def _normalize_scoped(self, expr) -> relax_expr.SeqExpr:
        self.begin_scope()
        try:
            for block in expr.blocks if isinstance(expr, relax_expr.SeqExpr) else ():
                self._normalize_block(block)
            body = expr.body if isinstance(expr, relax_expr.SeqExpr) else expr
            new_body = self.normalize(body)
            if not (relax_expr.is_leaf(new_body) or isinstance(new_body, relax_expr.Tuple)):
                new_body = self.emit(new_body)
        finally:
            blocks = self.end_scope()
        old_blocks = expr.blocks if isinstance(expr, relax_expr.SeqExpr) else ()
        return finish_seq(expr, reuse_blocks(blocks, old_blocks), new_body)

    def _normalize_block(self, block: relax_expr.BindingBlock) -> None:
        self._begin_block(isinstance(block, relax_expr.DataflowBlock))
        for binding in block.bindings:
            value = self.normalize(binding.value)
            new = binding if value is binding.value else binding.replace(value=value)
            if new.var.struct_info_ is None:
                raise BlockBuilderError(f"binding of {new.var.name_hint!r} has a var without struct info")
            self.emit_normalized(new)
        self.end_block()

    def _check_visible(self, expr, where: str = "") -> None:
        """Dataflow vars may only be used inside the dataflow block that binds them."""
        current = self._scopes[-1].current
        local = current.defined if current is not None and current.is_dataflow else ()
        for leaf in _leaves(expr):
            if isinstance(leaf, relax_expr.DataflowVar) and leaf not in local:
                place = where or ("a binding outside its dataflow block" if current is None or
                                  not current.is_dataflow else "another dataflow block")
                raise BlockBuilderError(
                    f"dataflow var {leaf.name_hint!r} escapes its dataflow block: used in {place}; "
                    f"emit it with bb.emit_output(...) to make it visible after the block")


def reuse_blocks(new_blocks: list, old_blocks) -> list:
    """`new_blocks` with each block whose bindings are the old block's (by identity) replaced by it."""
    out = []
    for i, block in enumerate(new_blocks):
        old = old_blocks[i] if i < len(old_blocks) else None
        same = old is not None and type(old) is type(block) and len(old.bindings) == len(block.bindings) \
            and all(a is b for a, b in zip(old.bindings, block.bindings))
        out.append(old if same else block)
    return out


def finish_seq(old, blocks: list, body) -> relax_expr.SeqExpr:
    """`old` itself when nothing changed, else a new SeqExpr with struct info from `body`."""
    if isinstance(old, relax_expr.SeqExpr) and body is old.body and len(blocks) == len(old.blocks) and \
            all(a is b for a, b in zip(blocks, old.blocks)) and old.struct_info_ is not None:
        return old
    seq = relax_expr.SeqExpr(blocks, body)
    bound = {b.var for block in blocks for b in block.bindings}
    sinfo = body.struct_info
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape in bound:
        sinfo = erase_to_well_defined(sinfo)
    relax_expr.set_struct_info(seq, sinfo)
    return seq


def _leaves(expr):
    if isinstance(expr, relax_expr.Tuple):
        for f in expr.fields:
            yield from _leaves(f)
    elif isinstance(expr, relax_expr.Call):
        yield expr.op
        for a in expr.args:
            yield from _leaves(a)
    elif isinstance(expr, relax_expr.TupleGetItem):
        yield from _leaves(expr.tuple_value)
    elif isinstance(expr, relax_expr.If):
        yield from _leaves(expr.cond)
    else:
        yield expr
