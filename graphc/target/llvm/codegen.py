"""CodeGenLLVM: translate lowered PrimFuncs into one `llvmlite.ir` module.

Each PrimFunc `f` becomes an internal `i32 @f_compute(...)` with typed parameters
(buffer pointers marked `noalias` under the func attr `tir.noalias`, which defaults to
true as in TVM, and `align 64`) plus the exported entry `i32 @f(i64* args)` that unpacks
the argument slots described in `signature.py` and calls it.

>>> from graphc import tir
>>> from graphc.target import Target
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> a = tir.Var("a", "handle")
>>> i = tir.Var("i")
>>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.BufferStore(A, A[i] * 2.0, (i,)))
>>> cg = CodeGenLLVM(Target("llvm"))
>>> meta = cg.add_function("double", tir.PrimFunc([a], body, buffer_map={a: A}))
>>> "define i32 @\\"double\\"(ptr" in str(cg.module) or "define i32 @double(ptr" in str(cg.module)
True
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import CodegenError
from ...ir.dispatch import method_table
from ...ir.dtype import DataType
from ...tir.analysis.var_use import used_vars
from .expr import ExprCodegen
from .intrinsics import IntrinsicCodegen
from .parallel import ParallelCodegen
from .signature import func_signature
from .stmt import StmtCodegen
from .types import F64, I32, I64, PTR, reg_type
from .vectorize import native_vector_bits, vectorize_loops

CODEGEN_VERSION = "graphc-llvm-3"  # 2: parallel loops on libgomp, TIR vectorizer


class CodeGenLLVM(ExprCodegen, IntrinsicCodegen, StmtCodegen, ParallelCodegen):
    """Accumulates PrimFuncs into `self.module`; `add_function` returns each one's metadata."""

    def __init__(self, target):
        self.target = target
        self.target_kind = target.kind
        self.module = ir.Module(name="graphc")
        self.module.triple = target.triple
        self._visitors = method_table(type(self))
        self._strings: dict[str, ir.GlobalVariable] = {}
        self.vector_bits = native_vector_bits(target) if target.is_cpu else 128

    # -- per function -----------------------------------------------------------------------
    def add_function(self, name: str, func) -> dict:
        meta = func_signature(name, func)
        noalias = bool(func.attrs.get("tir.noalias", True))
        self.func_name = name
        self.vars, self.error_messages, self.heap_live = {}, [], []
        # facts about pointer Vars that outlined parallel bodies re-state on their parameters
        self.noalias_vars, self.aligned_vars = set(), {}

        arg_types, binders = [], []  # binders[i]: the Vars that argument i defines
        for param, pmeta in zip(func.params, meta["params"]):
            if pmeta["kind"] == "buffer":
                arg_types.append(PTR)
                binders.append([func.buffer_map[param].data])
            else:
                arg_types.append(reg_type(param.dtype))
                binders.append([param])
        vars_by_name = _shape_vars(func)
        for p in func.params:
            if p not in func.buffer_map:
                binders[func.params.index(p)].extend(v for v in vars_by_name.get(p.name, ()) if v is not p)
        for var_name, dtype in meta["sym_vars"]:
            arg_types.append(reg_type(dtype))
            binders.append(vars_by_name[var_name])

        compute = ir.Function(self.module, ir.FunctionType(I32, arg_types), f"{name}_compute")
        compute.linkage = "internal"
        compute.attributes.add("nounwind")
        for arg, param, pmeta in zip(compute.args, func.params, meta["params"]):
            if pmeta["kind"] == "buffer":
                if noalias:
                    arg.add_attribute("noalias")
                    self.noalias_vars.add(func.buffer_map[param].data)
                if pmeta["align"]:
                    arg.attributes.align = pmeta["align"]
                    self.aligned_vars[func.buffer_map[param].data] = pmeta["align"]
        self.entry_block = compute.append_basic_block("entry")
        body_block = compute.append_basic_block("body")
        self.builder = ir.IRBuilder(self.entry_block)
        self.builder.branch(body_block)
        self.builder.position_at_end(body_block)
        for arg, vars_ in zip(compute.args, binders):
            for var in vars_:
                same = arg.type == reg_type(var.dtype)
                self.vars[var] = arg if same else self._convert_int(arg, var.dtype)
        self.emit_stmt(vectorize_loops(func.body, self.vector_bits))
        if not self.builder.block.is_terminated:
            self.builder.ret(ir.Constant(I32, 0))
        self._emit_entry(name, compute, meta, arg_types)
        meta["errors"] = list(self.error_messages)
        return meta

    def _convert_int(self, value: ir.Value, dtype: str) -> ir.Value:
        to_t = reg_type(dtype)
        if not isinstance(to_t, ir.IntType) or not isinstance(value.type, ir.IntType):
            raise CodegenError(f"{self.func_name}: cannot bind a {value.type} argument to a {dtype} var")
        if to_t.width > value.type.width:
            return self.builder.sext(value, to_t)
        return self.builder.trunc(value, to_t)

    def _emit_entry(self, name: str, compute: ir.Function, meta: dict, arg_types: list) -> None:
        """`i32 @name(i64* args)`: load each slot, convert it and call the compute function."""
        entry = ir.Function(self.module, ir.FunctionType(I32, [PTR]), name)
        entry.attributes.add("nounwind")
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        values = []
        for i, ty in enumerate(arg_types):
            slot = b.gep(entry.args[0], [ir.Constant(I64, i)], source_etype=I64)
            if ty == PTR:
                ptr = b.load(slot, typ=PTR, align=8)
                align = meta["params"][i]["align"] if i < len(meta["params"]) else 0
                if align:  # the runtime guarantees it; keep the fact after inlining
                    ptr.set_metadata("align", self.module.add_metadata([ir.Constant(I64, align)]))
                values.append(ptr)
                continue
            raw = b.load(slot, typ=I64, align=8)
            if isinstance(ty, ir.IntType):
                values.append(b.icmp_unsigned("!=", raw, ir.Constant(I64, 0)) if ty.width == 1
                              else raw if ty.width == 64 else b.trunc(raw, ty))
            else:
                as_double = b.bitcast(raw, F64)
                values.append(as_double if ty == F64 else b.fptrunc(as_double, ty))
        b.ret(b.call(compute, values))

    def string_constant(self, text: str) -> ir.Value:
        g = self._strings.get(text)
        if g is None:
            data = bytearray(text.encode()) + b"\0"
            arr_t = ir.ArrayType(ir.IntType(8), len(data))
            g = ir.GlobalVariable(self.module, arr_t, name=f".str.{len(self._strings)}")
            g.global_constant, g.linkage, g.initializer = True, "private", ir.Constant(arr_t, data)
            self._strings[text] = g
        return g


def _shape_vars(func) -> dict[str, list]:
    """Var objects of the parameter buffers' shapes and strides, grouped by name."""
    found: dict[str, list] = {}
    for var in used_vars(*(d for buf in func.buffer_map.values() for d in (*buf.shape, *buf.strides))):
        if not DataType(var.dtype).is_handle:
            found.setdefault(var.name, []).append(var)
    return found


def codegen_module(mod, target) -> tuple[ir.Module, list[dict]]:
    """All PrimFuncs of `mod` in one LLVM module, and their metadata (named by global_symbol)."""
    from ...tir.function import PrimFunc

    cg, metas = CodeGenLLVM(target), []
    for gv, func in mod.items():
        if not isinstance(func, PrimFunc):
            continue
        name = func.attrs.get("global_symbol") or gv.name_hint
        metas.append(cg.add_function(name, func))
    if not metas:
        raise CodegenError("the module has no PrimFunc to compile")
    return cg.module, metas

