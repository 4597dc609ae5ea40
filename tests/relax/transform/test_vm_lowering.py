"""VMLoweringPipeline end to end: the output holds only the documented forms, and running those
forms (with a small reference interpreter over numpy and the compiled PrimFuncs) gives numpy's
answers, including with reused storage, symbolic shapes, shape functions and tuples."""
# ruff: noqa: E501 - golden IR text keeps its natural line length

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.ir import GlobalVar, IRModule, assert_structural_equal
from graphc.script import from_source

R = relax
KILLED = object()


class RefVM:
    """Interprets exactly the forms VMLoweringPipeline documents; anything else fails the test."""

    def __init__(self, mod: IRModule):
        self.mod = mod
        prims = IRModule({gv.name_hint: f for gv, f in mod.items() if isinstance(f, tir.PrimFunc)})
        self.lib = graphc.build(prims, target="llvm") if len(prims) else None
        self.storages = []

    def __call__(self, name: str, *args):
        return self.call_relax(self.mod.get_global_var(name), list(args))

    def call_relax(self, gv, args):
        func = self.mod[gv]
        assert func.attrs["global_symbol"] == gv.name_hint
        env = dict(zip(func.params, args))
        return self.seq(func.body, env)

    def seq(self, seq, env):
        for block in seq.blocks:
            assert type(block) is R.BindingBlock, "dataflow blocks must be gone"
            for b in block.bindings:
                assert not isinstance(b.var, R.DataflowVar)
                env[b.var] = self.value(b.value, env)
        return self.arg(seq.body, env)

    def arg(self, e, env):
        if isinstance(e, R.Var):
            value = env[e]
            assert value is not KILLED, f"{e.name_hint} used after vm.kill_object"
            return value
        if isinstance(e, R.Tuple):
            return tuple(self.arg(f, env) for f in e.fields)
        if isinstance(e, R.Constant):
            return e.data.numpy()
        if isinstance(e, R.ShapeExpr):
            assert all(isinstance(v, tir.IntImm) for v in e.values), f"symbolic shape left: {e}"
            return tuple(int(v.value) for v in e.values)
        if isinstance(e, R.PrimValue):
            assert isinstance(e.value, tir.IntImm | tir.FloatImm), f"symbolic scalar left: {e}"
            return e.value.value
        if isinstance(e, R.StringImm | R.DataTypeImm):
            return e.value
        assert isinstance(e, GlobalVar | R.ExternFunc), f"not a leaf: {e!r}"
        return e

    def value(self, e, env):
        if isinstance(e, R.If):
            return self.seq(e.true_branch if self.arg(e.cond, env) else e.false_branch, env)
        if isinstance(e, R.TupleGetItem):
            return self.arg(e.tuple_value, env)[e.index]
        if isinstance(e, R.Call):
            return self.call(e, env)
        return self.arg(e, env)

    def kernel(self, gv, args):
        self.lib[gv.name_hint](*args)
        return None

    def call(self, call, env):
        op = call.op
        if isinstance(op, GlobalVar):
            args = [self.arg(a, env) for a in call.args]
            if isinstance(self.mod[op], tir.PrimFunc):
                return self.kernel(op, args)
            return self.call_relax(op, args)
        if isinstance(op, R.ExternFunc):
            assert op.global_symbol.startswith("vm.builtin."), op.global_symbol
            builtin = BUILTINS[op.global_symbol.removeprefix("vm.builtin.")]
            return builtin(*[self.arg(a, env) for a in call.args])
        name = op.name
        if name == "relax.vm.kill_object":
            assert isinstance(call.args[0], R.Var)
            env[call.args[0]] = KILLED
            return ()
        args = [self.arg(a, env) for a in call.args]
        if name == "relax.vm.alloc_storage":
            (size,), device, dtype, scope = args
            storage = np.zeros(size, "uint8")
            self.storages.append(size)
            return storage
        if name == "relax.vm.alloc_tensor":
            storage, offset, shape, dtype = args
            nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
            assert offset + nbytes <= storage.size, "storage too small for the tensor"
            return storage[offset:offset + nbytes].view(dtype).reshape(shape)
        if name == "relax.vm.call_tir_dyn":
            gv, fields = call.args[0], args[1]
            return self.kernel(gv, [*fields[:-1], *fields[-1]])
        if name == "relax.call_builtin_with_ctx":
            return BUILTINS[args[0].global_symbol.removeprefix("vm.builtin.")](*args[1])
        raise AssertionError(f"not a form VMLoweringPipeline documents: {call!r}")


def _fail(err, what):
    raise ValueError(f"{err}: {what}")


def _check_tensor_info(x, ndim, dtype, err):
    if not isinstance(x, np.ndarray):
        _fail(err, f"expected a tensor, got {type(x).__name__}")
    if ndim != -1 and x.ndim != ndim:
        _fail(err, f"expected ndim {ndim}, got {x.ndim}")
    if dtype != "void" and str(x.dtype) != dtype:
        _fail(err, f"expected dtype {dtype}, got {x.dtype}")


def _match_shape(x, heap, ndim, *rest):
    *pairs, err = rest
    shape = x.shape if isinstance(x, np.ndarray) else tuple(x)
    for i in range(ndim):
        code, value = pairs[2 * i], pairs[2 * i + 1]
        if code == 1 and shape[i] != value:
            _fail(err, f"dimension {i} is {shape[i]}, expected {value}")
        elif code == 2:
            heap[value] = shape[i]
        elif code == 3 and shape[i] != heap[value]:
            _fail(err, f"dimension {i} is {shape[i]}, expected {heap[value]}")


def _make_shape(heap, ndim, *pairs):
    return tuple(int(heap[v]) if c == 1 else int(v) for c, v in zip(pairs[::2], pairs[1::2]))


BUILTINS = {
    "alloc_shape_heap": lambda k: np.zeros(k, "int64"),
    "check_tensor_info": _check_tensor_info,
    "check_tuple_info": lambda t, n, err: isinstance(t, tuple) and len(t) == n or _fail(err, "bad tuple"),
    "check_shape_info": lambda s, n, err: isinstance(s, tuple) and n in (-1, len(s)) or _fail(err, "shape"),
    "check_prim_value_info": lambda v, dtype, err: None,
    "check_func_info": lambda f, err: None,
    "check_dim_range": lambda x, axis, lo, hi, err: lo <= x.shape[axis] <= hi or _fail(err, "out of range"),
    "match_shape": _match_shape,
    "match_prim_value": lambda v, heap, code, value, err: _match_shape((v,), heap, 1, code, value, err),
    "make_shape": _make_shape,
    "make_prim_value": lambda heap, code, value: _make_shape(heap, 1, code, value)[0],
    "reshape": lambda x, shape: x.reshape(shape),
    "tuple_getitem": lambda t, i: t[i],
}


def _build(params, body_fn, attrs=None):
    bb = R.BlockBuilder()
    with bb.function("main", params, attrs=attrs):
        with bb.dataflow():
            out = body_fn(bb, *params)
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    return bb.get()


def _lower(mod):
    lowered = R.transform.VMLoweringPipeline()(mod)
    assert R.analysis.well_formed(lowered)
    return lowered


def _op_count(mod, name):
    return sum(1 for block in mod["main"].body.blocks for b in block.bindings
               if isinstance(b.value, R.Call) and getattr(b.value.op, "name", None) == name)


def test_mlp_matches_numpy():
    shapes = [(2, 8), (16, 8), (16,), (4, 16), (4,)]
    names = ["x", "w0", "b0", "w1", "b1"]
    params = [R.Var(n, R.TensorStructInfo(s, "float32")) for n, s in zip(names, shapes)]

    def body(bb, x, w0, b0, w1, b1):
        h = bb.emit(R.op.nn.relu(R.op.add(R.op.matmul(x, R.op.permute_dims(w0)), b0)))
        return R.op.add(R.op.matmul(h, R.op.permute_dims(w1)), b1)

    lowered = _lower(_build(params, body))
    rng = np.random.default_rng(0)
    x, w0, b0, w1, b1 = (rng.normal(size=s).astype("float32") for s in shapes)
    out = RefVM(lowered)("main", x, w0, b0, w1, b1)
    np.testing.assert_allclose(out, np.maximum(x @ w0.T + b0, 0) @ w1.T + b1, rtol=1e-5, atol=1e-5)


def test_deep_chain_reuses_two_storages():
    x = R.Var("x", R.TensorStructInfo((32, 32), "float32"))

    def body(bb, x):
        lv = x
        for i in range(19):
            lv = bb.emit(R.op.nn.relu(lv) if i % 2 else R.op.negative(lv))
        return R.op.exp(lv)

    lowered = _lower(_build([x], body))
    vm = RefVM(lowered)
    data = np.random.default_rng(1).normal(size=(32, 32)).astype("float32")
    out = vm("main", data)
    ref = data
    for i in range(19):
        ref = np.maximum(ref, 0) if i % 2 else -ref
    np.testing.assert_allclose(out, np.exp(ref), rtol=1e-6)
    # two planned storages for the 19 intermediates, one for the returned tensor
    assert vm.storages == [4096, 4096, 4096]
    assert _op_count(lowered, "relax.vm.kill_object") >= 19


def test_dynamic_batch_and_shape_errors():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 4), "float32"))
    w = R.Var("w", R.TensorStructInfo((4, 3), "float32"))
    lowered = _lower(_build([x, w], lambda bb, x, w: R.op.nn.relu(R.op.matmul(x, w))))
    vm = RefVM(lowered)
    rng = np.random.default_rng(2)
    wd = rng.normal(size=(4, 3)).astype("float32")
    for batch in (1, 5):
        xd = rng.normal(size=(batch, 4)).astype("float32")
        np.testing.assert_allclose(vm("main", xd, wd), np.maximum(xd @ wd, 0), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"param=x, annotation=R.Tensor\(\(n, 4\), dtype=\"float32\"\)"):
        vm("main", np.zeros((2, 5), "float32"), wd)
    with pytest.raises(ValueError, match="param=w.*expected dtype float32"):
        vm("main", np.zeros((2, 4), "float32"), wd.astype("float64"))


def test_composite_shapes_use_a_shape_func():
    mod = from_source('''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def twice(a: T.handle, b: T.handle, n: T.int64):
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n * 2, 4), "float32")
        for i, j in T.grid(n * 2, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi % n, vj]

    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n * 4", 4), "float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((n * 2, 4), "float32"), tir_vars=R.shape([n]))
            z = R.call_tir(cls.twice, (y,), out_sinfo=R.Tensor((n * 4, 4), "float32"), tir_vars=R.shape([n * 2]))
            R.output(z)
        return z
''')
    lowered = _lower(mod)
    assert any(gv.name_hint.startswith("shape_func") for gv in lowered.get_global_vars())
    vm = RefVM(lowered)
    for batch in (1, 3):
        xd = np.random.default_rng(batch).normal(size=(batch, 4)).astype("float32")
        np.testing.assert_allclose(vm("main", xd), np.concatenate([xd] * 4))


def test_legalized_ops_with_tir_vars():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 4), "float32"))
    w = R.Var("w", R.TensorStructInfo((4, 3), "float32"))

    def body(bb, x, w):
        both = bb.emit(R.op.concat([x, x], axis=0))  # (n * 2, 4): the matmul needs n as a scalar
        return R.op.matmul(both, w)

    vm = RefVM(_lower(_build([x, w], body)))
    xd = np.ones((2, 4), "float32")
    wd = np.ones((4, 3), "float32")
    np.testing.assert_allclose(vm("main", xd, wd), np.concatenate([xd, xd]) @ wd)


def test_tuple_outputs_and_upper_bound():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 6), "float32"))

    def body(bb, x):
        parts = bb.emit(R.op.split(x, 2, axis=1))
        a = bb.emit(R.TupleGetItem(parts, 0))
        b = bb.emit(R.TupleGetItem(parts, 1))
        return R.op.multiply(R.op.exp(a), b)

    lowered = _lower(_build([x], body, attrs={"tir_var_upper_bound": {"n": 16}}))
    vm = RefVM(lowered)
    xd = np.random.default_rng(3).normal(size=(3, 6)).astype("float32")
    np.testing.assert_allclose(vm("main", xd), np.exp(xd[:, :3]) * xd[:, 3:], rtol=1e-5)
    assert 16 * 3 * 4 in vm.storages  # planned at the upper bound of n


def test_call_tir_with_tir_vars_and_reshape():
    mod = from_source('''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def scale(a: T.handle, b: T.handle, k: T.int64):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.Cast("float32", k)

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n // 2", 2), "float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((n,), "float32"), tir_vars=R.shape([n + 1]))
            z = R.reshape(y, R.shape([n // 2, 2]))
            R.output(z)
        return z
''')
    lowered = R.transform.VMLoweringPipeline()(R.transform.LegalizeOps(skip_ops=["relax.reshape"])(mod))
    assert _op_count(lowered, "relax.vm.call_tir_dyn") == 1
    xd = np.arange(6, dtype="float32")
    np.testing.assert_allclose(RefVM(lowered)("main", xd), (xd * 7).reshape(3, 2))


def test_output_forms_print_and_parse_back():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 4), "float32"))
    lowered = _lower(_build([x], lambda bb, x: R.op.nn.relu(R.op.add(x, x))))
    assert_structural_equal(from_source(lowered.script()), lowered)


def test_reshape_becomes_a_view_and_keeps_its_storage():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 2, 4), "float32"))
    w = R.Var("w", R.TensorStructInfo((8, 3), "float32"))

    def body(bb, x, w):
        e = bb.emit(R.op.exp(x))
        flat = bb.emit(R.op.reshape(e, (n, 8)))
        h = bb.emit(R.op.matmul(flat, w))
        h2 = bb.emit(R.op.negative(h))
        return R.op.multiply(h2, h)

    lowered = _lower(_build([x, w], body))
    packed = [b.value.op.global_symbol for b in lowered["main"].body.blocks[0].bindings
              if isinstance(b.value, R.Call) and isinstance(b.value.op, R.ExternFunc)]
    assert "vm.builtin.reshape" in packed
    rng = np.random.default_rng(4)
    xd, wd = rng.normal(size=(3, 2, 4)).astype("float32"), rng.normal(size=(8, 3)).astype("float32")
    h = np.exp(xd).reshape(3, 8) @ wd
    np.testing.assert_allclose(RefVM(lowered)("main", xd, wd), -h * h, rtol=1e-5)


def test_if_on_a_symbolic_condition():
    mod = from_source('''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        n = T.int64()
        c = R.prim_value(n > 2)
        if c:
            y = R.add(x, x)
        else:
            y = R.multiply(x, x)
        return y
''')
    vm = RefVM(_lower(mod))
    for k in (2, 3):
        xd = np.arange(k, dtype="float32") + 1
        np.testing.assert_allclose(vm("main", xd), xd + xd if k > 2 else xd * xd)
