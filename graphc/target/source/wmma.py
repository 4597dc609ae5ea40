"""The warp-wide 16x16x16 tensor-core intrinsics (`tir.wmma_*`, graphc/tir/tensor_intrin.py) in
CUDA C and, emulated, in OpenCL C.

Each call names a 16 x 16 tile by the (flattened) loads of its first and last elements; the
row stride of the tile's buffer is `(last - first - 15) / 15`.

- CUDA: a fragment buffer of `n` elements is an array of `n / 256` fragments of 8 registers
  (`unsigned` pairs of float16 for "wmma.matrix_a/b", `float` for "wmma.accumulator"); the tile
  at element offset `o` of a buffer with rows of `W` is fragment `(o / W / 16) * (W / 16) + (o %
  W) / 16`. The calls become the PTX instructions `wmma.load.{a,b}.sync.aligned.row.m16n16k16.f16`
  (`.col` for a B read as `[j, k]`), `wmma.mma.sync.aligned.row.{row,col}.m16n16k16.f32.f32` and
  `wmma.store.d.sync.aligned.row.m16n16k16.f32`; with bfloat16 tiles `....m16n16k16.bf16` loads
  (fragments of 4 registers, the first half of their 8) and `....f32.bf16.bf16.f32` products
  (what `nvcuda::wmma`'s functions compile to; no header is needed, and the register layout of
  a fragment is never looked at). Tiles in memory must start 32-byte aligned with a stride a
  multiple of 8 elements (16-bit) or 4 (32-bit): shared arrays of kernels that use them are
  declared `__align__(32)`.
- OpenCL: no tensor cores. Each work item keeps whole fragments (a private float array laid
  out like the buffer), loads and multiplies them itself, and the 32 lanes of a warp (work items
  with consecutive linear ids) share each store, every lane writing every 32nd element. The
  tiling, staging, fragment indexing and epilogue of a tensorized schedule thus run on PoCL.
"""

from __future__ import annotations

from ...errors import CodegenError
from ...tir import expr as tir_expr
from ...tir.expr import floordiv, floormod

WMMA_SCOPES = ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator")
OPS = ("tir.wmma_fill", "tir.wmma_load_a", "tir.wmma_load_b", "tir.wmma_load_bt", "tir.wmma_mma",
       "tir.wmma_mma_bt", "tir.wmma_store")
TILE = 16

_REGS = ", ".join(f"%{n}" for n in range(8))


def _list(start: int, count: int = 8) -> str:
    return "{" + ", ".join(f"%{n}" for n in range(start, start + count)) + "}"


def _outs(name: str, c: str, count: int = 8) -> str:
    return ", ".join(f'"={c}"({name}[{n}])' for n in range(count))


def _ins(name: str, c: str, count: int = 8) -> str:
    return ", ".join(f'"{c}"({name}[{n}])' for n in range(count))


CUDA_HELPERS = "".join([
    *(f"""static __device__ __forceinline__ void gc_wmma_load_{name}(unsigned* f, const unsigned short* p,
                                                               int ldm) {{
  asm volatile("wmma.load.{w}.sync.aligned.{layout}.m16n16k16.f16 {{{_REGS}}}, [%8], %9;"
               : {_outs("f", "r")} : "l"(p), "r"(ldm) : "memory");
}}
""" for name, w, layout in (("a", "a", "row"), ("b", "b", "row"), ("bt", "b", "col"))),
    *(f"""static __device__ __forceinline__ void gc_wmma_{name}(float* d, const unsigned* a,
                                                          const unsigned* b, const float* c) {{
  asm volatile("wmma.mma.sync.aligned.row.{layout}.m16n16k16.f32.f32 "
               "{_list(0)}, {_list(8)}, {_list(16)}, {_list(24)};"
               : {_outs("d", "f")} : {_ins("a", "r")}, {_ins("b", "r")}, {_ins("c", "f")});
}}
""" for name, layout in (("mma", "row"), ("mma_bt", "col"))),
    # bfloat16 (sm_80+): an A or B fragment is 4 registers of bfloat16 pairs
    *(f"""static __device__ __forceinline__ void gc_wmma_load_{name}_bf16(unsigned* f,
                                                                    const unsigned short* p, int ldm) {{
  asm volatile("wmma.load.{w}.sync.aligned.{layout}.m16n16k16.bf16 {_list(0, 4)}, [%4], %5;"
               : {_outs("f", "r", 4)} : "l"(p), "r"(ldm) : "memory");
}}
""" for name, w, layout in (("a", "a", "row"), ("b", "b", "row"), ("bt", "b", "col"))),
    *(f"""static __device__ __forceinline__ void gc_wmma_{name}_bf16(float* d, const unsigned* a,
                                                               const unsigned* b, const float* c) {{
  asm volatile("wmma.mma.sync.aligned.row.{layout}.m16n16k16.f32.bf16.bf16.f32 "
               "{_list(0)}, {_list(8, 4)}, {_list(12, 4)}, {_list(16)};"
               : {_outs("d", "f")} : {_ins("a", "r", 4)}, {_ins("b", "r", 4)}, {_ins("c", "f")});
}}
""" for name, layout in (("mma", "row"), ("mma_bt", "col"))),
    f"""static __device__ __forceinline__ void gc_wmma_store(float* p, const float* f, int ldm) {{
  asm volatile("wmma.store.d.sync.aligned.row.m16n16k16.f32 [%0], {_list(1)}, %9;"
               :: "l"(p), {_ins("f", "f")}, "r"(ldm) : "memory");
}}
""",
])


def uses_wmma(func) -> bool:
    """Whether a kernel calls a tensor-core intrinsic."""
    from ...tir.functor import StmtExprVisitor

    found = []

    class _Find(StmtExprVisitor):
        def visit_Call(self, op):
            if op.op in OPS:
                found.append(op)
            super().visit_Call(op)

    _Find().visit_stmt(func.body)
    return bool(found)


def declare(cg, op, count: int) -> None:
    """Declare fragment buffer `op` (an Allocate of `count` elements) in the current kernel."""
    name = cg.bind_name(op.buffer_var)
    cg.pointer_dtypes[op.buffer_var] = op.dtype
    cg.pointer_scopes[op.buffer_var] = op.scope
    if count % (TILE * TILE):
        raise CodegenError(f"{cg.func_name}: fragment buffer {op.buffer_var.name} holds {count} elements, "
                           "not whole 16 x 16 tiles")
    if cg.d.name == "cuda":
        elem = "float" if op.scope == "wmma.accumulator" else "unsigned"
        cg.line(f"{elem} {name}[{count // (TILE * TILE) * 8}];")
    elif cg.d.name == "opencl":
        cg.line(f"float {name}[{count}];")
    else:
        raise CodegenError(f"{cg.func_name}: {op.scope} fragments need a GPU target")
    cg.stmt(op.body)


def _tile(cg, load) -> tuple:
    """(buffer, flattened start index, row stride) of the tile named by two loads."""
    first, last = load
    if not (isinstance(first, tir_expr.BufferLoad) and isinstance(last, tir_expr.BufferLoad)
            and first.buffer.data is last.buffer.data and len(first.indices) == len(last.indices) == 1):
        raise CodegenError(f"{cg.func_name}: a tensor-core intrinsic names its tiles by flattened loads of "
                           "their first and last elements (run graphc.lower)")
    start = cg.analyzer.simplify(first.indices[0])
    stride = cg.analyzer.simplify(floordiv(last.indices[0] - first.indices[0] - (TILE - 1), TILE - 1))
    return first.buffer, start, stride


def _fragment(cg, tile) -> str:
    """CUDA: the pointer to the 8 registers of the fragment at `tile`."""
    buf, start, stride = tile
    tiles_per_row = floordiv(stride, TILE)
    index = floordiv(floordiv(start, stride), TILE) * tiles_per_row + floordiv(floormod(start, stride), TILE)
    return f"({cg.e_Var(buf.data)} + ({cg.expr(cg.analyzer.simplify(index * 8))}))"


def _memory(cg, tile) -> tuple:
    buf, start, stride = tile
    return f"({cg.pointer(buf)} + {cg.expr(start)})", cg.expr(stride)


def _element(cg, tile, row: str, col: str) -> str:
    """OpenCL: the element (row, col) of `tile`."""
    buf, start, stride = tile
    return f"{cg.pointer(buf)}[{cg.expr(start)} + ({row}) * {cg.expr(stride)} + ({col})]"


def _suffix(dtype: str) -> str:
    """The helper suffix of an input dtype: float16 none, bfloat16 `_bf16`."""
    if dtype == "bfloat16":
        return "_bf16"
    if dtype == "float16":
        return ""
    raise CodegenError(f"tensor-core tiles of {dtype}: the WMMA intrinsics take float16 or bfloat16")


def emit(cg, call) -> None:
    """Print one `tir.wmma_*` call as a statement."""
    args = call.args
    tiles = [_tile(cg, args[n:n + 2]) for n in range(0, len(args) - (len(args) % 2), 2)]
    if cg.d.name == "cuda":
        cg.helpers.add("wmma")
        if call.op == "tir.wmma_fill":
            value = cg.expr(args[2])
            cg.line(f"for (int gc_e = 0; gc_e < 8; ++gc_e) {_fragment(cg, tiles[0])}[gc_e] = {value};")
        elif call.op.startswith("tir.wmma_load_"):
            ptr, ldm = _memory(cg, tiles[1])
            which = call.op[len("tir.wmma_load_"):] + _suffix(tiles[1][0].dtype)
            cg.line(f"gc_wmma_load_{which}({_fragment(cg, tiles[0])}, {ptr}, {ldm});")
        elif call.op.startswith("tir.wmma_mma"):
            d, a, b, c = (_fragment(cg, t) for t in tiles)
            cg.line(f"gc_{call.op[len('tir.'):]}{_suffix(tiles[1][0].dtype)}({d}, {a}, {b}, {c});")
        else:
            ptr, ldm = _memory(cg, tiles[0])
            cg.line(f"gc_wmma_store({ptr}, {_fragment(cg, tiles[1])}, {ldm});")
        return
    if cg.d.name != "opencl":
        raise CodegenError(f"{cg.func_name}: {call.op} needs a GPU target")
    r, c = cg.new_name("gc_r"), cg.new_name("gc_c")
    rows = f"for (int {r} = 0; {r} < {TILE}; ++{r}) for (int {c} = 0; {c} < {TILE}; ++{c})"
    if call.op == "tir.wmma_fill":
        cg.line(f"{rows} {_element(cg, tiles[0], r, c)} = {cg.expr(args[2])};")
    elif call.op.startswith("tir.wmma_load_"):
        src = cg.from_storage(_element(cg, tiles[1], r, c), tiles[1][0].dtype)
        cg.line(f"{rows} {_element(cg, tiles[0], r, c)} = {src};")
    elif call.op.startswith("tir.wmma_mma"):
        k, acc = cg.new_name("gc_k"), cg.new_name("gc_acc")
        d, a, b, cc = tiles
        b_elem = _element(cg, b, c, k) if call.op.endswith("_bt") else _element(cg, b, k, c)
        cg.line(f"{rows} {{")
        cg.line(f"  float {acc} = {_element(cg, cc, r, c)};")
        cg.line(f"  for (int {k} = 0; {k} < {TILE}; ++{k}) "
                f"{acc} += {_element(cg, a, r, k)} * {b_elem};")
        cg.line(f"  {_element(cg, d, r, c)} = {acc};")
        cg.line("}")
    else:
        e = cg.new_name("gc_e")
        lane = ("(int)((get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * "
                "get_local_id(2))) % 32)")
        src = _element(cg, tiles[1], f"{e} / {TILE}", f"{e} % {TILE}")
        dst = _element(cg, tiles[0], f"{e} / {TILE}", f"{e} % {TILE}")
        cg.line(f"for (int {e} = {lane}; {e} < {TILE * TILE}; {e} += 32) {dst} = {src};")

