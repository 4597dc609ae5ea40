"""The WMMA tensor intrinsics (16x16x16, float16 or bfloat16 inputs, float32 accumulators),
registered for `Schedule.tensorize` on import.

| name | computes (desc) | impl |
|---|---|---|
| `wmma_fill_16x16_f32` | `C[i, j] = 0` | `tir.wmma_fill` |
| `wmma_load_16x16x16_f16_a` / `_b` | `F[i, j] = S[i, j]` (a row-major tile) | `tir.wmma_load_a` / `_b` |
| `wmma_load_16x16x16_f16_b_trans` | `F[j, k] = S[j, k]` (B read as `[j, k]`) | `tir.wmma_load_bt` |
| `wmma_sync_16x16x16_f16f16f32` | `C[i, j] += f32(A[i, k]) * f32(B[k, j])` | `tir.wmma_mma` |
| `wmma_sync_16x16x16_f16f16f32_trans` | `C[i, j] += f32(A[i, k]) * f32(B[j, k])` | `tir.wmma_mma_bt` |
| `wmma_store_16x16_f32` | `D[i, j] = C[i, j]` | `tir.wmma_store` |

The bfloat16 set (`wmma_load_16x16x16_bf16_a`, ..., `wmma_sync_16x16x16_bf16bf16f32[_trans]`,
sm_80+) has the same computations over bfloat16 tiles and calls the same `tir.wmma_*`: the code
generator picks the instruction by the dtype of the tiles. `wmma_intrinsics(dtype)` names the
set of an input dtype.

A fragment lives in a buffer of scope "wmma.matrix_a", "wmma.matrix_b" or "wmma.accumulator",
one per warp (its indices depend on the warp's thread index, never on the lane): a 32 x 32
accumulator holds four 16 x 16 fragments. Each intrinsic names a tile by the loads of its first
and last elements, so that compaction sees the whole tile and the code generator recovers the
row stride (the leading dimension) after flattening: `last - first = 15 * stride + 15`. CUDA C
prints the calls as the PTX `wmma.*.sync.aligned.m16n16k16` instructions (the operations of
`nvcuda::wmma`, without its header: the fragment layout stays opaque); OpenCL C emulates them,
each work item holding whole fragments and a warp's lanes sharing the stores
(`graphc/target/source/wmma.py`).

>>> from graphc.tir.schedule import TensorIntrin
>>> TensorIntrin.get(WMMA_SYNC).desc.buffer_map[TensorIntrin.get(WMMA_SYNC).desc.params[0]].dtype
'float16'
"""

from __future__ import annotations

from .analysis.block_access import get_block_read_write_region
from .buffer import buffer_load, decl_buffer
from .expr import BufferLoad, Range, Var, cast, const
from .function import PrimFunc
from .op import call_intrin
from .schedule.tensorize import TensorIntrin
from .stmt import Block, BlockRealize, BufferStore, Evaluate, For, ForKind, IterType, IterVar

WMMA_FILL = "wmma_fill_16x16_f32"
WMMA_LOAD_A = "wmma_load_16x16x16_f16_a"
WMMA_LOAD_B = "wmma_load_16x16x16_f16_b"
WMMA_LOAD_B_TRANS = "wmma_load_16x16x16_f16_b_trans"
WMMA_SYNC = "wmma_sync_16x16x16_f16f16f32"
WMMA_SYNC_TRANS = "wmma_sync_16x16x16_f16f16f32_trans"
WMMA_STORE = "wmma_store_16x16_f32"
WMMA_LOAD_A_BF16 = "wmma_load_16x16x16_bf16_a"
WMMA_LOAD_B_BF16 = "wmma_load_16x16x16_bf16_b"
WMMA_LOAD_B_TRANS_BF16 = "wmma_load_16x16x16_bf16_b_trans"
WMMA_SYNC_BF16 = "wmma_sync_16x16x16_bf16bf16f32"
WMMA_SYNC_TRANS_BF16 = "wmma_sync_16x16x16_bf16bf16f32_trans"
TILE = 16
INPUT_DTYPES = ("float16", "bfloat16")


def wmma_intrinsics(dtype: str) -> dict:
    """{"load_a", "load_b", "load_b_trans", "sync", "sync_trans": intrinsic name} for inputs of
    `dtype` (float16 or bfloat16)."""
    if dtype == "float16":
        names = (WMMA_LOAD_A, WMMA_LOAD_B, WMMA_LOAD_B_TRANS, WMMA_SYNC, WMMA_SYNC_TRANS)
    elif dtype == "bfloat16":
        names = (WMMA_LOAD_A_BF16, WMMA_LOAD_B_BF16, WMMA_LOAD_B_TRANS_BF16, WMMA_SYNC_BF16,
                 WMMA_SYNC_TRANS_BF16)
    else:
        raise ValueError(f"no WMMA intrinsics take {dtype} inputs (they take {' or '.join(INPUT_DTYPES)})")
    return dict(zip(("load_a", "load_b", "load_b_trans", "sync", "sync_trans"), names))


def _desc(block: str, buffers: list, kinds: str, compute) -> PrimFunc:
    """The description PrimFunc: one block `block` over 16 x 16 `buffers` ((name, dtype), the
    output last) in loops `kinds` ("SS", or "SSR" for a reduction over k), the shape
    `te.create_prim_func` gives a `te.compute` (built here from tir, which sits below te).
    `compute(buffers, iter vars)` returns the block's body and init."""
    bufs = [decl_buffer((TILE, TILE), dt, name) for name, dt in buffers]
    names = "ijk"[: len(kinds)]
    loops = [Var(n, "int32") for n in names]
    kind_of = {"S": IterType.DATA_PAR, "R": IterType.COMM_REDUCE}
    iters = [IterVar(Range(const(0), const(TILE)), Var(f"v_{n}", "int32"), kind_of[kind])
             for n, kind in zip(names, kinds)]
    body, init = compute(bufs, [iv.var for iv in iters])
    block = Block(tuple(iters), (), (), block, body, init)
    reads, writes = get_block_read_write_region(block)
    stmt = BlockRealize(tuple(loops), const(True), block.replace(reads=reads, writes=writes))
    for loop in reversed(loops):
        stmt = For(loop, const(0), const(TILE), ForKind.SERIAL, stmt)
    root = BlockRealize((), const(True), Block((), (), (), "root", stmt, None, ()))
    return PrimFunc([b.data for b in bufs], root, None, {b.data: b for b in bufs},
                    {"global_symbol": "main", "tir.noalias": True})


def _tile(buf) -> tuple:
    return (BufferLoad(buf, (const(0), const(0)), buf.dtype),
            BufferLoad(buf, (const(TILE - 1), const(TILE - 1)), buf.dtype))


def _impl(buffers: list, intrin: str, order: list, extra=()) -> PrimFunc:
    """A PrimFunc over 16 x 16 `buffers` ((name, dtype)) calling `intrin` on the tiles of
    `buffers[n]` for n in `order`, then `extra`."""
    bufs = [decl_buffer((TILE, TILE), dt, name) for name, dt in buffers]
    args = [x for n in order for x in _tile(bufs[n])]
    body = Evaluate(call_intrin("handle", intrin, *args, *extra))
    return PrimFunc([b.data for b in bufs], body, buffer_map={b.data: b for b in bufs})


def _copy(bufs, v):
    source, dest = bufs
    return BufferStore(dest, buffer_load(source, (v[0], v[1])), (v[0], v[1])), None


def _fill(bufs, v):
    return BufferStore(bufs[0], const(0.0, "float32"), (v[0], v[1])), None


def _mma(trans: bool):
    def compute(bufs, v):
        A, B, C = bufs
        i, j, k = v
        product = (cast(buffer_load(A, (i, k)), "float32")
                   * cast(buffer_load(B, (j, k) if trans else (k, j)), "float32"))
        update = BufferStore(C, buffer_load(C, (i, j)) + product, (i, j))
        return update, BufferStore(C, const(0.0, "float32"), (i, j))

    return compute


def _register() -> None:
    TensorIntrin.register(WMMA_FILL, _desc("C", [("C", "float32")], "SS", _fill),
                          _impl([("C", "float32")], "tir.wmma_fill", [0], [const(0.0, "float32")]),
                          override=True)
    for dt in INPUT_DTYPES:
        names = wmma_intrinsics(dt)
        for key, which in (("load_a", "a"), ("load_b", "b"), ("load_b_trans", "bt")):
            tiles = [("S", dt), ("F", dt)]
            TensorIntrin.register(names[key], _desc("F", tiles, "SS", _copy),
                                  _impl(tiles, f"tir.wmma_load_{which}", [1, 0]), override=True)
        operands = [("A", dt), ("B", dt), ("C", "float32")]
        TensorIntrin.register(names["sync"], _desc("C", operands, "SSR", _mma(False)),
                              _impl(operands, "tir.wmma_mma", [2, 0, 1, 2]), override=True)
        TensorIntrin.register(names["sync_trans"], _desc("C", operands, "SSR", _mma(True)),
                              _impl(operands, "tir.wmma_mma_bt", [2, 0, 1, 2]), override=True)
    TensorIntrin.register(WMMA_STORE, _desc("F", [("C", "float32"), ("F", "float32")], "SS", _copy),
                          _impl([("C", "float32"), ("D", "float32")], "tir.wmma_store", [1, 0]),
                          override=True)


_register()

__all__ = ["INPUT_DTYPES", "TILE", "WMMA_FILL", "WMMA_LOAD_A", "WMMA_LOAD_A_BF16", "WMMA_LOAD_B",
           "WMMA_LOAD_B_BF16", "WMMA_LOAD_B_TRANS", "WMMA_LOAD_B_TRANS_BF16", "WMMA_STORE", "WMMA_SYNC",
           "WMMA_SYNC_BF16", "WMMA_SYNC_TRANS", "WMMA_SYNC_TRANS_BF16", "wmma_intrinsics"]
