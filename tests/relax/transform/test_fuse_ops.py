"""FuseOps: Before/Expected modules in script syntax, compared structurally (TVM's test cases)."""
# ruff: noqa: E501

import pytest

from graphc import relax
from graphc.ir import assert_structural_equal
from graphc.ir.transform import PassContext
from graphc.script import from_source

PRELUDE = "from graphc.script import ir as I, tir as T, relax as R\n"

# Small hand-written tensor programs (so the tests do not depend on LegalizeOps' output).
PRIMS = {
    "exp": """
@T.prim_func(private=True)
def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("exp"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.exp(A[vi])
""",
    "exp8": """
@T.prim_func(private=True)
def exp8(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("exp"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.exp(A[vi])
""",
    "relu": """
@T.prim_func(private=True)
def relu(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("relu"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.max(A[vi], T.float32(0.0))
""",
    "add": """
@T.prim_func(private=True)
def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("add"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi] + B[vi]
""",
    "sum": """
@T.prim_func(private=True)
def sum(A: T.Buffer((4,), "float32"), B: T.Buffer((), "float32")):
    for k in range(4):
        with T.block("sum"):
            vk = T.axis.reduce(4, k)
            with T.init():
                B[()] = T.float32(0.0)
            B[()] = B[()] + A[vk]
""",
    "exp0": """
@T.prim_func(private=True)
def exp0(A: T.Buffer((), "float32"), B: T.Buffer((), "float32")):
    with T.block("exp0"):
        B[()] = T.exp(A[()])
""",
    "matmul": """
@T.prim_func(private=True)
def matmul(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    "transpose": """
@T.prim_func(private=True)
def transpose(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("transpose"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
""",
    "add2d": """
@T.prim_func(private=True)
def add2d(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vj]
""",
    "relu2d": """
@T.prim_func(private=True)
def relu2d(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj], T.float32(0.0))
""",
    "sub2d": """
@T.prim_func(private=True)
def sub2d(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("sub"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] - B[vi, vj]
""",
    "concat": """
@T.prim_func(private=True)
def concat(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("concat"):
            vi = T.axis.spatial(8, i)
            C[vi] = T.if_then_else(vi < 4, A[vi], B[vi - 4])
""",
    "split": """
@T.prim_func(private=True)
def split(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi + 4]
""",
    "opaque_copy": """
@T.prim_func(private=True)
def opaque_copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"op_pattern": 8})
    for i in range(4):
        with T.block("copy"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
""",
    "exp_n": """
@T.prim_func(private=True)
def exp_n(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("exp"):
            vi = T.axis.spatial(n, i)
            B[vi] = T.exp(A[vi])
""",
    "relu_n": """
@T.prim_func(private=True)
def relu_n(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("relu"):
            vi = T.axis.spatial(n, i)
            B[vi] = T.max(A[vi], T.float32(0.0))
""",
    "head": """
@T.prim_func(private=True)
def head(a: T.handle, b: T.handle, m: T.int64):
    n = T.int64()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (m,))
    for i in range(m):
        with T.block("head"):
            vi = T.axis.spatial(m, i)
            B[vi] = A[vi]
""",
}


CHAIN = """
@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.add, (lv0, y), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
"""

DIAMOND = """
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        lv2 = R.call_tir(cls.exp, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.add, (lv1, lv2), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
"""

MATMUL_EPILOGUE = """
@R.function
def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32"), b: R.Tensor((4,), "float32")) -> R.Tensor((4, 4), "float32"):
    cls = Module
    with R.dataflow():
        lv = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((4, 4), "float32"))
        lv1 = R.call_tir(cls.matmul, (x, lv), out_sinfo=R.Tensor((4, 4), "float32"))
        lv2 = R.call_tir(cls.add2d, (lv1, b), out_sinfo=R.Tensor((4, 4), "float32"))
        gv = R.call_tir(cls.relu2d, (lv2,), out_sinfo=R.Tensor((4, 4), "float32"))
        R.output(gv)
    return gv
"""

REDUCE_EPILOGUE = """
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.sum, (lv0,), out_sinfo=R.Tensor((), "float32"))
        gv = R.call_tir(cls.exp0, (lv1,), out_sinfo=R.Tensor((), "float32"))
        R.output(gv)
    return gv
"""

SPLIT_ADD = """
@R.function
def main(x: R.Tensor((8,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp8, (x,), out_sinfo=R.Tensor((8,), "float32"))
        t = R.call_tir(cls.split, (lv0,), out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        a = t[0]
        b = t[1]
        gv = R.call_tir(cls.add, (a, b), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
"""

SPLIT_OUTPUT = """
@R.function
def main(x: R.Tensor((8,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp8, (x,), out_sinfo=R.Tensor((8,), "float32"))
        t = R.call_tir(cls.split, (lv0,), out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        R.output(t)
    a = t[0]
    return a
"""

CONCAT = """
@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((8,), "float32"):
    cls = Module
    with R.dataflow():
        a = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        b = R.call_tir(cls.relu, (y,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.concat, (a, b), out_sinfo=R.Tensor((8,), "float32"))
        R.output(gv)
    return gv
"""

SYMBOLIC = """
@R.function
def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
    n = T.int64()
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp_n, (x,), out_sinfo=R.Tensor((n,), "float32"))
        gv = R.call_tir(cls.relu_n, (lv0,), out_sinfo=R.Tensor((n,), "float32"))
        R.output(gv)
    return gv
"""

TIR_VARS = """
@R.function
def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
    n = T.int64()
    m = T.int64()
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.head, (x,), out_sinfo=R.Tensor((m,), "float32"), tir_vars=R.shape([m]))
        gv = R.call_tir(cls.relu_n, (lv0,), out_sinfo=R.Tensor((m,), "float32"))
        R.output(gv)
    return gv
"""


def make_module(relax_text: str, *prims: str):
    """An annotated module of the named PRIMS and the Relax functions of `relax_text`."""
    text = "".join(PRIMS[p] for p in prims) + relax_text
    body = "".join("    " + line + "\n" for line in text.strip("\n").splitlines())
    mod = from_source(PRELUDE + "@I.ir_module\nclass Module:\n" + body)
    return relax.transform.AnnotateTIROpPattern()(mod)


def check(before, expected, **kwargs):
    after = relax.transform.FuseOps(**kwargs)(before)
    assert relax.analysis.well_formed(after)
    assert_structural_equal(after, expected)
    # A second run finds only opaque calls of the grouped functions: nothing changes.
    assert relax.transform.FuseOps(**kwargs)(after) is after


def test_elementwise_chain():
    before = make_module(CHAIN, "exp", "add", "relu")
    expected = make_module("""
@R.function(private=True)
def fused_exp_add_relu(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.add, (lv0, y), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv: R.Tensor((4,), "float32") = cls.fused_exp_add_relu(x, y)
        R.output(gv)
    return gv
""", "exp", "add", "relu")
    check(before, expected)


def test_diamond():
    before = make_module(DIAMOND, "exp", "add", "relu")
    expected = make_module("""
@R.function(private=True)
def fused_exp_relu_exp_add(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        lv2 = R.call_tir(cls.exp, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.add, (lv1, lv2), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv: R.Tensor((4,), "float32") = cls.fused_exp_relu_exp_add(x)
        R.output(gv)
    return gv
""", "exp", "add", "relu")
    check(before, expected)


def test_out_elementwise_fusable_takes_its_epilogue_not_its_prologue():
    # transpose (injective) feeds matmul through an out-ewise-fusable edge: it stays apart.
    before = make_module(MATMUL_EPILOGUE, "transpose", "matmul", "add2d", "relu2d")
    expected = make_module("""
@R.function(private=True)
def fused_matmul_add2d_relu2d(x: R.Tensor((4, 4), "float32"), lv: R.Tensor((4, 4), "float32"), b: R.Tensor((4,), "float32")) -> R.Tensor((4, 4), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv1 = R.call_tir(cls.matmul, (x, lv), out_sinfo=R.Tensor((4, 4), "float32"))
        lv2 = R.call_tir(cls.add2d, (lv1, b), out_sinfo=R.Tensor((4, 4), "float32"))
        gv = R.call_tir(cls.relu2d, (lv2,), out_sinfo=R.Tensor((4, 4), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32"), b: R.Tensor((4,), "float32")) -> R.Tensor((4, 4), "float32"):
    cls = Module
    with R.dataflow():
        lv = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((4, 4), "float32"))
        gv: R.Tensor((4, 4), "float32") = cls.fused_matmul_add2d_relu2d(x, lv, b)
        R.output(gv)
    return gv
""", "transpose", "matmul", "add2d", "relu2d")
    check(before, expected)


def test_out_elementwise_fusable_diamond():
    before = make_module("""
@R.function
def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32")) -> R.Tensor((4, 4), "float32"):
    cls = Module
    with R.dataflow():
        lv1 = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((4, 4), "float32"))
        lv2 = R.call_tir(cls.relu2d, (lv1,), out_sinfo=R.Tensor((4, 4), "float32"))
        gv = R.call_tir(cls.sub2d, (lv1, lv2), out_sinfo=R.Tensor((4, 4), "float32"))
        R.output(gv)
    return gv
""", "matmul", "relu2d", "sub2d")
    after = relax.transform.FuseOps()(before)
    assert [gv.name_hint for gv in after.get_global_vars()] == [
        "fused_matmul_relu2d_sub2d", "main", "matmul", "relu2d", "sub2d"]


def test_reduction_takes_its_prologue_but_not_its_epilogue():
    before = make_module(REDUCE_EPILOGUE, "exp", "sum", "exp0")
    expected = make_module("""
@R.function(private=True)
def fused_exp_sum(x: R.Tensor((4,), "float32")) -> R.Tensor((), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.sum, (lv0,), out_sinfo=R.Tensor((), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((), "float32"):
    cls = Module
    with R.dataflow():
        lv: R.Tensor((), "float32") = cls.fused_exp_sum(x)
        gv = R.call_tir(cls.exp0, (lv,), out_sinfo=R.Tensor((), "float32"))
        R.output(gv)
    return gv
""", "exp", "sum", "exp0")
    check(before, expected)


def test_split_tuple_get_item_and_add():
    before = make_module(SPLIT_ADD, "exp8", "split", "add")
    expected = make_module("""
@R.function(private=True)
def fused_exp8_split_add(x: R.Tensor((8,), "float32")) -> R.Tensor((4,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp8, (x,), out_sinfo=R.Tensor((8,), "float32"))
        t = R.call_tir(cls.split, (lv0,), out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        a: R.Tensor((4,), "float32") = t[0]
        b: R.Tensor((4,), "float32") = t[1]
        gv = R.call_tir(cls.add, (a, b), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((8,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv: R.Tensor((4,), "float32") = cls.fused_exp8_split_add(x)
        R.output(gv)
    return gv
""", "exp8", "split", "add")
    check(before, expected)


def test_tuple_valued_group_output():
    before = make_module(SPLIT_OUTPUT, "exp8", "split")
    expected = make_module("""
@R.function(private=True)
def fused_exp8_split(x: R.Tensor((8,), "float32")) -> R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp8, (x,), out_sinfo=R.Tensor((8,), "float32"))
        gv = R.call_tir(cls.split, (lv0,), out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((8,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        gv: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")) = cls.fused_exp8_split(x)
        R.output(gv)
    a: R.Tensor((4,), "float32") = gv[0]
    return a
""", "exp8", "split")
    check(before, expected)


def test_concat_takes_its_elementwise_inputs():
    before = make_module(CONCAT, "exp", "relu", "concat")
    expected = make_module("""
@R.function(private=True)
def fused_exp_relu_concat(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((8,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        a = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        b = R.call_tir(cls.relu, (y,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.concat, (a, b), out_sinfo=R.Tensor((8,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((8,), "float32"):
    cls = Module
    with R.dataflow():
        gv: R.Tensor((8,), "float32") = cls.fused_exp_relu_concat(x, y)
        R.output(gv)
    return gv
""", "exp", "relu", "concat")
    check(before, expected)


def test_symbolic_shapes_defined_by_parameters():
    before = make_module(SYMBOLIC, "exp_n", "relu_n")
    expected = make_module("""
@R.function(private=True)
def fused_exp_n_relu_n(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
    n = T.int64()
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp_n, (x,), out_sinfo=R.Tensor((n,), "float32"))
        gv = R.call_tir(cls.relu_n, (lv0,), out_sinfo=R.Tensor((n,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
    n = T.int64()
    cls = Module
    with R.dataflow():
        gv: R.Tensor((n,), "float32") = cls.fused_exp_n_relu_n(x)
        R.output(gv)
    return gv
""", "exp_n", "relu_n")
    check(before, expected)
    after = relax.transform.FuseOps()(before)
    # The grouped function has symbolic vars of its own.
    n_main = after["main"].params[0].struct_info.shape_values[0]
    n_fused = after["fused_exp_n_relu_n"].params[0].struct_info.shape_values[0]
    assert n_main is not n_fused and n_fused.name == "n"


def test_symbolic_vars_not_defined_by_parameters_become_tir_vars():
    before = make_module(TIR_VARS, "head", "relu_n")
    expected = make_module("""
@R.function(private=True)
def fused_head_relu_n(x: R.Tensor(("n",), "float32"), tir_vars: R.Shape(["m"])) -> R.Tensor(("m",), "float32"):
    n = T.int64()
    m = T.int64()
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.head, (x,), out_sinfo=R.Tensor((m,), "float32"), tir_vars=R.shape([m]))
        gv = R.call_tir(cls.relu_n, (lv0,), out_sinfo=R.Tensor((m,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
    n = T.int64()
    m = T.int64()
    cls = Module
    with R.dataflow():
        gv: R.Tensor((m,), "float32") = cls.fused_head_relu_n(x, R.shape([m]))
        R.output(gv)
    return gv
""", "head", "relu_n")
    check(before, expected)


CHAIN4 = """
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        lv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv2,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
"""


def test_max_depth_limits_group_size():
    before = make_module(CHAIN4, "relu")
    expected = make_module("""
@R.function(private=True)
def fused_relu_relu(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv: R.Tensor((4,), "float32") = cls.fused_relu_relu(x)
        gv: R.Tensor((4,), "float32") = cls.fused_relu_relu(lv)
        R.output(gv)
    return gv
""", "relu")
    with PassContext(config={"relax.FuseOps.max_depth": 2}):
        check(before, expected)
    with PassContext(config={"relax.FuseOps.max_depth": 1}):
        assert relax.transform.FuseOps()(before) is before
    whole = relax.transform.FuseOps()(before)
    assert [gv.name_hint for gv in whole.get_global_vars()] == ["fused_relu_relu_relu_relu", "main", "relu"]


def test_opt_level_zero_fuses_nothing():
    before = make_module(CHAIN4, "relu")
    assert relax.transform.FuseOps(fuse_opt_level=0)(before) is before
    with PassContext(opt_level=0):
        assert relax.transform.FuseOps()(before) is before
        assert relax.transform.FuseOps(fuse_opt_level=2)(before) is not before


@pytest.mark.parametrize("relax_text, prims", [
    # an opaque tensor program in between
    ("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.opaque_copy, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""", ("exp", "opaque_copy", "relu")),
    # an ordinary binding block: may be impure, never fused
    ("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
    gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
    return gv
""", ("exp", "relu")),
    # across dataflow blocks
    ("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(lv0)
    with R.dataflow():
        gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""", ("exp", "relu")),
    # two out-elementwise-fusable ops; an elementwise op before one
    ("""
@R.function
def main(x: R.Tensor((4, 4), "float32")) -> R.Tensor((4, 4), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.relu2d, (x,), out_sinfo=R.Tensor((4, 4), "float32"))
        lv1 = R.call_tir(cls.matmul, (lv0, x), out_sinfo=R.Tensor((4, 4), "float32"))
        gv = R.call_tir(cls.matmul, (lv1, x), out_sinfo=R.Tensor((4, 4), "float32"))
        R.output(gv)
    return gv
""", ("relu2d", "matmul")),
    # an intermediate value that is also a block output
    ("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")):
    cls = Module
    with R.dataflow():
        gv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv1 = R.call_tir(cls.relu, (gv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv0, gv1)
    return (gv0, gv1)
""", ("exp", "relu")),
    # a PrimFunc without op_pattern counts as opaque
    ("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""", ("exp", "relu", "unannotated")),
])
def test_does_not_fuse(relax_text, prims):
    before = make_module(relax_text, *[p for p in prims if p != "unannotated"])
    if "unannotated" in prims:
        for gv, func in before.items():
            if hasattr(func, "buffer_map"):
                before[gv] = func.without_attr("op_pattern")
    assert relax.transform.FuseOps()(before) is before


def test_constants_become_parameters():
    before = make_module("""
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.add, (x, R.const([1.0, 2.0, 3.0, 4.0], "float32")), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
""", "add", "relu")
    after = relax.transform.FuseOps()(before)
    fused = after["fused_add_relu"]
    assert [p.name_hint for p in fused.params] == ["x", "param_0"]
    call = after["main"].body.blocks[0].bindings[0].value
    constant = before["main"].body.blocks[0].bindings[0].value.args[1].fields[1]
    assert call.args[1] is constant
    assert relax.analysis.well_formed(after)


def test_high_level_operators_use_the_registry_pattern():
    before = from_source(PRELUDE + """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            lv0 = R.exp(x)
            gv = R.nn.relu(lv0)
            R.output(gv)
        return gv
""")
    after = relax.transform.FuseOps()(before)
    assert [gv.name_hint for gv in after.get_global_vars()] == ["fused_relax_exp_relax_nn_relu", "main"]
    assert relax.analysis.well_formed(after)
    # Legalizing afterwards lowers the grouped function's body too; FuseTIR then fuses it.
    lowered = relax.transform.FuseTIR()(relax.transform.LegalizeOps()(after))
    assert type(lowered["fused_relax_exp_relax_nn_relu"]).__name__ == "PrimFunc"


def test_primitive_functions_and_other_functions():
    before = make_module("""
@R.function(private=True)
def fused_exp_relu(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    R.func_attr({"Primitive": True})
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv0 = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.exp, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    cls = Module
    with R.dataflow():
        lv = cls.fused_exp_relu(x)
        gv = cls.helper(lv)
        R.output(gv)
    return gv
""", "exp", "relu")
    after = relax.transform.FuseOps()(before)
    assert after["fused_exp_relu"] is before["fused_exp_relu"]  # Primitive: left alone
    assert after["main"] is before["main"]  # calls of Relax functions are opaque
    assert "fused_relu_exp" in after


PACKED_PARAMS = """
@R.function
def main(x: R.Tensor((4,), "float32"), params: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32"))) -> R.Tensor((4,), "float32"):
    R.func_attr({"num_input": 1})
    cls = Module
    with R.dataflow():
        w = params[0]
        lv0 = R.call_tir(cls.exp, (w,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.add, (lv0, x), out_sinfo=R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
"""


def test_packed_parameters_are_fetched_outside_groups():
    # TVM: a TupleGetItem of a parameter after `num_input` is opaque, so it stays in main.
    after = relax.transform.FuseOps()(make_module(PACKED_PARAMS, "exp", "add"))
    assert [p.name_hint for p in after["fused_exp_add"].params] == ["w", "x"]
    without = make_module(PACKED_PARAMS.replace('    R.func_attr({"num_input": 1})\n', ""), "exp", "add")
    after = relax.transform.FuseOps()(without)
    # Otherwise the TupleGetItem joins the group, which then takes the field it reads.
    assert [p.name_hint for p in after["fused_exp_add"].params] == ["params_0", "x"]
    assert relax.analysis.well_formed(after)
