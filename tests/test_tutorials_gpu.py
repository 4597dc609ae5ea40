"""The tutorials' GPU cells, run through graphc's GPU back ends.

OpenCL kernels run on the machine's OpenCL platform (PoCL on a CPU-only machine) and are
checked against numpy; CUDA kernels are printed and compiled by NVRTC to cubins for sm_80 and
sm_90. Sources: ../shared/reference/te_schedules_in_depth.md (cells 10, 21, 22, 24-26),
tensor_ir_blitz_course.rst ("Transform to a GPU program"), compiler_workflow_notes.md.
"""

import os
import sys

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.target.intrin import _RULES

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "target"))
import gpu_programs as P  # noqa: E402


def _sigmoid_schedule():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: te.sigmoid(A[i]), name="B")
    schedule = te.create_schedule(B.op)
    num_thread = 64
    bx, tx = schedule[B].split(B.op.axis[0], factor=num_thread)
    schedule[B].bind(bx, te.thread_axis("blockIdx.x"))
    schedule[B].bind(tx, te.thread_axis("threadIdx.x"))
    return schedule, A, B


def test_in22_lower_shows_launched_threads_and_the_likely_guard():
    schedule, A, B = _sigmoid_schedule()
    text = graphc.lower(schedule, [A, B], simple_mode=True).script()
    assert 'T.launch_thread("blockIdx.x", (n + 63) // 64)' in text
    assert 'T.launch_thread("threadIdx.x", 64)' in text
    assert "if T.likely(i_0 * 64 + i_1 < n):" in text


def test_in23_sigmoid_opencl_source_and_run():
    dev = P.opencl_device()
    schedule, A, B = _sigmoid_schedule()
    fopencl = graphc.build(schedule, [A, B], "opencl", name="mysigm")
    source = fopencl.imported_modules[0].get_source()
    print(source)
    assert "__kernel void mysigm_kernel(" in source
    assert "get_group_id(0)" in source and "get_local_id(0)" in source and "exp(" in source
    # the bound check is split: full blocks run without the per-thread test
    assert source.count("if (") == 2 and "} else {" in source
    for size in (100, 128, 1):
        a = np.linspace(-5, 5, size, dtype="float32")
        ta, tb = graphc.nd.array(a, dev), graphc.nd.empty((size,), "float32", dev)
        fopencl["mysigm"](ta, tb)
        np.testing.assert_allclose(tb.numpy(), 1 / (1 + np.exp(-a)), rtol=1e-6)


def test_in23_sigmoid_cuda_source_and_cubins():
    P.require_nvrtc()
    schedule, A, B = _sigmoid_schedule()
    for arch in ("sm_80", "sm_90"):
        fcuda = graphc.build(schedule, [A, B], f"cuda -arch={arch}", name="mysigm")
        code = fcuda.imported_modules[0]
        assert 'extern "C" __global__ void __launch_bounds__(64) mysigm_kernel(' in code.get_source()
        assert "blockIdx.x" in code.get_source() and "threadIdx.x" in code.get_source()
        assert f".target {arch}" in code.get_source("ptx")
        assert code.code.binaries[arch][:4] == b"\x7fELF"
        assert code.kernel_info["mysigm_kernel"][arch]["spill_stores"] == 0


def mylog(x):
    """customized log intrinsic function"""
    return tir.call_intrin(x.dtype, "tir.mylog", x)


def opencl_mylog_rule(op):
    """OpenCL lowering rule for log"""
    if op.dtype == "float32":
        return tir.call_pure_extern("float32", "log", op.args[0])
    else:
        return op


def cuda_mylog_rule(op):
    """CUDA lowering rule for log (the CUDA twin of the notebook's rule)"""
    if op.dtype == "float32":
        return tir.call_pure_extern("float32", "logf", op.args[0])
    else:
        return op


@pytest.fixture(scope="module")
def mylog_rules():
    saved = {key: list(rules) for key, rules in _RULES.items()}
    graphc.ir.register_op_attr("tir.mylog", "TCallEffectKind", tir.CallEffectKind.Pure)
    graphc.ir.register_intrin_lowering("tir.mylog", target="opencl", f=opencl_mylog_rule, level=99,
                                       override=True)
    graphc.ir.register_intrin_lowering("tir.mylog", target="cuda", f=cuda_mylog_rule, level=99,
                                       override=True)
    yield
    _RULES.clear()
    _RULES.update(saved)


def _mylog_schedule():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: mylog(A[i]), name="B")
    schedule = te.create_schedule(B.op)
    num_thread = 64
    bx, tx = schedule[B].split(B.op.axis[0], factor=num_thread)
    schedule[B].bind(bx, te.thread_axis("blockIdx.x"))
    schedule[B].bind(tx, te.thread_axis("threadIdx.x"))
    return schedule, A, B


def test_in26_custom_intrinsic_on_opencl(mylog_rules):
    dev = P.opencl_device()
    schedule, A, B = _mylog_schedule()
    fopencl = graphc.build(schedule, [A, B], "opencl", name="mykernel")
    source = fopencl.imported_modules[0].get_source()
    assert "__kernel void mykernel_kernel(" in source and " = log(A[" in source
    a = np.linspace(0.5, 8, 200, dtype="float32")
    ta, tb = graphc.nd.array(a, dev), graphc.nd.empty((200,), "float32", dev)
    fopencl["mykernel"](ta, tb)
    np.testing.assert_allclose(tb.numpy(), np.log(a), rtol=1e-6)


def test_in26_custom_intrinsic_on_cuda(mylog_rules):
    P.require_nvrtc()
    schedule, A, B = _mylog_schedule()
    fcuda = graphc.build(schedule, [A, B], "cuda", name="mykernel")
    assert " = logf(A[" in fcuda.imported_modules[0].get_source()


def test_in10_bound_elementwise_runs_on_opencl():
    dev = P.opencl_device()
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    C = te.compute((m, n), lambda i, j: A[i, j] * B[i, j], name="C")
    schedule = te.create_schedule([C.op])
    co, ci = schedule[C].split(C.op.axis[0], factor=64)
    schedule[C].bind(co, te.thread_axis("blockIdx.x"))
    schedule[C].bind(ci, te.thread_axis("threadIdx.x"))
    text = graphc.lower(schedule, [A, B, C], simple_mode=True).script()
    assert 'T.launch_thread("blockIdx.x", (m + 63) // 64)' in text and "for j in range(n):" in text
    lib = graphc.build(schedule, [A, B, C], "opencl")
    for shape in ((37, 21), (64, 16)):
        a, b = np.random.rand(*shape).astype("float32"), np.random.rand(*shape).astype("float32")
        ta, tb, tc = (graphc.nd.array(x, dev) for x in (a, b, np.zeros(shape, "float32")))
        lib["main"](ta, tb, tc)
        np.testing.assert_allclose(tc.numpy(), a * b, rtol=1e-6)


def test_in21_split_and_bind_on_reduce_axis_runs_on_opencl():
    """"It is also possible to perform split and bind on reduce axis": a cross-thread reduction."""
    dev = P.opencl_device()
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    schedule = te.create_schedule(B.op)
    ko, ki = schedule[B].split(B.op.reduce_axis[0], factor=16)
    schedule[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
    schedule[B].bind(ki, te.thread_axis("threadIdx.x"))
    lib = graphc.build(schedule, [A, B], "opencl")
    assert "red_buf" in lib.imported_modules[0].get_source()
    for shape in ((5, 37), (3, 32), (2, 1)):
        a = np.random.rand(*shape).astype("float32")
        tb = graphc.nd.array(np.full(shape[0], 99.0, "float32"), dev)
        lib["main"](graphc.nd.array(a, dev), tb)
        np.testing.assert_allclose(tb.numpy(), a.sum(axis=1), rtol=1e-5)


def _blitz_schedule():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    block_b = sch.get_block("B")
    (i,) = sch.get_loops(block_b)
    i_0, i_1, i_2 = sch.split(i, factors=[2, 2, 2])
    sch.reorder(i_0, i_2, i_1)
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_2, "threadIdx.x")
    return sch


def test_blitz_course_gpu_program_on_opencl():
    """The blitz course's `cuda_mod(cuda_a, cuda_b)`, on OpenCL (no GPU here)."""
    ctx = P.opencl_device()
    sch = _blitz_schedule()
    assert 'T.thread_binding(2, thread="blockIdx.x")' in sch.mod.script()
    opencl_mod = graphc.build(sch.mod, target="opencl")
    opencl_a = graphc.nd.array(np.arange(8).astype("float32"), ctx)
    opencl_b = graphc.nd.array(np.zeros((8,)).astype("float32"), ctx)
    opencl_mod(opencl_a, opencl_b)
    np.testing.assert_array_equal(opencl_b.numpy(), np.arange(1, 9, dtype="float32"))
    assert str(opencl_a) == str(np.arange(8).astype("float32"))


def test_blitz_course_gpu_program_for_cuda():
    P.require_nvrtc()
    cuda_mod = graphc.build(_blitz_schedule().mod, target="cuda")
    assert "main_kernel" in cuda_mod.imported_modules[0].get_source()
    if graphc.cuda(0).exist:  # a machine with a GPU runs it too
        ctx = graphc.cuda(0)
        cuda_a = graphc.nd.array(np.arange(8).astype("float32"), ctx)
        cuda_b = graphc.nd.array(np.zeros((8,)).astype("float32"), ctx)
        cuda_mod(cuda_a, cuda_b)
        np.testing.assert_array_equal(cuda_b.numpy(), np.arange(1, 9, dtype="float32"))
