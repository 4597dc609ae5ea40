"""AnnotateTIROpPattern: the pattern kinds TVM derives, on PrimFuncs written in script syntax."""
# ruff: noqa: E501

import pytest

from graphc import relax
from graphc.relax.analysis.tir_op_pattern import analyze_op_pattern_kind
from graphc.relax.op.registry import OpPatternKind as K
from graphc.script import from_source

PRELUDE = "from graphc.script import ir as I, tir as T, relax as R\n"


def _func(text: str):
    return from_source(PRELUDE + text)


ELEMWISE = """
@T.prim_func
def elemwise(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1.0)
"""

BROADCAST = """
@T.prim_func
def broadcast(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16, 16, 16), "float32")):
    for i0, j0, i1, j1 in T.grid(16, 16, 16, 16):
        with T.block("B"):
            vi0, vj0, vi1, vj1 = T.axis.remap("SSSS", [i0, j0, i1, j1])
            B[vi0, vj0, vi1, vj1] = A[vj0, vj1]
"""

INJECTIVE = """
@T.prim_func
def injective(A: T.Buffer((4, 4, 4, 4), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi // 4, vj // 4, vi % 4, vj % 4]
"""

TRANSPOSE = """
@T.prim_func
def transpose(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
"""

REDUCE = """
@T.prim_func
def sum(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi, vj]
"""

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    for i, j, k in T.grid(16, 8, 32):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

MATMUL_CAST = """
@T.prim_func
def matmul(A: T.Buffer((16, 32), "float16"), B: T.Buffer((32, 8), "float16"), C: T.Buffer((16, 8), "float32")):
    for i, j, k in T.grid(16, 8, 32):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
"""

SYMBOLIC_MATMUL = """
@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    m, n, k = T.int64(), T.int64(), T.int64()
    A = T.match_buffer(a, (m, k))
    B = T.match_buffer(b, (k, n))
    C = T.match_buffer(c, (m, n))
    for i, j, r in T.grid(m, n, k):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

BIAS_ADD = """
@T.prim_func
def bias_add(A: T.Buffer((1, 1000), "float32"), B: T.Buffer((1000,), "float32"), C: T.Buffer((1, 1000), "float32")):
    for i0, i1 in T.grid(1, 1000):
        with T.block("T_add"):
            ax0, ax1 = T.axis.remap("SS", [i0, i1])
            C[ax0, ax1] = A[ax0, ax1] + B[ax1]
"""

UNIT_DIM_BROADCAST = """
@T.prim_func
def add(A: T.Buffer((1, 64, 8, 8), "float32"), B: T.Buffer((64, 1, 1), "float32"), C: T.Buffer((1, 64, 8, 8), "float32")):
    for i0, i1, i2, i3 in T.grid(1, 64, 8, 8):
        with T.block("T_add"):
            ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            C[ax0, ax1, ax2, ax3] = A[ax0, ax1, ax2, ax3] + B[ax1, 0, 0]
"""

ZERO_DIM = """
@T.prim_func
def add(A: T.Buffer((128,), "float32"), B: T.Buffer((), "float32"), C: T.Buffer((128,), "float32")):
    for i0 in range(128):
        with T.block("T_add"):
            ax0 = T.axis.spatial(128, i0)
            C[ax0] = A[ax0] + B[()]
"""

POOLING = """
@T.prim_func
def max_pool(A: T.Buffer((1, 4, 10, 10), "float32"), B: T.Buffer((1, 4, 4, 4), "float32")):
    pad = T.alloc_buffer((1, 4, 12, 12), "float32")
    for i0, i1, i2, i3 in T.grid(1, 4, 12, 12):
        with T.block("pad"):
            ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad[ax0, ax1, ax2, ax3] = T.if_then_else(1 <= ax2 and ax2 < 11 and 1 <= ax3 and ax3 < 11, A[ax0, ax1, ax2 - 1, ax3 - 1], T.float32(-3.0e38))
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 4, 4, 4, 3, 3):
        with T.block("pool"):
            ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                B[ax0, ax1, ax2, ax3] = T.float32(-3.0e38)
            B[ax0, ax1, ax2, ax3] = T.max(B[ax0, ax1, ax2, ax3], pad[ax0, ax1, ax2 * 3 + rv0, ax3 * 3 + rv1])
"""

SOFTMAX = """
@T.prim_func
def softmax(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    maxelem = T.alloc_buffer((16,), "float32")
    ex = T.alloc_buffer((16, 16), "float32")
    expsum = T.alloc_buffer((16,), "float32")
    for i, k in T.grid(16, 16):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.float32(-3.0e38)
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid(16, 16):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            ex[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid(16, 16):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0.0)
            expsum[vi] = expsum[vi] + ex[vi, vk]
    for i, j in T.grid(16, 16):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = ex[vi, vj] / expsum[vi]
"""

TWO_STORES = """
@T.prim_func
def cumsum(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    with T.block("cumsum"):
        B[0] = A[0]
        for k in range(15):
            B[k + 1] = B[k] + A[k + 1]
"""

NO_STORE = """
@T.prim_func
def no_store(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("call"):
            vi = T.axis.spatial(16, i)
            T.evaluate(0)
"""

NO_BLOCK = """
@T.prim_func
def lowered(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i]
"""

CASES = [
    (ELEMWISE, K.kElemWise),
    (BROADCAST, K.kBroadcast),
    (INJECTIVE, K.kInjective),
    (TRANSPOSE, K.kInjective),
    (REDUCE, K.kCommReduce),
    (MATMUL, K.kOutEWiseFusable),
    (MATMUL_CAST, K.kOutEWiseFusable),
    (SYMBOLIC_MATMUL, K.kOutEWiseFusable),
    (BIAS_ADD, K.kElemWise),
    (UNIT_DIM_BROADCAST, K.kElemWise),
    (ZERO_DIM, K.kElemWise),
    (POOLING, K.kOutEWiseFusable),
    (SOFTMAX, K.kOutEWiseFusable),
    (TWO_STORES, K.kOpaque),
    (NO_STORE, K.kOpaque),
    (NO_BLOCK, K.kOpaque),
]


@pytest.mark.parametrize("text, kind", CASES, ids=[c[1].name + str(i) for i, c in enumerate(CASES)])
def test_pattern_kind(text, kind):
    assert analyze_op_pattern_kind(_func(text)) == kind


def _module(*texts: str):
    body = "".join("    " + line + "\n" for t in texts for line in t.replace("@T.prim_func", "@T.prim_func(private=True)").strip().splitlines())
    return from_source(PRELUDE + "@I.ir_module\nclass Module:\n" + body)


def test_pass_sets_int_attribute_and_keeps_the_rest():
    mod = _module(ELEMWISE, MATMUL, REDUCE)
    out = relax.transform.AnnotateTIROpPattern()(mod)
    assert {gv.name_hint: out[gv].attrs["op_pattern"] for gv in out.get_global_vars()} == {
        "elemwise": 0, "matmul": 4, "sum": 3}
    assert all(type(out[gv].attrs["op_pattern"]) is int for gv in out.get_global_vars())
    assert "op_pattern" not in mod["matmul"].attrs  # the input module is not mutated


def test_existing_nonzero_pattern_is_kept_zero_is_rederived():
    mod = _module(MATMUL, REDUCE)
    mod["matmul"] = mod["matmul"].with_attr("op_pattern", 8)
    mod["sum"] = mod["sum"].with_attr("op_pattern", 0)
    out = relax.transform.AnnotateTIROpPattern()(mod)
    assert out["matmul"] is mod["matmul"]
    assert out["sum"].attrs["op_pattern"] == 3


def test_idempotent_and_copy_on_write():
    mod = _module(ELEMWISE, INJECTIVE)
    once = relax.transform.AnnotateTIROpPattern()(mod)
    assert once is not mod
    assert relax.transform.AnnotateTIROpPattern()(once) is once


def test_relax_functions_are_untouched():
    mod = from_source(PRELUDE + """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((3, 2), "float32"):
        with R.dataflow():
            lv = R.permute_dims(x, axes=None)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv
""")
    assert relax.transform.AnnotateTIROpPattern()(mod) is mod
    legal = relax.transform.LegalizeOps()(mod)
    out = relax.transform.AnnotateTIROpPattern()(legal)
    assert out["main"] is legal["main"]
    assert out["transpose"].attrs["op_pattern"] == K.kInjective
    assert out["relu"].attrs["op_pattern"] == K.kElemWise


def test_mlp_patterns_match_the_tutorial():
    mod = from_source(PRELUDE + """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w: R.Tensor((256, 784), "float32"), b: R.Tensor((256,), "float32")) -> R.Tensor((1, 256), "float32"):
        with R.dataflow():
            lv = R.permute_dims(w, axes=None)
            lv1 = R.matmul(x, lv, out_dtype="float32")
            lv2 = R.add(lv1, b)
            gv = R.nn.relu(lv2)
            R.output(gv)
        return gv
""")
    out = relax.transform.AnnotateTIROpPattern()(relax.transform.LegalizeOps()(mod))
    patterns = {gv.name_hint: out[gv].attrs.get("op_pattern") for gv in out.get_global_vars() if gv.name_hint != "main"}
    assert patterns == {"transpose": 2, "matmul": 4, "add": 0, "relu": 0}
