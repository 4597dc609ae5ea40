"""CodeGenC: lowered TensorIR as C-family source, one base for CUDA C, OpenCL C and plain C.

`CodeGenC(dialect, kind)` accumulates functions and `source()` returns the translation unit:
the dialect's prelude, the helper functions the code used, then the functions.

- `add_kernel(func)` prints a device kernel made by `SplitHostDevice` (its parameters are
  pointers then scalars, "kernel_param_dtypes" gives their types). Thread scopes read the
  dialect's thread indices; shared memory is declared at the top of the kernel (OpenCL wants it
  there); OpenCL pointers come as a buffer plus a byte offset (a view into a larger buffer).
  It returns the kernel's calling metadata for the runtime.
- `add_function(name, func)` prints a host C function for `target="c"` with the runtime's
  calling convention (`int32_t name(int64_t *slots)`, see docs/codegen.md), so the source
  compiled by any C compiler loads and runs like the LLVM back end's code.

>>> from graphc import tir
>>> from graphc.target.source.dialect import OPENCL
>>> A = tir.decl_buffer((64,), "float32", "A")
>>> tx = tir.Var("tx")
>>> iv = tir.IterVar(tir.Range(0, 64), tx, tir.IterType.THREAD_INDEX, "threadIdx.x")
>>> body = tir.AttrStmt(iv, "thread_extent", tir.const(64), tir.BufferStore(A, A[tx] * 2.0, (tx,)))
>>> kernel = tir.PrimFunc([A.data], body, attrs={"global_symbol": "twice_kernel",
...     "kernel_param_dtypes": ["float32"], "kernel_written": ["A"]})
>>> cg = CodeGenC(OPENCL, "opencl")
>>> meta = cg.add_kernel(kernel)
>>> print(cg.source().split("\\n", 2)[2])
__kernel void twice_kernel(__global float* restrict A_base, ulong A_offset) {
  __global float* restrict A = (__global float*)((__global char*)A_base + A_offset);
  A[convert_int(get_local_id(0))] = (A[convert_int(get_local_id(0))] * 2.000000000e+00f);
}
<BLANKLINE>
"""

from __future__ import annotations

import re

from ...errors import CodegenError
from ...ir.dispatch import method_table
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.arith import Analyzer
from ...tir.transform.inject_thread_sync import SHARED_SCOPES
from . import wmma
from .expr import CALLS, ExprPrinter

STACK_LIMIT_BYTES = 16 * 1024
_RESERVED = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int "
    "long register restrict return short signed sizeof static struct switch typedef union unsigned void "
    "volatile while bool true false half kernel global local private constant read_only write_only "
    "threadIdx blockIdx blockDim gridDim warpSize main min max abs exp log".split()
)


class CodeGenC(ExprPrinter):
    """Accumulates kernels (or C functions) of one dialect into one source."""

    def __init__(self, dialect, kind: str):
        self.d, self.kind = dialect, kind
        self.helpers: set = set()
        self.functions: list[str] = []
        self._expr_table = method_table(type(self), "e_")
        self._stmt_table = method_table(type(self), "s_")
        self._calls = CALLS

    # -- per-function state -----------------------------------------------------------------------
    def begin(self, name: str) -> None:
        self.func_name = name
        self.lines: list[str] = []
        self.indent = 1
        self.names: dict = {}
        self.taken: set = set()
        self.thread_vars: dict = {}
        self.pointer_dtypes: dict = {}
        self.pointer_scopes: dict = {}
        self.top: list[str] = []  # declarations at function scope (shared memory)
        self.analyzer = Analyzer()
        self.launch: dict = {}
        self.errors: list[str] = []
        self.heap_live: list[str] = []
        self.wmma = False

    def line(self, text: str) -> None:
        self.lines.append("  " * self.indent + text)

    def new_name(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit():
            base = "v_" + base
        if base in _RESERVED or base.startswith("gc_"):
            base += "_"
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def bind_name(self, var, hint: str | None = None) -> str:
        name = self.new_name(hint or var.name)
        self.names[var] = name
        return name

    def hoist(self, dtype: str, text: str) -> str:
        """`text` evaluated once into a fresh variable declared before the current statement."""
        if re.fullmatch(r"\w+", text):
            return text
        name = self.new_name("t")
        self.line(f"{self.d.type_name(dtype)} {name} = {text};")
        return name

    def bind_let(self, var, value) -> None:
        text = self.expr(value)
        if DataType(var.dtype).is_handle:
            raise CodegenError(f"{self.func_name}: pointer variable {var.name} cannot be bound in "
                               f"{self.d.name} code")
        name = self.bind_name(var)
        self.line(f"{self.d.type_name(var.dtype)} {name} = {text};")

    # -- statements ------------------------------------------------------------------------------
    def stmt(self, s) -> None:
        method = self._stmt_table[type(s)]
        if method is None:
            raise CodegenError(f"{self.func_name}: the {self.d.name} code generator cannot print "
                               f"{type(s).__name__}; run graphc.lower first (blocks must be lowered)")
        method(self, s)

    def block(self, s) -> None:
        self.indent += 1
        self.stmt(s)
        self.indent -= 1

    def s_SeqStmt(self, op) -> None:
        for s in op.seq:
            self.stmt(s)

    def s_Evaluate(self, op) -> None:
        value = op.value
        if isinstance(value, tir_expr.IntImm | tir_expr.FloatImm):
            return
        if isinstance(value, tir_expr.Call) and value.op in wmma.OPS:
            wmma.emit(self, value)
            return
        if isinstance(value, tir_expr.Call) and value.op == "tir.tvm_storage_sync":
            if not self.d.barrier:
                raise CodegenError(f"{self.func_name}: barriers need a GPU target")
            self.line(self.d.barrier)
            return
        self.line(f"{self.expr(value)};")

    def s_BufferStore(self, op) -> None:
        src = op.value
        dtype = op.buffer.dtype
        if isinstance(src, tir_expr.BufferLoad) and src.buffer.dtype == dtype and src.dtype == dtype:
            value = f"{self.pointer(src.buffer)}[{self.index(src.buffer, src.indices)}]"  # a copy: the bits
        else:
            value = self.to_storage(self.expr(op.value), op.buffer.dtype)
        self.line(f"{self.pointer(op.buffer)}[{self.index(op.buffer, op.indices)}] = {value};")

    def s_LetStmt(self, op) -> None:
        self.bind_let(op.var, op.value)
        self.stmt(op.body)

    def s_DeclBuffer(self, op) -> None:
        self.stmt(op.body)

    def s_AttrStmt(self, op) -> None:
        if op.attr_key != "thread_extent" or not isinstance(op.node, tir_stmt.IterVar):
            self.stmt(op.body)
            return
        tag = op.node.thread_tag
        if not self.d.thread_expr:
            raise CodegenError(f"{self.func_name}: {op.node.var.name} is launched as {tag}; thread bindings "
                               "need a GPU target")
        var = op.node.var
        index = self.d.thread_index(tag)
        self.thread_vars[var] = index
        launched = self.launch.get(tag)
        guard = launched is not None and not _same(launched, op.value)
        with self.analyzer._scoped_bind(var, tir_expr.Range(tir_expr.const(0, op.value.dtype), op.value)):
            if guard:  # a sibling scope launched more threads on this axis: the extra ones skip
                self.line(f"if ({index} < {self.expr(op.value)}) {{")
                self.block(op.body)
                self.line("}")
            else:
                self.stmt(op.body)
        del self.thread_vars[var]

    def s_IfThenElse(self, op) -> None:
        self.line(f"if ({_strip(self.expr(op.condition))}) {{")
        self.block(op.then_case)
        if op.else_case is not None:
            self.line("} else {")
            self.block(op.else_case)
        self.line("}")

    def s_While(self, op) -> None:
        self.line(f"while ({_strip(self.expr(op.condition))}) {{")
        self.block(op.body)
        self.line("}")

    def s_For(self, op) -> None:
        kind = op.kind
        if kind == tir_stmt.ForKind.THREAD_BINDING:
            raise CodegenError(f"{self.func_name}: loop {op.loop_var.name} is still bound to a thread; run "
                               "graphc.lower first")
        if kind == tir_stmt.ForKind.VECTORIZED and self.vector_copy(op):
            return
        start, extent = self.expr(op.min), self.expr(op.extent)
        ty = self.d.type_name(op.loop_var.dtype)
        name = self.bind_name(op.loop_var)
        end = extent if isinstance(op.min, tir_expr.IntImm) and op.min.value == 0 else f"({start} + {extent})"
        if kind in (tir_stmt.ForKind.UNROLLED, tir_stmt.ForKind.VECTORIZED) and self.d.name != "c":
            self.line("#pragma unroll")
        self.line(f"for ({ty} {name} = {start}; {name} < {_strip(end)}; ++{name}) {{")
        with self.analyzer._scoped_bind(op.loop_var, tir_expr.Range(op.min, op.extent)):
            self.block(op.body)
        self.line("}")

    def vector_copy(self, op) -> bool:
        """Print a vectorized loop `dst[b + v] = src[b' + v]` of 2 or 4 32-bit lanes as one vector
        load and store (CUDA float4/float2, OpenCL vload4/vstore4) when both starts are provably
        multiples of the lane count; with only the load's start aligned, one vector load and a
        store per lane (a transpose's read into a padded shared tile); with only the store's, one
        vector store of the lanes' values, each computed on its own (its write-back, any value
        expression). False (nothing printed) otherwise. Barriers in its body come after it: the
        lanes of a vectorized loop are independent."""
        if self.d.name not in ("cuda", "opencl") or not isinstance(op.extent, tir_expr.IntImm):
            return False
        lanes = op.extent.value
        body = list(op.body.seq) if isinstance(op.body, tir_stmt.SeqStmt) else [op.body]
        store, rest = body[0], body[1:]
        if (lanes not in (2, 4) or not _is_zero(op.min) or not isinstance(store, tir_stmt.BufferStore)
                or not all(isinstance(r, tir_stmt.Evaluate) and isinstance(r.value, tir_expr.Call)
                           and r.value.op == "tir.tvm_storage_sync" for r in rest)):
            return False
        scalar = {"float32": "float", "int32": "int", "uint32": "uint"}.get(str(store.buffer.dtype))
        if scalar is None or str(store.value.dtype) != str(store.buffer.dtype):
            return False
        load = store.value if isinstance(store.value, tir_expr.BufferLoad) else None
        if load is not None and str(load.buffer.dtype) != str(store.buffer.dtype):
            return False
        dst = self._vector_start(op, store.buffer, store.indices, lanes)
        src = self._vector_start(op, load.buffer, load.indices, lanes) if load is not None else None
        if dst is None and src is None:
            return False
        if not _pure(store.value):
            return False
        vec = f"{scalar}{lanes}"
        lane_names = "xyzw" if self.d.name == "cuda" else ("s0", "s1", "s2", "s3")

        def lane(expr, n):
            from ...tir.functor import substitute

            return substitute(expr, {op.loop_var: tir_expr.IntImm(op.loop_var.dtype, n)})

        if dst is not None and src is not None:
            if self.d.name == "cuda":
                self.line(f"*(({vec}*){dst}) = *((const {vec}*){src});")
            else:
                self.line(f"vstore{lanes}(vload{lanes}(0, {src}), 0, {dst});")
        elif src is not None:  # one vector load, a store per lane
            name = self.new_name("gc_vec")
            if self.d.name == "cuda":
                self.line(f"{vec} {name} = *((const {vec}*){src});")
            else:
                self.line(f"{vec} {name} = vload{lanes}(0, {src});")
            for n in range(lanes):
                index = self.index(store.buffer, tuple(lane(i, n) for i in store.indices))
                self.line(f"{self.pointer(store.buffer)}[{_strip(index)}] = {name}.{lane_names[n]};")
        else:  # each lane's value, one vector store
            values = ", ".join(_strip(self.expr(lane(store.value, n))) for n in range(lanes))
            if self.d.name == "cuda":
                self.line(f"*(({vec}*){dst}) = make_{vec}({values});")
            else:
                self.line(f"vstore{lanes}(({vec})({values}), 0, {dst});")
        for r in rest:
            self.stmt(r)
        return True

    def _vector_start(self, op, buf, indices, lanes: int):
        """The printed address of lane 0 of a vector access `buf[b + v]` of loop `op` when `b` is
        provably a multiple of `lanes`, else None."""
        from ...tir.functor import substitute

        if len(indices) != 1 or not _is_zero(buf.elem_offset):
            return None
        start = substitute(indices[0], {op.loop_var: tir_expr.IntImm(op.loop_var.dtype, 0)})
        with self.analyzer._scoped_bind(op.loop_var, tir_expr.Range(op.min, op.extent)):
            if not self.analyzer.can_prove_equal(indices[0], start + op.loop_var):
                return None
        mod = self.analyzer.modular_set(start)
        if mod.coeff % lanes or mod.base % lanes:
            return None
        return f"({self.pointer(buf)} + {_strip(self.expr(start))})"

    def s_AssertStmt(self, op) -> None:
        if self.d.name == "c":
            message = op.message.value if isinstance(op.message, tir_expr.StringImm) else str(op.message)
            self.errors.append(message)
            cond = _strip(self.expr(op.condition))
            self.line(f"if (!({cond})) {{ {self.free_heap()}return {len(self.errors)}; }}")
        # a kernel has no way to report; the host checks its arguments before launching
        self.stmt(op.body)

    def s_Allocate(self, op) -> None:
        dt = DataType(op.dtype)
        storage = self.d.storage_type(op.dtype)
        name = self.bind_name(op.buffer_var)
        self.pointer_dtypes[op.buffer_var] = op.dtype
        self.pointer_scopes[op.buffer_var] = op.scope
        count = 1
        static = all(isinstance(e, tir_expr.IntImm) for e in op.extents)
        for e in op.extents:
            count = count * e.value if static else None
        if op.scope in wmma.WMMA_SCOPES and static:
            wmma.declare(self, op, count)
            return
        if op.scope in SHARED_SCOPES:
            if not self.d.shared:
                raise CodegenError(f"{self.func_name}: {op.scope} memory needs a GPU target")
            if not static:
                raise CodegenError(f"{self.func_name}: shared buffer {op.buffer_var.name} has a "
                                   "non-constant size")
            # 16 bytes for vector copies, 32 for tensor-core tiles (wmma.py)
            align = f" __align__({32 if self.wmma else 16})" if self.d.name == "cuda" else ""
            self.top.append(f"{self.d.shared}{align} {storage} {name}[{max(count, 1)}];")
            self.stmt(op.body)
            return
        if self.d.name != "c":
            if op.scope not in ("local", "global", ""):
                raise CodegenError(f"{self.func_name}: unknown storage scope {op.scope!r}")
            if op.scope == "global":
                raise CodegenError(f"{self.func_name}: a kernel cannot allocate global memory "
                                   f"({op.buffer_var.name});"
                                   " allocate it outside the thread-bound loops or use 'shared'/'local'")
            if not static:
                raise CodegenError(f"{self.func_name}: local buffer {op.buffer_var.name} has a "
                                   "non-constant size")
            self.line(f"{storage} {name}[{max(count, 1)}];")
            self.stmt(op.body)
            return
        if static and count * dt.itemsize <= STACK_LIMIT_BYTES:
            self.line(f"{storage} {name}[{max(count, 1)}];")
            self.stmt(op.body)
            return
        size = f"{dt.itemsize}"
        for e in op.extents:
            size += f" * (size_t)({self.expr(e)})"
        self.errors.append(f"allocation of buffer {op.buffer_var.name} ({op.dtype}) failed: out of memory")
        self.line(f"{storage}* {name} = ({storage}*)malloc({size});")
        self.line(f"if ({name} == NULL) {{ {self.free_heap()}return {len(self.errors)}; }}")
        self.heap_live.append(name)
        self.stmt(op.body)
        self.heap_live.pop()
        self.line(f"free({name});")

    def free_heap(self) -> str:
        return "".join(f"free({name}); " for name in reversed(self.heap_live))

    # -- functions -------------------------------------------------------------------------------
    def add_kernel(self, func) -> dict:
        """Print the device kernel `func` (from SplitHostDevice); returns its calling metadata."""
        name = func.attrs["global_symbol"]
        self.begin(name)
        self.wmma = wmma.uses_wmma(func)
        dtypes = list(func.attrs.get("kernel_param_dtypes", []))
        written = set(func.attrs.get("kernel_written", []))
        noalias = bool(func.attrs.get("tir.noalias", True))
        self.launch = dict(func.attrs.get("thread_extent", {}))
        restrict = self.d.restrict if noalias else ""
        params, setup, meta_params = [], [], []
        for k, var in enumerate(func.params):
            dtype = dtypes[k] if k < len(dtypes) else var.dtype
            if DataType(var.dtype).is_handle:
                storage = self.d.storage_type(dtype)
                pname = self.bind_name(var)
                const = "" if var.name in written else "const "
                self.pointer_dtypes[var] = dtype
                def decl(n, const=const, storage=storage):
                    return self.d.pointer.format(const=const, type=storage, restrict=restrict, name=n)

                if self.d.name == "opencl":
                    base, offset = self.new_name(pname + "_base"), self.new_name(pname + "_offset")
                    params += [decl(base), f"ulong {offset}"]
                    cast = f"(__global {const}{storage}*)"
                    setup.append(f"{decl(pname)} = {cast}((__global {const}char*){base} + {offset});")
                else:
                    params.append(decl(pname))
                meta_params.append({"kind": "pointer", "name": var.name, "dtype": dtype})
            else:
                scalar = "int32" if DataType(dtype).is_bool else dtype
                params.append(f"{self.d.type_name(scalar)} {self.bind_name(var)}")
                meta_params.append({"kind": "scalar", "name": var.name, "dtype": scalar})
        nonneg = set(func.attrs.get("kernel_nonneg", []))
        for var in func.params:
            if var.name in nonneg and DataType(var.dtype).is_integer:
                self.analyzer.update(var, _nonneg(), allow_override=True)
        self.stmt(func.body)
        threads = 1
        for tag in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
            ext = self.launch.get(tag, tir_expr.const(1))
            threads = threads * ext.value if isinstance(ext, tir_expr.IntImm) else 0
        bounds = f" __launch_bounds__({threads})" if self.d.name == "cuda" and threads else ""
        head = f"{self.d.kernel_prefix} void{bounds} {name}({', '.join(params)}) {{"
        body = ["  " + s for s in setup] + ["  " + s for s in self.top] + self.lines
        self.functions.append("\n".join([head, *body, "}", ""]))
        return {"name": name, "params": meta_params}

    def add_function(self, name: str, func, meta: dict) -> dict:
        """Print the host C function `name` with the slot calling convention of `meta`
        (`graphc.target.llvm.signature.func_signature`); returns `meta` with its "errors"."""
        self.begin(name)
        params, unpack, index = [], [], 0
        shape_vars: dict = {}
        from ...tir.analysis.var_use import used_vars

        for buf in func.buffer_map.values():
            for var in used_vars(*buf.shape, *buf.strides):
                shape_vars.setdefault(var.name, []).append(var)
        for param, pmeta in zip(func.params, meta["params"]):
            if pmeta["kind"] == "buffer":
                buf = func.buffer_map[param]
                storage = self.d.storage_type(buf.dtype)
                cname = self.bind_name(buf.data, buf.name)
                self.pointer_dtypes[buf.data] = buf.dtype
                restrict = self.d.restrict if func.attrs.get("tir.noalias", True) else ""
                params.append(f"{storage}* {restrict}{cname}")
                unpack.append(f"({storage}*)(intptr_t)slots[{index}]")
            else:
                cname = self.bind_name(param)
                params.append(f"{self.d.type_name(param.dtype)} {cname}")
                unpack.append(_unpack_scalar(self, param.dtype, index))
                for alias in shape_vars.get(param.name, ()):
                    self.names.setdefault(alias, cname)
            index += 1
        for var_name, dtype in meta["sym_vars"]:
            aliases = shape_vars.get(var_name, [])
            cname = self.new_name(var_name)
            for alias in aliases:
                self.names[alias] = cname
                self.analyzer.update(alias, _nonneg(), allow_override=True)
            params.append(f"{self.d.type_name(dtype)} {cname}")
            unpack.append(_unpack_scalar(self, dtype, index))
            index += 1
        self.stmt(func.body)
        symbol = _c_identifier(name)
        compute = f"{symbol}_compute"
        head = f"static int32_t {compute}({', '.join(params) or 'void'}) {{"
        text = [head, *self.lines, "  return 0;", "}", "",
                f"int32_t {symbol}(int64_t* slots) {{",
                f"  return {compute}({', '.join(unpack)});", "}", ""]
        self.functions.append("\n".join(text))
        return dict(meta, errors=list(self.errors))

    def source(self) -> str:
        body = self.d.helpers(self.helpers) + "\n" + "\n".join(self.functions)
        prelude = self.d.prelude
        if self.d.name == "opencl" and re.search(r"\bdouble\b", body):
            prelude += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"  # only where doubles are used
        return prelude + body


def _unpack_scalar(cg, dtype: str, index: int) -> str:
    dt = DataType(dtype)
    if dt.is_float:
        cg.helpers.add("slot")
        return f"({cg.d.type_name(dtype)})gc_slot_double(slots[{index}])"
    return f"({cg.d.type_name(dtype)})slots[{index}]"


def _nonneg():
    from ...tir.arith.bound import ConstIntBound

    return ConstIntBound(0, ConstIntBound.POS_INF)


def _same(a, b) -> bool:
    if isinstance(a, tir_expr.IntImm) and isinstance(b, tir_expr.IntImm):
        return a.value == b.value
    return a is b or Analyzer().can_prove_equal(a, b)


def _c_identifier(name: str) -> str:
    """`name` as a C identifier (a keyword gets a trailing underscore)."""
    ident = re.sub(r"\W", "_", name) or "f"
    if ident[0].isdigit():
        ident = "f_" + ident
    return ident + "_" if ident in _RESERVED else ident


def _strip(text: str) -> str:
    """`(x)` -> `x` for a condition printed inside the parentheses of `if`/`for`."""
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for k, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k != len(text) - 1:
                return text
        return text[1:-1]
    return text


__all__ = ["CodeGenC"]


def _pure(expr) -> bool:
    """Whether evaluating `expr` once per lane is safe: loads and arithmetic, no calls."""
    from ...tir.functor import post_order_visit

    calls = []
    post_order_visit(expr, lambda node: calls.append(node) if isinstance(node, tir_expr.Call) else None)
    return not calls


def _is_zero(x) -> bool:
    return x is None or (isinstance(x, tir_expr.IntImm) and x.value == 0)
