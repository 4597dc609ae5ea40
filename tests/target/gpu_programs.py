"""Hand-scheduled GPU tensor programs and the helpers that run them on OpenCL and compile them
for CUDA; shared by the GPU tests (imported by name: tests/target is on sys.path)."""

import numpy as np
import pytest

import graphc
from graphc import te, tir

T = 16  # threads per axis of the 2-D tiles (16 x 16 = 256 threads per block)


def opencl_device():
    """graphc.opencl(0), or a skip naming what is missing."""
    dev = graphc.opencl(0)
    if not dev.exist:
        pytest.skip("no OpenCL platform (install PoCL: apt-get install pocl-opencl-icd)")
    return dev


def require_nvrtc():
    from graphc.target.nvrtc import nvrtc_version

    if nvrtc_version() is None:
        pytest.skip("NVRTC is not installed (pip install 'graphc[cuda]')")


def run_opencl(mod, arrays, outputs, name="main", target="opencl"):
    """Build `mod` for OpenCL, run `name` on copies of `arrays`; returns the arrays at `outputs`."""
    dev = opencl_device()
    lib = graphc.build(mod, target=target)
    tensors = [graphc.runtime.tensor(a, dev) for a in arrays]
    lib[name](*tensors)
    return [tensors[k].numpy() for k in outputs]


def check_cubins(mod, archs=("sm_80", "sm_90")):
    """Compile `mod` for each CUDA architecture; fail naming any kernel that spills registers."""
    require_nvrtc()
    usage = {}
    for arch in archs:
        lib = graphc.build(mod, target=f"cuda -arch={arch}")
        code = lib.imported_modules[0].code
        assert code.binaries[arch][:4] == b"\x7fELF", f"no cubin for {arch}"
        info = lib.imported_modules[0].kernel_info
        assert set(info) == {k["name"] for k in code.kernels}
        spills = [f"{name} ({arch}): {u[arch]['spill_stores']} bytes spill stores, {u[arch]['spill_loads']} "
                  "bytes spill loads" for name, u in info.items()
                  if u[arch]["spill_stores"] or u[arch]["spill_loads"]]
        assert not spills, "register spills: " + "; ".join(spills)
        usage[arch] = info
    return usage


def bind_spatial(sch, block, threads=128):
    """Fuse the block's loops, split by `threads`, bind to blockIdx.x / threadIdx.x."""
    loops = sch.get_loops(block)
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    bx, tx = sch.split(fused, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return bx, tx


def elementwise(n=None, m=37, dtype="float32"):
    """relu(a + b) over (n, m), n symbolic by default; one thread per element."""
    n = n if n is not None else te.var("n")
    A = te.placeholder((n, m), dtype, name="A")
    B = te.placeholder((n, m), dtype, name="B")
    C = te.compute((n, m), lambda i, j: te.max(A[i, j] + B[i, j], tir.const(0, dtype)), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    bind_spatial(sch, sch.get_block("C"))
    return sch.mod


def row_sum(n=37, m=300, threads=64):
    """B[i] = sum_k A[i, k]: a block per row, its threads reduce across with an allreduce."""
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, kk = sch.get_loops(sch.get_block("B"))
    ko, ki = sch.split(kk, [None, threads])
    sch.reorder(i, ki, ko)
    sch.bind(i, "blockIdx.x")
    sch.bind(ki, "threadIdx.x")
    return sch.mod


def matmul(M=64, N=48, K=40, dtype="float32", acc="float32"):
    """C = A @ B in 16x16 tiles: A and B tiles staged in shared memory, one accumulator per thread."""
    A = te.placeholder((M, K), dtype, name="A")
    B = te.placeholder((K, N), dtype, name="B")
    k = te.reduce_axis((0, K), "k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k].astype(acc) * B[k, j].astype(acc), axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    bi, ti = sch.split(i, [None, T])
    bj, tj = sch.split(j, [None, T])
    ko, ki = sch.split(kk, [None, T])
    sch.reorder(bi, bj, ko, ti, tj, ki)
    sch.bind(bi, "blockIdx.y")
    sch.bind(bj, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(local, bj)
    wy, wx = sch.get_loops(local)[-2:]
    sch.bind(wy, "threadIdx.y")
    sch.bind(wx, "threadIdx.x")
    for index in (0, 1):
        shared = sch.cache_read(c, index, "shared")
        sch.compute_at(shared, ko)
        fused = sch.fuse(*sch.get_loops(shared)[-2:])
        _, ty, tx = sch.split(fused, [None, T, T])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    return sch.mod


def _row_reduce_at(sch, block, row_loop, threads):
    """Move reduction `block` under the row loop and reduce each row across `threads` threads."""
    sch.compute_at(block, row_loop)
    k = sch.get_loops(block)[-1]
    ko, ki = sch.split(k, [None, threads])
    sch.reorder(ki, ko)
    sch.bind(ki, "threadIdx.x")
    sch.set_scope(block, 0, "local")


def _rows(sch, out_block, threads):
    i, j = sch.get_loops(out_block)
    jo, ji = sch.split(j, [None, threads])
    sch.bind(i, "blockIdx.x")
    sch.bind(ji, "threadIdx.x")
    return i


def softmax(n=19, m=200, threads=64):
    """Row softmax: max and sum reduced across a block's threads, exp recomputed where used."""
    A = te.placeholder((n, m), name="A")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    mx = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="row_max")
    ex = te.compute((n, m), lambda i, j: te.exp(A[i, j] - mx[i]), name="exp")
    sm = te.compute((n,), lambda i: te.sum(ex[i, k2], axis=k2), name="row_sum")
    out = te.compute((n, m), lambda i, j: ex[i, j] / sm[i], name="out")
    sch = tir.Schedule(te.create_prim_func([A, out]))
    sch.compute_inline(sch.get_block("exp"))
    row = _rows(sch, sch.get_block("out"), threads)
    _row_reduce_at(sch, sch.get_block("row_sum"), row, threads)
    _row_reduce_at(sch, sch.get_block("row_max"), row, threads)
    return sch.mod


def layer_norm(n=13, m=300, threads=128, eps=1e-5):
    """Row layer norm with scale and shift: mean and mean of squares reduced across threads."""
    X = te.placeholder((n, m), name="X")
    G = te.placeholder((m,), name="G")
    Bt = te.placeholder((m,), name="Beta")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    s1 = te.compute((n,), lambda i: te.sum(X[i, k1], axis=k1), name="sum_x")
    s2 = te.compute((n,), lambda i: te.sum(X[i, k2] * X[i, k2], axis=k2), name="sum_xx")

    def norm(i, j):
        mean = s1[i] / float(m)
        var = s2[i] / float(m) - mean * mean
        return (X[i, j] - mean) * te.rsqrt(var + eps) * G[j] + Bt[j]

    out = te.compute((n, m), norm, name="out")
    sch = tir.Schedule(te.create_prim_func([X, G, Bt, out]))
    row = _rows(sch, sch.get_block("out"), threads)
    _row_reduce_at(sch, sch.get_block("sum_xx"), row, threads)
    _row_reduce_at(sch, sch.get_block("sum_x"), row, threads)
    return sch.mod


def transpose(n=50, m=40):
    """B = A.T through a 16x16 shared tile: coalesced reads of A rows, coalesced writes of B rows."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((m, n), lambda j, i: A[i, j], name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    b = sch.get_block("B")
    j, i = sch.get_loops(b)
    bj, tj = sch.split(j, [None, T])
    bi, ti = sch.split(i, [None, T])
    sch.reorder(bj, bi, tj, ti)
    sch.bind(bj, "blockIdx.y")
    sch.bind(bi, "blockIdx.x")
    sch.bind(tj, "threadIdx.y")
    sch.bind(ti, "threadIdx.x")
    tile = sch.cache_read(b, 0, "shared")
    sch.compute_at(tile, bi)
    ty, tx = sch.get_loops(tile)[-2:]
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


def softmax_ref(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layer_norm_ref(x, g, b, eps=1e-5):
    mean = x.mean(axis=1, keepdims=True)
    var = (x * x).mean(axis=1, keepdims=True) - mean * mean
    return (x - mean) / np.sqrt(var + eps) * g + b
