"""`relax.build`: a Relax IRModule to a VM `Executable` (VM lowering, kernels, bytecode).

The module first goes through `relax.transform.VMLoweringPipeline()` (explicit memory,
shape computation and checks, builtins); every PrimFunc is then compiled into one kernel
module, and every Relax function is translated to bytecode, one register per binding.
The forms the code generator accepts are those the lowering pipeline produces:
`R.vm.alloc_storage/alloc_tensor/kill_object/call_tir_dyn`, direct calls of PrimFuncs and
Relax functions, `R.call_packed` / `R.call_builtin_with_ctx` of `vm.builtin.*`, tuples,
`If`, and leaf values.

>>> from graphc.script import from_source
>>> mod = from_source('''
... @I.ir_module
... class Mod:
...     @R.function(pure=False)
...     def main(x: R.Tensor((2,), "float32")):
...         t = (x, x)
...         return t
... ''')
>>> exe = build(mod, "llvm", vm_lowering=False)
>>> print(exe.as_text().split("\\n\\n")[0])
@main(x)  # 2 registers
   0: %1 = call vm.builtin.make_tuple(%0, %0)
   1: ret %1
"""

from __future__ import annotations

from ..errors import CodegenError
from ..ir.module import GlobalVar, IRModule
from ..runtime.device import Device
from ..target import Target
from ..target import build as target_build
from ..tir import expr as tir_expr
from ..tir.function import PrimFunc
from ..vm.bytecode import VOID, Arg, Call, FuncEntry, Goto, If, Ret
from ..vm.executable import Executable
from ..vm.outputs import ATTR as OUTPUT_STRUCTURE
from ..vm.values import DataType, ShapeTuple
from . import expr as relax_expr
from .analysis.vars import used_vars
from .op.registry import Op
from .struct_info import TensorStructInfo, prim_text
from .transform import BindParams, VMLoweringPipeline
from .vm_call_proof import ALLOC_TENSOR_OPS as _ALLOC_TENSOR_OPS
from .vm_call_proof import PACKED_OPS as _PACKED_OPS
from .vm_call_proof import KernelCallProof


class _ModuleContext:
    """The function table and constant pool shared by every function of the module."""

    def __init__(self, mod: IRModule):
        self.mod = mod
        self.functions: list[FuncEntry] = []
        self.index: dict[tuple[str, str], int] = {}
        self.constants: list = []
        self.const_index: dict = {}
        self.relax_names: dict[GlobalVar, str] = {}
        self.kernel_names: dict[GlobalVar, str] = {}
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function):
                self.relax_names[gv] = func.attrs.get("global_symbol", gv.name_hint)
            elif isinstance(func, PrimFunc):
                self.kernel_names[gv] = func.attrs.get("global_symbol", gv.name_hint)
        for gv in self.relax_names:  # VM functions first, in module order
            self.func(("vm", self.relax_names[gv]))

    def func(self, key: tuple[str, str], device: str = "cpu") -> int:
        idx = self.index.get(key)
        if idx is None:
            idx = self.index[key] = len(self.functions)
            self.functions.append(FuncEntry(key[0], key[1], device=device))
        return idx

    def builtin(self, name: str) -> int:
        return self.func(("builtin", name))

    def const(self, value, key=None) -> Arg:
        key = key if key is not None else (type(value).__name__, value)
        idx = self.const_index.get(key)
        if idx is None:
            idx = self.const_index[key] = len(self.constants)
            self.constants.append(value)
        return Arg.const(idx)


class FunctionCodeGen:
    """Bytecode for one Relax function."""

    def __init__(self, ctx: _ModuleContext, name: str, func: relax_expr.Function):
        self.ctx, self.name, self.func = ctx, name, func
        self.code: list = []
        self.num_registers = len(func.params)
        self.vars: dict[relax_expr.Var, Arg] = {p: Arg.reg(i) for i, p in enumerate(func.params)}
        self.defs: dict[relax_expr.Var, relax_expr.Expr] = {}
        self.unchecked: list[int] = []
        self.proof = KernelCallProof(self.defs, func)
        self.used = set(used_vars(func.body))

    def new_reg(self) -> int:
        self.num_registers += 1
        return self.num_registers - 1

    def emit(self, instr) -> int:
        self.code.append(instr)
        return len(self.code) - 1

    def emit_call(self, func_index: int, args, dst: int | None = None) -> Arg:
        """Emit `dst = func(*args)` (a new register unless `dst` is given)."""
        dst = self.new_reg() if dst is None else dst
        self.emit(Call(dst, func_index, tuple(args)))
        return Arg.reg(dst)

    def error(self, expr, message: str):
        raise CodegenError(f"{self.name}: {message}\n  in: {expr!r}")

    # -- functions, blocks, bindings -------------------------------------------------------------
    def generate(self) -> FuncEntry:
        result = self.gen(self.func.body)
        self.emit(Ret(result))
        attrs = {"unchecked_calls": self.unchecked, "signature": _signature(self.func)}
        if "num_input" in self.func.attrs:
            attrs["num_input"] = int(self.func.attrs["num_input"])
        if OUTPUT_STRUCTURE in self.func.attrs:  # vm["main"] rebuilds the model's result
            attrs[OUTPUT_STRUCTURE] = self.func.attrs[OUTPUT_STRUCTURE]
        return FuncEntry("vm", self.name, [p.name_hint for p in self.func.params], self.num_registers,
                         self.code, attrs=attrs)

    def gen_seq(self, seq: relax_expr.SeqExpr) -> Arg:
        for block in seq.blocks:
            for binding in block.bindings:
                self.defs[binding.var] = binding.value
                value = binding.value
                if isinstance(value, relax_expr.Call):
                    self.vars[binding.var] = self.gen_call(value, void=binding.var not in self.used)
                else:
                    self.vars[binding.var] = self.gen(value)
        return self.gen(seq.body)

    def none(self) -> Arg:
        return self.ctx.const(None, key=("none",))

    # -- expressions -----------------------------------------------------------------------------
    def gen(self, expr) -> Arg:
        if isinstance(expr, relax_expr.Var):
            arg = self.vars.get(expr)
            if arg is None:
                self.error(expr, f"variable {expr.name_hint!r} is used before it is defined")
            return arg
        if isinstance(expr, relax_expr.SeqExpr):
            return self.gen_seq(expr)
        if isinstance(expr, relax_expr.Constant):
            return self.ctx.const(expr.data, key=("tensor", id(expr.data)))
        if isinstance(expr, relax_expr.ShapeExpr):
            values = []
            for v in expr.values:
                if not isinstance(v, tir_expr.IntImm):
                    self.error(expr, f"shape {expr!r} has symbolic dimensions; VMShapeLower computes them at "
                               "run time: run relax.transform.VMLoweringPipeline() first")
                values.append(int(v.value))
            return self.ctx.const(ShapeTuple(values))
        if isinstance(expr, relax_expr.PrimValue):
            return self.gen_prim(expr)
        if isinstance(expr, relax_expr.StringImm):
            return self.ctx.const(str(expr.value))
        if isinstance(expr, relax_expr.DataTypeImm):
            return self.ctx.const(DataType(expr.value))
        if isinstance(expr, GlobalVar):
            return Arg.func(self.callee_index(expr))
        if isinstance(expr, relax_expr.ExternFunc):
            return Arg.func(self.ctx.builtin(expr.global_symbol))
        if isinstance(expr, relax_expr.Tuple):
            fields = [self.gen(f) for f in expr.fields]
            return self.emit_call(self.ctx.builtin("vm.builtin.make_tuple"), fields)
        if isinstance(expr, relax_expr.TupleGetItem):
            value = self.gen(expr.tuple_value)
            return self.emit_call(self.ctx.builtin("vm.builtin.tuple_getitem"), [value, Arg.imm(expr.index)])
        if isinstance(expr, relax_expr.If):
            return self.gen_if(expr)
        if isinstance(expr, relax_expr.Call):
            return self.gen_call(expr)
        if isinstance(expr, relax_expr.Function):
            self.error(expr, "nested functions (closures) are not supported by the VM yet; lift them "
                       "to module level with relax.transform.LambdaLift")
        self.error(expr, f"cannot generate VM code for {type(expr).__name__}")

    def gen_prim(self, expr: relax_expr.PrimValue) -> Arg:
        value = expr.value
        if isinstance(value, tir_expr.IntImm):
            return Arg.imm(int(value.value))
        if isinstance(value, tir_expr.FloatImm):
            return self.ctx.const(float(value.value))
        self.error(expr, f"PrimValue {expr!r} is symbolic; VMShapeLower computes it at run time: run "
                   "relax.transform.VMLoweringPipeline() first")

    def to_reg(self, arg: Arg) -> int:
        if arg.kind == "reg":
            return arg.value
        return self.emit_call(self.ctx.builtin("vm.builtin.copy"), [arg]).value

    def gen_if(self, expr: relax_expr.If) -> Arg:
        cond = self.to_reg(self.gen(expr.cond))
        merge = self.new_reg()
        at_if = self.emit(None)
        true_value = self.gen(expr.true_branch)
        self.emit(Call(merge, self.ctx.builtin("vm.builtin.copy"), (true_value,)))
        at_goto = self.emit(None)
        false_start = len(self.code)
        false_value = self.gen(expr.false_branch)
        self.emit(Call(merge, self.ctx.builtin("vm.builtin.copy"), (false_value,)))
        self.code[at_if] = If(cond, false_start - at_if)
        self.code[at_goto] = Goto(len(self.code) - at_goto)
        return Arg.reg(merge)

    def callee_index(self, gv: GlobalVar) -> int:
        if gv in self.ctx.relax_names:
            return self.ctx.func(("vm", self.ctx.relax_names[gv]))
        if gv in self.ctx.kernel_names:
            return self.ctx.func(("kernel", self.ctx.kernel_names[gv]))
        raise CodegenError(f"{self.name}: {gv.name_hint!r} is not a function of the module")

    # -- calls -----------------------------------------------------------------------------------
    def gen_call(self, call: relax_expr.Call, void: bool = False) -> Arg:
        """Code for `call`; with `void` (nobody reads the result) the result register is VOID."""
        planned = self.plan_call(call)
        if isinstance(planned, Arg):
            return planned
        func_index, args = planned
        if void:
            self.emit(Call(VOID, func_index, tuple(args)))
            return self.none()
        return self.emit_call(func_index, args)

    def plan_call(self, call: relax_expr.Call):
        """(function index, arguments) of the call to emit, or the Arg of a call already emitted."""
        op = call.op
        if isinstance(op, GlobalVar):
            if op in self.ctx.kernel_names:
                return self.kernel_call(call, op, list(call.args))
            return (self.callee_index(op), [self.gen(a) for a in call.args])
        if isinstance(op, relax_expr.ExternFunc):
            return (self.ctx.builtin(op.global_symbol), [self.gen(a) for a in call.args])
        if isinstance(op, relax_expr.Var):  # a function value: a Relax function, a kernel or a builtin
            args = [self.gen(op)] + [self.gen(a) for a in call.args]
            return (self.ctx.builtin("vm.builtin.invoke_closure"), args)
        if not isinstance(op, Op):
            self.error(call, f"cannot call {type(op).__name__} {op!r}")
        name, args = op.name, call.args
        builtin = self.ctx.builtin
        if name in ("relax.vm.alloc_storage", "relax.memory.alloc_storage"):
            if name == "relax.vm.alloc_storage":
                size, device, dtype, scope = args
            else:
                size, device, scope, dtype = args
            gen = self.gen
            return builtin("vm.builtin.alloc_storage"), [Arg.ctx(), gen(size), gen(device), gen(dtype),
                                                         gen(scope)]
        if name in _ALLOC_TENSOR_OPS:
            return (builtin("vm.builtin.alloc_tensor"), [self.gen(a) for a in args])
        if name in ("relax.vm.kill_object", "relax.memory.kill_storage", "relax.memory.kill_tensor"):
            target = self.gen(args[0])
            if target.kind == "reg" and target.value >= len(self.func.params):
                self.emit(Call(target.value, builtin("vm.builtin.null_value"), ()))
            return self.none()
        if name == "relax.vm.call_tir_dyn":
            gv, packed = args
            fields = list(packed.fields) if isinstance(packed, relax_expr.Tuple) else [packed]
            if not isinstance(gv, GlobalVar) or gv not in self.ctx.kernel_names:
                self.error(call, "R.vm.call_tir_dyn expects a PrimFunc of the module as its callee")
            return self.kernel_call(call, gv, fields, dyn=True)
        if name == "relax.call_builtin_with_ctx":
            func, packed = args
            fields = list(packed.fields) if isinstance(packed, relax_expr.Tuple) else [packed]
            return (builtin(func.global_symbol), [Arg.ctx()] + [self.gen(f) for f in fields])
        if name in _PACKED_OPS:
            func, *rest = args
            return (builtin(func.global_symbol), [self.gen(a) for a in rest])
        if name == "relax.null_value":
            return (builtin("vm.builtin.null_value"), [])
        if name == "relax.call_tir" or name == "relax.builtin.alloc_tensor":
            self.error(call, f"{name} must be lowered before VM code generation: run "
                       "relax.transform.VMLoweringPipeline() first")
        self.error(call, f"operator {name} has no VM lowering; legalize it first "
                   "(relax.transform.LegalizeOps) or run graphc.compile, which does")

    def kernel_call(self, call: relax_expr.Call, gv: GlobalVar, args: list, dyn: bool = False) -> Arg:
        """A direct kernel call, or (`dyn`) `vm.builtin.call_tir_dyn(kernel, args..., shape)`."""
        index = self.callee_index(gv)
        prim = self.ctx.mod[gv]
        regs = [self.gen(a) for a in args]
        if dyn:  # destination-passing: nothing to return
            pc = self.emit(Call(VOID, self.ctx.builtin("vm.builtin.call_tir_dyn"), (Arg.func(index), *regs)))
        else:
            pc = self.emit(Call(VOID, index, tuple(regs)))
        if self.proof.proven(prim, args, dyn):
            self.unchecked.append(pc)
        return self.none()


def _signature(func: relax_expr.Function) -> list:
    """What callers pass: per parameter `[name, shape, dtype]` (dimensions are ints or the text
    of their symbolic expression), or `[name, None, None]` for a parameter that is no tensor;
    then the declared ranges of the symbolic dimensions, `{name: [lower, upper]}` (None: unbounded)."""
    params = []
    for p in func.params:
        sinfo = p.struct_info
        if isinstance(sinfo, TensorStructInfo) and sinfo.shape_values is not None:
            params.append([p.name_hint, [prim_text(d) if not isinstance(d, tir_expr.IntImm) else int(d.value)
                                         for d in sinfo.shape_values], sinfo.dtype])
        else:
            params.append([p.name_hint, None, None])
    lower, upper = func.attrs.get("tir_var_lower_bound", {}), func.attrs.get("tir_var_upper_bound", {})
    bounds = {str(name): [_bound(lower.get(name)), _bound(upper.get(name))] for name in {**lower, **upper}}
    return [params, bounds]


def _bound(value):
    return None if value is None else int(value.value if isinstance(value, tir_expr.IntImm) else value)


# --- the driver -----------------------------------------------------------------------------------


def build_kernels(mod: IRModule, target, lowered: bool = False) -> dict:
    """Compile every PrimFunc of `mod`: {device type: runtime Module}.

    Kernels run on the target's device; functions marked "tir.is_host_func" (the shape
    computations of VMShapeLower, which read and write the CPU's shape heap) run on the CPU,
    so a GPU target gives two modules, {"cpu": ..., "cuda": ...}. `lowered=True`: the
    PrimFuncs were lowered for `target` already (the device's are not lowered again).
    """
    target = Target.resolve(target)
    device = device_type_of(target)
    groups: dict[str, dict] = {}
    for gv, func in mod.items():
        if isinstance(func, PrimFunc):
            name = func.attrs.get("global_symbol", gv.name_hint)
            where = "cpu" if func.attrs.get("tir.is_host_func") else device
            groups.setdefault(where, {})[name] = func.with_attr("global_symbol", name)
    modules = {}
    for where, prims in groups.items():
        build_for = target if where == device else Target(target.host or "llvm")
        modules[where] = target_build(IRModule(prims), build_for, lowered=lowered and build_for is target)
    return modules


def device_type_of(target) -> str:
    """The device type the kernels of `target` run on: "cpu" for "llvm" and "c"."""
    return Device(target.kind if target.is_gpu else "cpu", 0).device_type


def codegen(mod: IRModule, modules: dict | None = None, devices=None) -> Executable:
    """Bytecode for the (already lowered) Relax functions of `mod`, with the given kernel modules."""
    ctx = _ModuleContext(mod)
    entries: dict[int, FuncEntry] = {}
    for gv, name in ctx.relax_names.items():
        func = mod[gv]
        entries[ctx.func(("vm", name))] = FunctionCodeGen(ctx, name, func).generate()
    functions = [entries.get(i, f) for i, f in enumerate(ctx.functions)]
    modules = modules or {}
    for f in functions:
        if f.kind != "kernel":
            continue
        homes = [dev for dev, m in modules.items() if f.name in m]
        if not homes:
            raise CodegenError(f"kernel {f.name!r} was not compiled (no kernel module has it)")
        f.device = homes[0]
    return Executable(functions, ctx.constants, modules, devices)


EXEC_MODES = ("bytecode", "compiled")


def build(mod: IRModule, target=None, params=None, *, exec_mode: str = "bytecode",
          vm_lowering: bool = True, kernels_lowered: bool = False, progress=None) -> Executable:
    """Lower `mod` for the VM, compile its PrimFuncs for `target`, and generate bytecode.

    `params` (a dict of name -> array) binds `main`'s parameters as constants first.
    `exec_mode` takes TVM's values: "bytecode" and "compiled" give the same executable here
    (graphc's VM already turns the bytecode into Python code once, when the executable is
    loaded, which is what TVM's "compiled" mode does in C). `vm_lowering=False` skips
    `VMLoweringPipeline` for modules already in lowered form, `kernels_lowered=True` the TensorIR
    lowering of PrimFuncs already lowered for `target`. `progress(message, done, total)`,
    if given, hears when the kernels' compilation and the bytecode generation start.
    """
    if not isinstance(mod, IRModule):
        raise TypeError(f"relax.build expects an IRModule, got {type(mod).__name__}")
    if exec_mode not in EXEC_MODES:
        raise ValueError(f"relax.build: exec_mode must be one of {EXEC_MODES}, got {exec_mode!r}")
    target = Target.resolve(target)
    if params:
        mod = BindParams("main", params)(mod)
    if vm_lowering:
        with target:
            mod = VMLoweringPipeline()(mod)
    if progress is not None:
        kernels = sum(1 for _, func in mod.items() if isinstance(func, PrimFunc))
        progress(f"compiling {kernels} kernels for {target.kind}", 0, 0)
    modules = build_kernels(mod, target, lowered=kernels_lowered)
    if progress is not None:
        progress("generating the bytecode", 0, 0)
    return codegen(mod, modules, [Device(device_type_of(target), 0)])


__all__ = ["build", "build_kernels", "codegen", "device_type_of"]
