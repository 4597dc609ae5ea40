"""The TensorIR passes for GPUs, one by one, on small programs written in script syntax."""

import pytest

from graphc import tir
from graphc.errors import CodegenError, ScheduleError, VerifyError
from graphc.script import from_source
from graphc.tir.functor import post_order_visit
from graphc.tir.transform import lower_primfunc
from graphc.tir.transform.inject_thread_sync import inject_thread_sync
from graphc.tir.transform.lower_cross_thread_reduction import lower_cross_thread_reduction
from graphc.tir.transform.lower_thread_allreduce import lower_thread_allreduce
from graphc.tir.transform.lower_thread_binding import lower_thread_binding
from graphc.tir.transform.split_host_device import split_host_device
from graphc.tir.transform.thread_guard_partition import partition_thread_guard
from graphc.tir.transform.verify_gpu_code import verify_gpu_code


def _body_text(func) -> str:
    return func.script().split("\n", 4)[4]


def _count(stmt, pred) -> int:
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if pred(n) else None)
    return len(found)


def _syncs(func) -> int:
    return _count(func.body, lambda n: isinstance(n, tir.Call) and n.op == "tir.tvm_storage_sync")


def test_thread_binding_becomes_launched_threads_and_vthread_a_loop():
    f = from_source('''
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    for i0 in T.thread_binding(2, thread="blockIdx.x"):
        for v in T.thread_binding(2, thread="vthread"):
            for i1 in T.thread_binding(1, 33, thread="threadIdx.x"):
                A[i0 * 64 + v * 32 + i1 - 1] = T.float32(1)
''')
    assert _body_text(lower_thread_binding(f)) == '''\
    i0 = T.launch_thread("blockIdx.x", 2)
    for v in range(2):
        i1 = T.launch_thread("threadIdx.x", 32)
        A[i0 * 64 + v * 32 + (i1 + 1) - 1] = T.float32(1.0)'''
    assert lower_thread_binding(lower_thread_binding(f)).body is not None  # lowering twice is harmless


ROW_SUM = '''
@T.prim_func
def main(A: T.Buffer((4, 100), "float32"), B: T.Buffer((4,), "{scope}float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k1 in T.thread_binding(32, thread="threadIdx.x"):
            for k0 in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(100, k0 * 32 + k1)
                    T.where(k0 * 32 + k1 < 100)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
'''


def test_cross_thread_reduction_folds_in_thread_then_across_threads():
    g = lower_cross_thread_reduction(from_source(ROW_SUM.format(scope="")))
    names = []
    post_order_visit(g.body, lambda s: names.append(s.name_hint) if isinstance(s, tir.Block) else None)
    assert names[:4] == ["B_in_thread_init", "B_in_thread", "B_cross_thread", "B_write_back"]
    text = g.script()
    assert 'T.tvm_thread_allreduce("sum", B_in_thread[0], T.bool(True), B_cross_thread[0], k1)' in text
    assert "T.where(k1 == 0)" in text  # one thread writes the result
    assert 'B_in_thread = T.alloc_buffer((1,), scope="local")' in text


def test_cross_thread_reduction_hoists_threads_outside_serial_loops():
    f = from_source(ROW_SUM.format(scope="").replace(
        "for k1 in T.thread_binding(32, thread=\"threadIdx.x\"):\n            for k0 in range(4):",
        "for k0 in range(4):\n            for k1 in T.thread_binding(32, thread=\"threadIdx.x\"):"))
    loops = []
    post_order_visit(lower_cross_thread_reduction(f).body,
                     lambda s: loops.append(s.loop_var.name) if isinstance(s, tir.For) else None)
    assert loops[::-1] == ["i", "k1", "k0"]


def test_cross_thread_reduction_rejects_spatial_loops_inside():
    f = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for k in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
''')
    with pytest.raises(ScheduleError, match="spatial loop i lies inside the reduce loop k"):
        lower_cross_thread_reduction(f)


def test_allreduce_lowers_to_a_tree_or_to_shuffles():
    lowered = lower_primfunc(from_source(ROW_SUM.format(scope="")))
    tree = lower_thread_allreduce(lowered, warp_size=1)
    assert _syncs(tree) == 7 and "shared" in tree.script()  # store, 5 steps of 32 -> 1, result
    shuffles = lower_thread_allreduce(lowered, warp_size=32)
    assert _syncs(shuffles) == 0 and shuffles.script().count("tvm_warp_shuffle_down") == 5


def test_inject_thread_sync_read_after_write_and_across_iterations():
    f = from_source('''
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((64,), "float32")):
    tx = T.launch_thread("threadIdx.x", 64)
    S = T.allocate([64], "float32", "shared")
    S_1 = T.Buffer((64,), "float32", data=S, scope="shared")
    L = T.allocate([1], "float32", "local")
    L_1 = T.Buffer((1,), "float32", data=L, scope="local")
    L_1[0] = T.float32(0)
    for k in range(4):
        S_1[tx] = A[k * 64 + tx]
        L_1[0] = L_1[0] + S_1[63 - tx]
    if tx < 32:
        S_1[tx] = S_1[tx + 32]
    B[tx] = L_1[0]
''')
    g = inject_thread_sync(f)
    text = _body_text(g)
    # before the read of another thread's element, and at the end of each iteration (the next
    # one overwrites what others may still read, and so does the guarded copy after the loop)
    assert _syncs(g) == 2
    assert text.index("S_1[tx] = A") < text.index("tvm_storage_sync") < text.index("S_1[63 - tx]")
    guarded = text[text.index("if tx < 32"):]
    assert "tvm_storage_sync" not in guarded


def _launched(extent_y=1, shared=64):
    return from_source(f'''
@T.prim_func
def main(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    bx = T.launch_thread("blockIdx.x", (n + 63) // 64)
    ty = T.launch_thread("threadIdx.y", {extent_y})
    tx = T.launch_thread("threadIdx.x", 64)
    S = T.allocate([{shared}], "float32", "shared")
    S_1 = T.Buffer(({shared},), "float32", data=S, scope="shared")
    if T.likely(bx * 64 + tx < n):
        A[bx * 64 + tx] = S_1[tx]
''').with_attr("global_symbol", "k")


def test_split_host_device_launch_and_kernel_parameters():
    host, kernels = split_host_device(_launched())
    (launch,) = [n for n in [host.body.value]]
    assert launch.op == "tir.device_launch" and launch.args[0].value == "k_kernel"
    assert str(launch.args[2]) == "(n + 63) // 64" and launch.args[6].value == 1
    (kernel,) = kernels
    assert [p.name for p in kernel.params] == ["A", "n"]
    assert kernel.attrs["kernel_written"] == ["A"] and kernel.attrs["kernel_nonneg"] == ["n"]
    assert host.attrs["tir.device_written"] == ["A"]


def test_split_host_device_rejects_unbound_work():
    f = from_source('''
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = T.float32(0)
''').with_attr("global_symbol", "zeros")
    with pytest.raises(CodegenError, match=r"zeros: buffer A is accessed outside any loop bound .*Did you"):
        split_host_device(f)


def test_partition_skips_guards_around_barriers():
    f = _launched()
    assert partition_thread_guard(f).body is not f.body
    g = from_source('''
@T.prim_func
def main(A: T.Buffer((100,), "float32")):
    tx = T.launch_thread("threadIdx.x", 128)
    if T.likely(tx < 100):
        T.evaluate(T.tvm_storage_sync("shared"))
        A[tx] = T.float32(0)
''')
    assert partition_thread_guard(g) is g


def test_verify_gpu_code_limits():
    assert verify_gpu_code(_launched(extent_y=4), 1024, 49152) == {"threads": 256, "shared_bytes": 256}
    with pytest.raises(VerifyError, match="uses 2048 threads per block .*threadIdx.x=64 \\* threadIdx.y=32"):
        verify_gpu_code(_launched(extent_y=32), 1024, 49152)
    with pytest.raises(VerifyError, match="allocates 65536 bytes of shared memory per block, more than the "
                                          "target allows \\(49152\\)"):
        verify_gpu_code(_launched(shared=16384), 1024, 49152)


def test_no_barrier_inside_a_scope_narrower_than_the_launch():
    """The code generator guards a 32-thread scope of a 64-thread kernel: no barrier may go inside."""
    f = from_source('''
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    bx = T.launch_thread("blockIdx.x", 1)
    S = T.allocate([64], "float32", "shared")
    S_1 = T.Buffer((64,), "float32", data=S, scope="shared")
    with T.launch_thread("threadIdx.x", 64) as tx:
        S_1[tx] = A[tx]
    with T.launch_thread("threadIdx.x", 32) as tx_1:
        for k in range(2):
            S_1[tx_1 * 2 + k] = S_1[tx_1 * 2 + k] + S_1[63 - tx_1]
            B[tx_1] = S_1[tx_1]
''')
    g = inject_thread_sync(f)
    assert _syncs(g) == 1  # between the two scopes, none in the narrow one's loop
    narrow = g.script()[g.script().index('T.launch_thread("threadIdx.x", 32)'):]
    assert "tvm_storage_sync" not in narrow
