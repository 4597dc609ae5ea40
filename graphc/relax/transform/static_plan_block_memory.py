"""StaticPlanBlockMemory: carve intermediate tensors out of a few reusable storages (TVM's planner).

Every `R.builtin.alloc_tensor` whose tensor lives and dies inside one binding block and is
only passed to PrimFuncs (direct calls, `vm.call_tir_dyn`) or packed functions gets a
storage token. Walking the bindings in order, a token whose tensor has had its last use is
released into a pool (per storage scope and dtype); a later allocation takes the smallest
released token at least as large (within a factor of 16), else the largest smaller one
(grown to fit), else a new token. The rewrite then emits one `R.memory.alloc_storage` per
token (bytes as its size) at its first use, and each planned allocation becomes
`R.memory.alloc_tensor(storage, R.prim_value(0), shape, dtype)`.

Not planned (left as `builtin.alloc_tensor`): tensors returned by the function or by an
`If` branch or a SeqExpr, tensors passed to Relax functions or operators other than
`reshape` (which shares its input's token), and tensors used outside their block.
Symbolic sizes take their upper bound from the function attribute `tir_var_upper_bound`
(`{"n": 1024}`; for variables of the signature), else stay symbolic and are only reused
for provably equal sizes. With the attribute `relax.memory_plan_dynamic_func_output`, the
remaining symbolic allocations get a storage of their upper-bound size too. Kills are left
to `KillAfterLastUse`, as in TVM.

>>> from graphc import relax
>>> from graphc.script import from_source
>>> mod = from_source('''
... from graphc.script import ir as I, relax as R, tir as T
... @I.ir_module
... class Module:
...     @T.prim_func
...     def exp(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
...         for i in range(8):
...             B[i] = T.exp(A[i])
...     @R.function
...     def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
...         cls = Module
...         a0 = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
...         _0 = cls.exp(x, a0)
...         a1 = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
...         _1 = cls.exp(a0, a1)
...         a2 = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
...         _2 = cls.exp(a1, a2)
...         a3 = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
...         _3 = cls.exp(a2, a3)
...         return a3
... ''')
>>> planned = StaticPlanBlockMemory()(mod)["main"].body.blocks[0].bindings
>>> [b.value.op.name.removeprefix("relax.") for b in planned if isinstance(b.value.op, relax.Op)]
['memory.alloc_storage', 'memory.alloc_tensor', 'memory.alloc_storage', 'memory.alloc_tensor', \
'memory.alloc_tensor', 'builtin.alloc_tensor']
"""

from __future__ import annotations

import bisect
import itertools

from ...errors import TypeInferenceError
from ...ir.dtype import DataType
from ...ir.transform import module_pass
from ...tir.arith import Analyzer
from ...tir.arith.bound import POS_INF
from ...tir.expr import IntImm, Range
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..op.memory import alloc_storage, alloc_tensor
from ..struct_info import TensorStructInfo, tir_vars_in_struct_info
from .vm_lowering_utils import is_op, is_prim_func_gvar, rewrite_functions

_ALLOC = "relax.builtin.alloc_tensor"
_INPLACE_OPS = ("relax.reshape", "relax.memory.view", "relax.memory.ensure_zero_offset")
_MATCH_RANGE = 16  # a released storage is reused for requests within this factor of its size


class _Token:
    """A storage request (and, once allocated, a storage): its size, dtype and scope."""

    __slots__ = ("ref_counter", "bytes", "dtype", "scope", "storage_id", "discarded")

    def __init__(self, nbytes, dtype: str, scope: str):
        self.ref_counter = 0
        self.bytes = nbytes
        self.dtype, self.scope = dtype, scope
        self.storage_id = -1
        self.discarded = False

    @property
    def const_bytes(self) -> int:
        return self.bytes.value if isinstance(self.bytes, IntImm) else -1


def _leaves(tokens):
    """The live tokens of a nested token message (None, a token, or a tuple of them)."""
    if tokens is None:
        return
    if isinstance(tokens, tuple):
        for t in tokens:
            yield from _leaves(t)
    elif not tokens.discarded:
        yield tokens


def _upper_bound_analyzer(func: relax_expr.Function) -> Analyzer:
    """An Analyzer knowing `0 <= v <= bound` for the signature's vars in `tir_var_upper_bound`."""
    analyzer = Analyzer()
    bounds = {}
    for name, value in dict(func.attrs.get("tir_var_upper_bound") or {}).items():
        value = getattr(value, "value", value)  # an int or an IntImm
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise TypeInferenceError(
                f"tir_var_upper_bound expects positive integers, got {name!r}: {value!r}")
        bounds[str(name)] = value
    for var in tir_vars_in_struct_info(func.struct_info):
        if var.name in bounds:
            analyzer.bind(var, Range(IntImm("int64", 0), IntImm("int64", bounds[var.name] + 1)))
    return analyzer


def _upper_bound_shape(values, analyzer: Analyzer) -> list:
    out = []
    for dim in values:
        bound = analyzer.const_int_bound(dim).max_value
        out.append(dim if bound >= POS_INF else IntImm("int64", bound))
    return out


def _nbytes(shape, dtype: str, analyzer: Analyzer):
    """Bytes of a tensor: the constant part folded, symbolic dims multiplied in."""
    coeff, size = DataType(dtype).itemsize, None
    for dim in shape:
        if isinstance(dim, IntImm):
            coeff *= dim.value
        else:
            size = dim if size is None else size * dim
    if size is None:
        return IntImm("int64", coeff)
    return analyzer.simplify(size * IntImm("int64", coeff))


class _TokenWalk:
    """A walk over a function's bindings that maps each var to the tokens its value holds."""

    def __init__(self):
        self.tokens: dict = {}

    def get(self, expr):
        """The tokens `expr` refers to: a var's, a tuple of its fields', or a tuple field's."""
        if isinstance(expr, relax_expr.Var):
            return self.tokens.get(expr)
        if isinstance(expr, relax_expr.Tuple):
            return tuple(self.get(f) for f in expr.fields)
        if isinstance(expr, relax_expr.TupleGetItem):
            tokens = self.get(expr.tuple_value)
            return tokens[expr.index] if isinstance(tokens, tuple) else None
        return self.get_other(expr)

    def get_other(self, expr):
        """The tokens of any other expression (none, unless the walk says otherwise)."""
        return None


# --- stage 1: tokens and their reference counts ----------------------------------------------


class _Init(_TokenWalk):
    """Creates a token per plannable alloc_tensor, counts its uses, discards unplannable ones."""

    def __init__(self, mod, func: relax_expr.Function, analyzer: Analyzer):
        super().__init__()
        self.mod, self.analyzer = mod, analyzer  # self.tokens: var or alloc call -> tokens
        self.token_block: dict = {}
        self.blocks: list = []
        self.discard(self.seq(func.body))

    def discard(self, tokens) -> None:
        for t in _leaves(tokens):
            t.discarded = True

    def seq(self, seq):
        if not isinstance(seq, relax_expr.SeqExpr):
            return self.get(seq)
        for block in seq.blocks:
            self.blocks.append(block)
            for b in block.bindings:
                self.tokens[b.var] = self.get(b.value)
            self.blocks.pop()
        self.discard(self.get(seq.body))
        return None

    def get_other(self, expr):
        if isinstance(expr, relax_expr.Call):
            return self.call(expr)
        if isinstance(expr, relax_expr.If):
            self.discard(self.get(expr.cond))
            self.seq(expr.true_branch)
            self.seq(expr.false_branch)
        return None

    def call(self, call: relax_expr.Call):
        if is_op(call, _ALLOC):
            return self.create(call)
        if any(is_op(call, name) for name in _INPLACE_OPS):
            return self.get(call.args[0])
        if is_prim_func_gvar(self.mod, call.op) or isinstance(call.op, relax_expr.ExternFunc) or \
                is_op(call, "relax.vm.call_tir_dyn"):
            for arg in call.args:
                for t in list(_leaves(self.get(arg))):
                    if self.token_block.get(t) is not self.blocks[-1]:
                        t.discarded = True  # used outside the block that allocates it
                    else:
                        t.ref_counter += 1
        else:
            for arg in call.args:
                self.discard(self.get(arg))
        return None

    def create(self, call: relax_expr.Call):
        sinfo = call.struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None or sinfo.is_unknown_dtype \
                or not isinstance(call.args[3], relax_expr.StringImm):
            return None
        shape = _upper_bound_shape(sinfo.shape_values, self.analyzer)
        token = _Token(_nbytes(shape, sinfo.dtype, self.analyzer), sinfo.dtype, call.args[3].value)
        self.tokens[call] = token
        self.token_block[token] = self.blocks[-1]
        return token


# --- stage 2: assigning storages ---------------------------------------------------------------


class _Pool:
    """Released storages per (scope, dtype), sorted by constant size (-1: symbolic)."""

    def __init__(self, analyzer: Analyzer):
        self.analyzer = analyzer
        self.available: dict = {}
        self.order = itertools.count()

    def request_reuse(self, proto: _Token) -> _Token | None:
        if proto.ref_counter == 0:
            return None  # never used: a fresh storage, which dead-code elimination may remove
        pool = self.available.setdefault((proto.scope, proto.dtype), [])
        size = proto.const_bytes
        if size == -1:
            for i, (key, _, token) in enumerate(pool):
                if key == -1 and self.analyzer.can_prove_equal(proto.bytes, token.bytes):
                    return self._take(pool, i, proto)
            return None
        keys = [entry[0] for entry in pool]
        lo = bisect.bisect_left(keys, size // _MATCH_RANGE)
        mid = bisect.bisect_left(keys, size)
        hi = bisect.bisect_right(keys, size * _MATCH_RANGE)
        if mid < hi:
            return self._take(pool, mid, proto)  # the smallest storage that is large enough
        if mid > lo and keys[mid - 1] >= 0:
            token = self._take(pool, mid - 1, proto)  # the largest smaller one, grown to fit
            token.bytes = IntImm("int64", size)
            return token
        return None

    @staticmethod
    def _take(pool: list, index: int, proto: _Token) -> _Token:
        token = pool.pop(index)[2]
        token.ref_counter = proto.ref_counter
        return token

    def release(self, token: _Token) -> None:
        pool = self.available.setdefault((token.scope, token.dtype), [])
        bisect.insort(pool, (token.const_bytes, next(self.order), token), key=lambda e: (e[0], e[1]))


class _Planner(_TokenWalk):
    """Walks the bindings in order, handing each planned allocation a (possibly reused) storage."""

    def __init__(self, init: _Init, analyzer: Analyzer, func: relax_expr.Function):
        super().__init__()
        self.init = init
        self.analyzer = analyzer
        self.pool = _Pool(analyzer)
        self.n_storage = 0
        self.alloc_storage: dict = {}  # builtin.alloc_tensor call -> storage token
        self.seq(func.body)

    def seq(self, seq) -> None:
        if not isinstance(seq, relax_expr.SeqExpr):
            return
        for block in seq.blocks:
            saved = self.pool
            if isinstance(block, relax_expr.DataflowBlock):
                self.pool = _Pool(self.analyzer)  # storages defined in a dataflow block stay in it
            for b in block.bindings:
                self.tokens[b.var] = self.binding_value(b.value)
            self.pool = saved

    def binding_value(self, value):
        if isinstance(value, relax_expr.If):
            saved, self.pool = self.pool, _Pool(self.analyzer)  # a branch's storages stay in it
            self.seq(value.true_branch)
            self.pool = _Pool(self.analyzer)
            self.seq(value.false_branch)
            self.pool = saved
            return None
        if not isinstance(value, relax_expr.Call):
            return self.get(value)
        if is_op(value, _ALLOC):
            proto = self.init.tokens.get(value)
            if proto is None or proto.discarded:
                return None
            token = self.pool.request_reuse(proto)
            if token is None:
                token = proto
                token.storage_id = self.n_storage
                self.n_storage += 1
            self.alloc_storage[value] = token
            return token
        if any(is_op(value, name) for name in _INPLACE_OPS):
            return self.get(value.args[0])
        for arg in value.args:
            for token in _leaves(self.get(arg)):
                token.ref_counter -= 1
                if token.ref_counter == 0:
                    self.pool.release(token)
        return None


# --- stage 3: the rewrite ----------------------------------------------------------------------


class _Rewriter(ExprMutator):
    def __init__(self, mod, alloc_storage: dict, plan_dynamic_output: Analyzer | None):
        super().__init__(mod)
        self.plan = alloc_storage
        self.storage_vars: dict = {}
        self.dynamic = plan_dynamic_output

    def visit_Call(self, call: relax_expr.Call):
        token = self.plan.get(call)
        if token is not None:
            storage = self.storage_vars.get(token)
            if storage is None:
                storage = self.emit_storage(call, token.bytes, token.scope, token.dtype)
                self.storage_vars[token] = storage
            return self.tensor_in(storage, call)
        if self.dynamic is not None and is_op(call, _ALLOC):
            sinfo = call.struct_info
            values = sinfo.shape_values if isinstance(sinfo, TensorStructInfo) else None
            if values is not None and not all(isinstance(d, IntImm) for d in values):
                nbytes = _nbytes(_upper_bound_shape(values, self.dynamic), sinfo.dtype, self.dynamic)
                return self.tensor_in(self.emit_storage(call, nbytes, call.args[3], sinfo.dtype), call)
        return super().visit_Call(call)

    def emit_storage(self, call: relax_expr.Call, nbytes, scope, dtype: str) -> relax_expr.Var:
        """A storage of `nbytes` on the device of the `builtin.alloc_tensor` call `call`."""
        return self.builder.emit(alloc_storage(relax_expr.ShapeExpr([nbytes]), call.args[2], scope, dtype),
                                 "storage")

    @staticmethod
    def tensor_in(storage: relax_expr.Var, call: relax_expr.Call) -> relax_expr.Call:
        """The tensor `call` allocates, at the start of `storage`."""
        sinfo = call.struct_info
        return alloc_tensor(storage, 0, sinfo.shape, sinfo.dtype)


_PLAN_DYNAMIC_OUTPUT = "relax.memory_plan_dynamic_func_output"


@module_pass(opt_level=0, name="StaticPlanBlockMemory")
class StaticPlanBlockMemory:
    """Reuse storage between `builtin.alloc_tensor`s whose lifetimes do not overlap."""

    def transform_module(self, mod, ctx):
        def rewrite(gv, func):
            analyzer = _upper_bound_analyzer(func)
            init = _Init(mod, func, analyzer)
            planner = _Planner(init, analyzer, func)
            dynamic = func.attrs.get(_PLAN_DYNAMIC_OUTPUT)
            if not planner.alloc_storage and not dynamic:
                return func
            rewriter = _Rewriter(mod, planner.alloc_storage, _upper_bound_analyzer(func) if dynamic else None)
            new = rewriter.visit_expr(func)
            return new.without_attr(_PLAN_DYNAMIC_OUTPUT) if dynamic else new

        return rewrite_functions(mod, rewrite)


__all__ = ["StaticPlanBlockMemory"]
