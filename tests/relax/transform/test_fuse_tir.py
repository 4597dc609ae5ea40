"""FuseTIR: Primitive Relax functions become one PrimFunc each (Before/Expected in script syntax),
and the fused PrimFuncs compute what the unfused call_tirs computed (built with LLVM)."""
# ruff: noqa: E501

import importlib.util
import pathlib

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.ir import assert_structural_equal
from graphc.script import from_source

PRELUDE = "from graphc.script import ir as I, tir as T, relax as R\n"

_spec = importlib.util.spec_from_file_location("_fuse_ops_cases", pathlib.Path(__file__).with_name("test_fuse_ops.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
PRIMS, make_module = _cases.PRIMS, _cases.make_module


def module_text(text: str):
    body = "".join("    " + line + "\n" for line in text.strip("\n").splitlines())
    return from_source(PRELUDE + "@I.ir_module\nclass Module:\n" + body)


def fuse(mod):
    return relax.transform.FuseTIR()(relax.transform.FuseOps()(mod))


def check(before, expected):
    after = fuse(before)
    assert relax.analysis.well_formed(after)
    for _, func in after.items():
        if isinstance(func, tir.PrimFunc):
            tir.analysis.verify_well_formed(func)
    assert_structural_equal(after, expected)
    assert relax.transform.FuseTIR()(after) is after
    return after


# --- a by-hand runner: call_tir bindings built with LLVM one by one ---------------------------


_BUILT: dict = {}


def _kernel(func):
    key = id(func)
    if key not in _BUILT:
        _BUILT[key] = (func, graphc.build(func, target="llvm"))
    return _BUILT[key][1]


def _eval_dim(expr, env) -> int:
    value = tir.functor.substitute(expr, {v: tir.const(n, v.dtype) for v, n in env.items()})
    value = tir.arith.Analyzer().simplify(value)
    assert isinstance(value, tir.IntImm), f"cannot evaluate {expr}"
    return int(value.value)


def _bind_shape(sinfo, array, env):
    values = getattr(sinfo, "shape_values", None)
    for dim, n in zip(values or (), array.shape):
        if isinstance(dim, tir.Var):
            env.setdefault(dim, n)


def run_function(mod, name, args):
    """Interpret a Relax function whose bindings are call_tirs, calls, tuples and aliases."""
    func = mod[name]
    env, values = {}, {}
    for param, arg in zip(func.params, args):
        if isinstance(param.struct_info, relax.ShapeStructInfo):
            for dim, n in zip(param.struct_info.values, arg):
                env.setdefault(dim, n)
        elif isinstance(arg, np.ndarray):
            _bind_shape(param.struct_info, arg, env)
        values[param] = arg

    def value_of(expr):
        if isinstance(expr, relax.Var):
            return values[expr]
        if isinstance(expr, relax.Constant):
            return expr.data.numpy()
        if isinstance(expr, relax.ShapeExpr):
            return tuple(_eval_dim(v, env) for v in expr.values)
        if isinstance(expr, relax.Tuple):
            return tuple(value_of(f) for f in expr.fields)
        if isinstance(expr, relax.TupleGetItem):
            return value_of(expr.tuple_value)[expr.index]
        if isinstance(expr, relax.Call) and isinstance(expr.op, relax.Op) and expr.op.name == "relax.call_tir":
            ins = [value_of(a) for a in expr.args[1].fields]
            sinfo = expr.sinfo_args[0]
            fields = sinfo.fields if isinstance(sinfo, relax.TupleStructInfo) else (sinfo,)
            outs = [np.zeros(tuple(_eval_dim(d, env) for d in f.shape_values), f.dtype) for f in fields]
            scalars = list(value_of(expr.args[2])) if len(expr.args) > 2 else []
            _kernel(mod[expr.args[0].name_hint])(*ins, *outs, *scalars)
            return tuple(outs) if isinstance(sinfo, relax.TupleStructInfo) else outs[0]
        if isinstance(expr, relax.Call) and isinstance(expr.op, graphc.ir.GlobalVar):
            return run_function(mod, expr.op.name_hint, [value_of(a) for a in expr.args])
        raise NotImplementedError(f"cannot interpret {expr!r}")

    for block in func.body.blocks:
        for binding in block.bindings:
            values[binding.var] = value_of(binding.value)
            if isinstance(values[binding.var], np.ndarray):
                _bind_shape(binding.var.struct_info, values[binding.var], env)
    return value_of(func.body.body)


def check_numerics(before, after, args):
    expected, actual = run_function(before, "main", args), run_function(after, "main", args)
    for e, a in zip(expected if isinstance(expected, tuple) else (expected,),
                    actual if isinstance(actual, tuple) else (actual,)):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)


def _rand(*shape):
    return np.random.default_rng(len(shape) + sum(shape)).normal(size=shape).astype("float32")


def block_names(func):
    names = []
    tir.functor.post_order_visit(func.body, lambda n: names.append(n.name_hint) if isinstance(n, tir.Block) else None)
    return names


# --- cases -----------------------------------------------------------------------------------


def test_elementwise_chain():
    before = make_module(_cases.CHAIN, "exp", "add", "relu")
    expected = module_text("""
@T.prim_func(private=True)
def fused_exp_add_relu(x: T.Buffer((T.int64(4),), "float32"), y: T.Buffer((T.int64(4),), "float32"), B_intermediate_1: T.Buffer((T.int64(4),), "float32")):
    T.func_attr({"tir.noalias": True})
    B_intermediate = T.alloc_buffer((T.int64(4),), "float32")
    C_intermediate = T.alloc_buffer((T.int64(4),), "float32")
    for i in range(4):
        with T.block("exp"):
            vi = T.axis.spatial(4, i)
            B_intermediate[vi] = T.exp(x[vi])
    for i in range(4):
        with T.block("add"):
            vi = T.axis.spatial(4, i)
            C_intermediate[vi] = B_intermediate[vi] + y[vi]
    for i in range(4):
        with T.block("relu"):
            vi = T.axis.spatial(4, i)
            B_intermediate_1[vi] = T.max(C_intermediate[vi], T.float32(0.0))

@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.fused_exp_add_relu, (x, y), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""")
    after = check(before, expected)
    assert [b.name for b in after["fused_exp_add_relu"].buffers] == ["x", "y", "B_intermediate_1"]
    assert block_names(after["fused_exp_add_relu"]) == ["exp", "add", "relu", "root"]
    check_numerics(before, after, [_rand(4), _rand(4) + 1])


def test_same_prim_func_twice_gets_unique_blocks_and_fresh_vars():
    before = make_module(_cases.CHAIN4, "relu")
    expected = module_text("""
@T.prim_func(private=True)
def fused_relu_relu_relu_relu(x: T.Buffer((T.int64(4),), "float32"), out: T.Buffer((T.int64(4),), "float32")):
    T.func_attr({"tir.noalias": True})
    t0 = T.alloc_buffer((T.int64(4),), "float32")
    t1 = T.alloc_buffer((T.int64(4),), "float32")
    t2 = T.alloc_buffer((T.int64(4),), "float32")
    for i in range(4):
        with T.block("relu"):
            vi = T.axis.spatial(4, i)
            t0[vi] = T.max(x[vi], T.float32(0.0))
    for i in range(4):
        with T.block("relu_1"):
            vi = T.axis.spatial(4, i)
            t1[vi] = T.max(t0[vi], T.float32(0.0))
    for i in range(4):
        with T.block("relu_2"):
            vi = T.axis.spatial(4, i)
            t2[vi] = T.max(t1[vi], T.float32(0.0))
    for i in range(4):
        with T.block("relu_3"):
            vi = T.axis.spatial(4, i)
            out[vi] = T.max(t2[vi], T.float32(0.0))

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.fused_relu_relu_relu_relu, (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""")
    after = check(before, expected)
    fused = after["fused_relu_relu_relu_relu"]
    names = [b.name for b in fused.body.block.alloc_buffers]
    assert names == ["B_intermediate", "B_intermediate_1", "B_intermediate_1_2"]  # TVM's naming
    # structural_equal ignores block names: check them here.
    assert block_names(fused) == ["relu", "relu_1", "relu_2", "relu_3", "root"]
    check_numerics(before, after, [_rand(4)])


def test_out_elementwise_fusable_with_broadcast_epilogue():
    before = make_module(_cases.MATMUL_EPILOGUE,
                         "transpose", "matmul", "add2d", "relu2d")
    expected = module_text(PRIMS["transpose"] + """
@T.prim_func(private=True)
def fused_matmul_add2d_relu2d(x: T.Buffer((T.int64(4), T.int64(4)), "float32"), lv: T.Buffer((T.int64(4), T.int64(4)), "float32"), b: T.Buffer((T.int64(4),), "float32"), out: T.Buffer((T.int64(4), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    mm = T.alloc_buffer((T.int64(4), T.int64(4)), "float32")
    biased = T.alloc_buffer((T.int64(4), T.int64(4)), "float32")
    for i, j, k in T.grid(4, 4, 4):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                mm[vi, vj] = T.float32(0.0)
            mm[vi, vj] = mm[vi, vj] + x[vi, vk] * lv[vk, vj]
    for i, j in T.grid(4, 4):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            biased[vi, vj] = mm[vi, vj] + b[vj]
    for i, j in T.grid(4, 4):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = T.max(biased[vi, vj], T.float32(0.0))

@R.function
def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32"), b: R.Tensor((4,), "float32")) -> R.Tensor((4, 4), "float32"):
    cls = Module
    with R.dataflow():
        lv = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((4, 4), "float32"))
        gv = R.call_tir(cls.fused_matmul_add2d_relu2d, (x, lv, b), out_sinfo=R.Tensor((4, 4), "float32"))
        R.output(gv)
    return gv
""")
    # The unfused transpose keeps its op_pattern annotation.
    expected["transpose"] = expected["transpose"].with_attr("op_pattern", 2)
    after = check(before, expected)
    check_numerics(before, after, [_rand(4, 4), _rand(4, 4), _rand(4)])


def test_tuple_output():
    before = make_module(_cases.SPLIT_OUTPUT, "exp8", "split")
    expected = module_text("""
@T.prim_func(private=True)
def fused_exp8_split(x: T.Buffer((T.int64(8),), "float32"), out0: T.Buffer((T.int64(4),), "float32"), out1: T.Buffer((T.int64(4),), "float32")):
    T.func_attr({"tir.noalias": True})
    e = T.alloc_buffer((T.int64(8),), "float32")
    for i in range(8):
        with T.block("exp"):
            vi = T.axis.spatial(8, i)
            e[vi] = T.exp(x[vi])
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            out0[vi] = e[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            out1[vi] = e[vi + 4]

@R.function
def main(x: R.Tensor((8,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.fused_exp8_split, (x,), out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        R.output(gv)
    a: R.Tensor((4,), "float32") = gv[0]
    return a
""")
    after = check(before, expected)
    check_numerics(before, after, [_rand(8)])


def test_tuple_intermediate_and_tuple_get_item():
    before = make_module(_cases.SPLIT_ADD, "exp8", "split", "add")
    expected = module_text("""
@T.prim_func(private=True)
def fused_exp8_split_add(x: T.Buffer((T.int64(8),), "float32"), out: T.Buffer((T.int64(4),), "float32")):
    T.func_attr({"tir.noalias": True})
    e = T.alloc_buffer((T.int64(8),), "float32")
    lo = T.alloc_buffer((T.int64(4),), "float32")
    hi = T.alloc_buffer((T.int64(4),), "float32")
    for i in range(8):
        with T.block("exp"):
            vi = T.axis.spatial(8, i)
            e[vi] = T.exp(x[vi])
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            lo[vi] = e[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            hi[vi] = e[vi + 4]
    for i in range(4):
        with T.block("add"):
            vi = T.axis.spatial(4, i)
            out[vi] = lo[vi] + hi[vi]

@R.function
def main(x: R.Tensor((8,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.fused_exp8_split_add, (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""")
    after = check(before, expected)
    check_numerics(before, after, [_rand(8)])


def test_same_buffer_read_twice():
    before = make_module("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.add, (lv0, lv0), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""", "exp", "add")
    expected = module_text("""
@T.prim_func(private=True)
def fused_exp_add(x: T.Buffer((T.int64(4),), "float32"), out: T.Buffer((T.int64(4),), "float32")):
    T.func_attr({"tir.noalias": True})
    e = T.alloc_buffer((T.int64(4),), "float32")
    for i in range(4):
        with T.block("exp"):
            vi = T.axis.spatial(4, i)
            e[vi] = T.exp(x[vi])
    for i in range(4):
        with T.block("add"):
            vi = T.axis.spatial(4, i)
            T.reads(e[vi])
            T.writes(out[vi])
            out[vi] = e[vi] + e[vi]

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.fused_exp_add, (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""")
    after = check(before, expected)
    check_numerics(before, after, [_rand(4)])


def test_symbolic_shapes():
    before = make_module(_cases.SYMBOLIC, "exp_n", "relu_n")
    expected = module_text("""
@T.prim_func(private=True)
def fused_exp_n_relu_n(p_x: T.handle, p_output0: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    x = T.match_buffer(p_x, (n,))
    out = T.match_buffer(p_output0, (n,))
    e = T.alloc_buffer((n,))
    for i in range(n):
        with T.block("exp"):
            vi = T.axis.spatial(n, i)
            e[vi] = T.exp(x[vi])
    for i in range(n):
        with T.block("relu"):
            vi = T.axis.spatial(n, i)
            out[vi] = T.max(e[vi], T.float32(0.0))

@R.function
def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
    n = T.int64()
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.fused_exp_n_relu_n, (x,), out_sinfo=R.Tensor((n,), "float32"))
        R.output(gv)
    return gv
""")
    after = check(before, expected)
    fused = after["fused_exp_n_relu_n"]
    n_main = after["main"].params[0].struct_info.shape_values[0]
    assert all(d is not n_main for b in fused.buffers for d in b.shape)  # its own symbolic var
    for n in (3, 7):
        check_numerics(before, after, [_rand(n)])


def test_symbolic_tir_vars():
    before = make_module(_cases.TIR_VARS,
                         "head", "relu_n")
    expected = module_text("""
@T.prim_func(private=True)
def fused_head_relu_n(p_x: T.handle, p_output0: T.handle, m: T.int64):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    x = T.match_buffer(p_x, (n,))
    out = T.match_buffer(p_output0, (m,))
    h = T.alloc_buffer((m,))
    for i in range(m):
        with T.block("head"):
            vi = T.axis.spatial(m, i)
            h[vi] = x[vi]
    for i in range(m):
        with T.block("relu"):
            vi = T.axis.spatial(m, i)
            out[vi] = T.max(h[vi], T.float32(0.0))

@R.function
def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
    n = T.int64()
    m = T.int64()
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.fused_head_relu_n, (x,), out_sinfo=R.Tensor((m,), "float32"), tir_vars=R.shape([m]))
        R.output(gv)
    return gv
""")
    after = check(before, expected)
    check_numerics(before, after, [_rand(6), _rand(4)])


def test_constant_parameter():
    before = make_module("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.add, (x, R.const([1.0, -2.0, 3.0, -4.0], "float32")), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""", "add", "relu")
    after = fuse(before)
    assert relax.analysis.well_formed(after)
    call = after["main"].body.blocks[0].bindings[0].value
    assert call.op.name == "relax.call_tir" and isinstance(call.args[1].fields[1], relax.Constant)
    assert [b.name for b in after["fused_add_relu"].buffers][:2] == ["x", "param_0"]
    check_numerics(before, after, [_rand(4)])


def test_hand_written_primitive_function_with_tuple_parameter():
    before = module_text(PRIMS["add"] + PRIMS["relu"] + """
@R.function(private=True)
def fused_add_relu(t: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32"))) -> R.Tensor((4,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        a = t[0]
        b = t[1]
        lv = R.call_tir(cls.add, (a, b), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv = cls.fused_add_relu((x, y))
        R.output(gv)
    return gv
""")
    after = relax.transform.FuseTIR()(before)
    assert [gv.name_hint for gv in after.get_global_vars()] == ["fused_add_relu", "main"]
    assert [b.name for b in after["fused_add_relu"].buffers] == ["t_0", "t_1", "B_intermediate"]
    call = after["main"].body.blocks[0].bindings[0].value
    assert [f.name_hint for f in call.args[1].fields] == ["x", "y"]
    check_numerics(before, after, [_rand(4), _rand(4)])


def test_unsupported_primitive_function_is_left_alone():
    before = module_text(PRIMS["relu"] + """
@R.function(private=True)
def fused_exp_relu(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv = R.exp(x)
        gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv = cls.fused_exp_relu(x)
        R.output(gv)
    return gv
""")
    assert relax.transform.FuseTIR()(before) is before


def test_module_without_primitive_functions_is_returned_as_is():
    before = make_module(_cases.CHAIN4, "relu")
    assert relax.transform.FuseTIR()(before) is before


def test_callees_still_used_elsewhere_are_kept():
    before = make_module("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(lv1)
    lv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
    return lv2
""", "exp", "relu")
    after = fuse(before)
    assert [gv.name_hint for gv in after.get_global_vars()] == ["fused_exp_relu", "main", "relu"]
    check_numerics(before, after, [_rand(4)])


@pytest.mark.parametrize("max_depth", [1, 2, 3])
def test_numerics_under_max_depth(max_depth):
    before = make_module(_cases.DIAMOND, "exp", "add", "relu")
    with graphc.ir.transform.PassContext(config={"relax.FuseOps.max_depth": max_depth}):
        after = fuse(before)
    assert relax.analysis.well_formed(after)
    check_numerics(before, after, [_rand(4)])


def test_primitive_function_returning_its_input_is_left_alone():
    before = module_text(PRIMS["relu"] + """
@R.function(private=True)
def fused_relu_pass(x: R.Tensor((4,), "float32")) -> R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        gv = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return (gv, x)
""")
    assert relax.transform.FuseTIR()(before) is before


def test_group_with_two_outputs():
    # lv0 is read inside the group and by the match_cast outside it: the group returns both.
    # (FuseTIR's canonicalization then drops the trivial match_cast, as TVM's does.)
    before = make_module("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.match_cast(lv0, R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        gv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv, gv2)
    return (gv, gv2)
""", "exp", "relu")
    expected = module_text(PRIMS["relu"] + """
@T.prim_func(private=True)
def fused_exp_relu(x: T.Buffer((T.int64(4),), "float32"), out0: T.Buffer((T.int64(4),), "float32"), out1: T.Buffer((T.int64(4),), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(4):
        with T.block("exp"):
            vi = T.axis.spatial(4, i)
            out1[vi] = T.exp(x[vi])
    for i in range(4):
        with T.block("relu"):
            vi = T.axis.spatial(4, i)
            out0[vi] = T.max(out1[vi], T.float32(0.0))

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")):
    cls = Module
    with R.dataflow():
        lv = R.call_tir(cls.fused_exp_relu, (x,), out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        gv: R.Tensor((4,), "float32") = lv[0]
        lv0: R.Tensor((4,), "float32") = lv[1]
        gv2 = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv, gv2)
    return (gv, gv2)
""")
    expected["relu"] = expected["relu"].with_attr("op_pattern", 0)
    after = check(before, expected)
    check_numerics(before, after, [_rand(4)])
