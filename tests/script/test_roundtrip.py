"""print -> parse is the identity: the corpus, random PrimFuncs and random unfolded expressions."""

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphc import tir
from graphc.ir import assert_structural_equal, structural_equal
from graphc.ir.dtype import DataType
from graphc.script import from_source
from graphc.tir.analysis.block_access import get_block_access_region

from .corpus import CORPUS


@pytest.mark.parametrize("make", CORPUS, ids=lambda f: f.__name__)
def test_corpus_round_trip(make):
    ir = make()
    text = ir.script()
    parsed = from_source(text)
    assert_structural_equal(parsed, ir)
    assert parsed.script() == text


# --- random PrimFuncs ------------------------------------------------------------------------

_INT_OPS = [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a // 3 + b,
    lambda a, b: a % 5 - b, tir.min, tir.max, lambda a, b: tir.truncdiv(a, 2) * b,
    lambda a, b: tir.truncmod(a, 7) + b,
    lambda a, b: tir.select(tir.convert(a < b), a, b),
]
_FLOAT_OPS = [
    lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / (b + 2.0),
    lambda a, b: tir.exp(a) + b, lambda a, b: tir.max(a, b), lambda a, b: tir.sigmoid(a) * tir.sqrt(b),
    lambda a, b: tir.if_then_else(tir.convert(a > b), a, b),
]


class _Gen:
    def __init__(self, draw, buffers):
        self.draw = draw
        self.buffers = buffers
        self.blocks = 0

    def int_expr(self, ivars, depth=2):
        if depth == 0 or self.draw(st.integers(0, 2)) == 0:
            if ivars and self.draw(st.booleans()):
                return self.draw(st.sampled_from(ivars))
            return tir.const(self.draw(st.integers(-4, 9)))
        op = self.draw(st.sampled_from(_INT_OPS))
        return op(self.int_expr(ivars, depth - 1), self.int_expr(ivars, depth - 1))

    def cond(self, ivars):
        a, b = self.int_expr(ivars, 1), self.int_expr(ivars, 1)
        kind = self.draw(st.integers(0, 3))
        c = [a < b, a <= b, a > b][kind] if kind < 3 else tir.convert(a == b)
        if self.draw(st.booleans()) and ivars:
            c = c & (self.draw(st.sampled_from(ivars)) != 0)
        return tir.convert(c)

    def load(self, buf, ivars):
        return buf[tuple(self.int_expr(ivars, 1) for _ in buf.shape)]

    def float_expr(self, ivars, depth=2):
        if depth == 0 or self.draw(st.integers(0, 2)) == 0:
            pick = self.draw(st.integers(0, 2))
            if pick == 0:
                return tir.const(self.draw(st.sampled_from([0.5, 1.0, -2.25, 3.0])))
            if pick == 1 and ivars:
                return tir.Cast("float32", self.draw(st.sampled_from(ivars)))
            return self.load(self.buffers[0], ivars)
        op = self.draw(st.sampled_from(_FLOAT_OPS))
        return op(self.float_expr(ivars, depth - 1), self.float_expr(ivars, depth - 1))

    def store(self, ivars):
        buf = self.draw(st.sampled_from(self.buffers))
        indices = tuple(self.int_expr(ivars, 1) for _ in buf.shape)
        return tir.BufferStore(buf, self.float_expr(ivars), indices)

    def stmt(self, ivars, depth):
        kind = self.draw(st.integers(0, 11 if depth > 0 else 0))
        if kind == 0:
            return self.store(ivars)
        if kind >= 7:
            return self.lowered_stmt(kind, ivars, depth)
        if kind in (1, 2):
            var = tir.Var("i")
            extent = tir.const(self.draw(st.integers(1, 6)))
            loop_kind = self.draw(st.sampled_from(list(tir.ForKind)))
            binding = None
            if loop_kind is tir.ForKind.THREAD_BINDING:
                binding = tir.IterVar(None, tir.Var("t"), tir.IterType.THREAD_INDEX, "threadIdx.x")
            lo = tir.const(self.draw(st.sampled_from([0, 0, 2])))
            return tir.For(var, lo, extent, loop_kind, self.seq(ivars + [var], depth - 1), binding)
        if kind == 3:
            other = self.seq(ivars, depth - 1) if self.draw(st.booleans()) else None
            return tir.IfThenElse(self.cond(ivars), self.seq(ivars, depth - 1), other)
        if kind == 4:
            var = tir.Var("x")
            return tir.LetStmt(var, self.int_expr(ivars), self.seq(ivars + [var], depth - 1))
        if kind == 5 and ivars:
            return self.block(ivars, depth)
        return tir.Evaluate(tir.call_extern("int32", "f", self.int_expr(ivars, 1)))

    def lowered_stmt(self, kind, ivars, depth):
        """Allocate + view, while, assert, thread launch and vector stores."""
        if kind == 7:
            data = tir.Var("buf", "handle", "float32")
            scope = self.draw(st.sampled_from(["global", "local", "shared"]))
            view = tir.decl_buffer((4,), "float32", "buf", data=data, scope=scope)
            store = tir.BufferStore(view, self.float_expr(ivars), (self.int_expr(ivars, 1),))
            body = tir.SeqStmt.flatten(store, self.seq(ivars, depth - 1))
            return tir.Allocate(data, "float32", (tir.const(4),), tir.const(True), body, scope)
        if kind == 8:
            return tir.While(self.cond(ivars), self.store(ivars))
        if kind == 9:
            return tir.AssertStmt(self.cond(ivars), tir.StringImm("bad"), self.seq(ivars, depth - 1))
        if kind == 10:
            tx, extent = tir.Var("tx"), tir.const(self.draw(st.integers(1, 64)))
            iv = tir.IterVar(tir.Range(tir.const(0), extent), tx, tir.IterType.THREAD_INDEX, "threadIdx.x")
            return tir.AttrStmt(iv, "thread_extent", extent, self.seq(ivars + [tx], depth - 1))
        buf = self.buffers[0]
        lanes = self.draw(st.sampled_from([2, 4]))
        index = tir.ramp(self.int_expr(ivars, 1), 1, lanes)
        indices = (index,) if len(buf.shape) == 1 else (tir.broadcast(0, lanes), index)
        return tir.BufferStore(buf, tir.broadcast(self.float_expr(ivars, 1), lanes), indices)

    def block(self, ivars, depth):
        bound = self.draw(st.lists(st.sampled_from(ivars), min_size=1, max_size=2))
        block_vars = [tir.Var("v") for _ in bound]
        iter_vars = tuple(tir.IterVar(tir.Range(tir.const(0), tir.const(8)), v,
                                      self.draw(st.sampled_from([tir.IterType.DATA_PAR,
                                                                 tir.IterType.COMM_REDUCE])))
                          for v in block_vars)
        body = self.seq(block_vars, depth - 1)
        self.blocks += 1
        init = None
        if any(iv.iter_type is tir.IterType.COMM_REDUCE for iv in iter_vars) and self.draw(st.booleans()):
            init = self.store(block_vars)
        block = tir.Block(iter_vars, (), (), f"b{self.blocks}", body, init)
        reads, writes = get_block_access_region(block)
        params = {id(b) for b in self.buffers}  # regions of buffers allocated inside are dropped
        block = block.replace(reads=tuple(r for r in reads if id(r.buffer) in params),
                              writes=tuple(w for w in writes if id(w.buffer) in params))
        predicate = self.cond(ivars) if self.draw(st.booleans()) else tir.const(True)
        return tir.BlockRealize(tuple(bound), predicate, block)

    def seq(self, ivars, depth):
        items = [self.stmt(ivars, depth) for _ in range(self.draw(st.integers(1, 2)))]
        return items[0] if len(items) == 1 else tir.SeqStmt(tuple(items))


@st.composite
def prim_funcs(draw):
    n = tir.SizeVar("n") if draw(st.booleans()) else tir.Var("n")
    dims = st.one_of(st.integers(1, 8), st.just(n))
    shapes = draw(st.lists(st.lists(dims, min_size=1, max_size=2), min_size=1, max_size=2))
    buffers = [tir.decl_buffer(tuple(s), "float32", f"A{k}") for k, s in enumerate(shapes)]
    gen = _Gen(draw, buffers)
    body = gen.seq([], 3)
    from graphc.script.printer.function import contains_block

    if contains_block(body):
        body = tir.BlockRealize((), tir.const(True), tir.Block((), (), (), "root", body))
    params = [tir.Var(f"a{k}", "handle") for k in range(len(buffers))]
    if draw(st.booleans()):
        params.append(tir.Var("m", draw(st.sampled_from(["int32", "int64"]))))
    attrs = {"global_symbol": "main"} if draw(st.booleans()) else {}
    return tir.PrimFunc(params, body, buffer_map=dict(zip(params, buffers)), attrs=attrs)


def _select_left_in_a_read_region():
    """Found by hypothesis: access analysis substitutes `x = 0` into `A0[T.Select(x < 0, x, 0)]`
    and leaves `Select(LT(0, 0), 0, 0)` in the block's read region, which printed as
    `T.Select(0 < 0, 0, 0)` and parsed back as `T.Select(T.bool(False), 0, 0)`."""
    A = tir.decl_buffer((8,), "float32", "A0")
    i, v, x = tir.Var("i"), tir.Var("v"), tir.Var("x")
    load = A[tir.select(x < 0, x, 0)]
    body = tir.LetStmt(x, tir.const(0), tir.BufferStore(A, load, (v,)))
    iv = tir.IterVar(tir.Range(tir.const(0), tir.const(8)), v, tir.IterType.DATA_PAR)
    block = tir.Block((iv,), (), (), "b1", body)
    reads, writes = get_block_access_region(block)
    assert isinstance(reads[0].region[0].min.condition, tir.LT)  # still unfolded
    realize = tir.BlockRealize((i,), tir.const(True), block.replace(reads=reads, writes=writes))
    loop = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL, realize)
    root = tir.BlockRealize((), tir.const(True), tir.Block((), (), (), "root", loop))
    a0 = tir.Var("a0", "handle")
    return tir.PrimFunc([a0], root, buffer_map={a0: A})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prim_funcs())
@example(_select_left_in_a_read_region())
def test_random_prim_funcs_round_trip(func):
    text = func.script()
    parsed = from_source(text)
    assert structural_equal(parsed, func), text
    assert parsed.script() == text


# --- random unfolded expressions -------------------------------------------------------------
# Trees built with the node constructors, so nothing folds on the way: `Add(0, 7)` stays an
# Add, and the printer must spell it so that the parser does not fold it either.

_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "bfloat16", "float32", "float64", "bool"]
_ARITH = [tir.Add, tir.Sub, tir.Mul, tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod, tir.Min, tir.Max]
_COMPARE = [tir.EQ, tir.NE, tir.LT, tir.LE, tir.GT, tir.GE]
_VARS = {dtype: tir.Var(f"v_{dtype}", dtype) for dtype in _DTYPES}


def _constants(dtype):
    dt = DataType(dtype)
    if dt.is_bool:
        return st.booleans().map(lambda b: tir.const(b, "bool"))
    if dt.is_float:
        return st.floats(width=min(dt.bits, 64)).map(lambda x: tir.FloatImm(dtype, x))
    return st.integers(dt.min_value(), dt.max_value()).map(lambda n: tir.IntImm(dtype, n))


@st.composite
def unfolded_exprs(draw, dtype, depth=3):
    """A random expression of `dtype`: arithmetic, comparison, logical, cast and select nodes
    over constants and variables of every integer and float dtype (and bool)."""
    node_kinds = ["select", "cast"] + (["and", "or", "not", "compare"] if dtype == "bool" else ["arith"])
    kind = draw(st.sampled_from(["const", "var"] + (node_kinds if depth > 0 else [])))
    if kind == "const":
        return draw(_constants(dtype))
    if kind == "var":
        return _VARS[dtype]

    def sub(operand_dtype=dtype):
        return draw(unfolded_exprs(operand_dtype, depth - 1))

    if kind == "select":
        return tir.Select(sub("bool"), sub(), sub(), dtype)
    if kind == "cast":
        return tir.Cast(dtype, sub(draw(st.sampled_from(_DTYPES))))
    if kind == "arith":
        return draw(st.sampled_from(_ARITH))(sub(), sub(), dtype)
    if kind == "compare":
        operand = draw(st.sampled_from(_DTYPES))
        return draw(st.sampled_from(_COMPARE))(sub(operand), sub(operand), "bool")
    if kind == "not":
        return tir.Not(sub(), "bool")
    return (tir.And if kind == "and" else tir.Or)(sub(), sub(), "bool")


def _zero(dtype="int32"):
    return tir.const(0, dtype)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_DTYPES).flatmap(unfolded_exprs))
@example(tir.Select(tir.LT(_zero(), _zero(), "bool"), _zero(), _zero(), "int32"))
@example(tir.Add(_zero(), tir.const(7), "int32"))
@example(tir.LT(_zero(), tir.const(7), "bool"))
@example(tir.And(tir.LT(_zero(), tir.const(7), "bool"),
                 tir.Not(tir.LT(tir.const(7), _zero(), "bool"), "bool"), "bool"))
@example(tir.FloorDiv(_VARS["float32"], tir.const(2.0), "float32"))  # `//` on floats is floor(a / b)
@example(tir.Div(_VARS["int64"], _zero("int64"), "int64"))  # T.truncdiv rejects a zero divisor
@example(tir.FloatImm("float32", float("nan")))
def test_unfolded_expressions_round_trip(expr):
    func = tir.PrimFunc(list(_VARS.values()), tir.Evaluate(expr))
    text = func.script()
    parsed = from_source(text)
    assert structural_equal(parsed, func), text
    assert parsed.script() == text
