"""From an IRModule of lowered PrimFuncs to a loaded runtime Module, through the object cache.

Code generation always runs (it is cheap and gives the cache key); LLVM's O3 pipeline and
machine-code emission run only on a cache miss.

>>> from graphc import tir
>>> from graphc.target import Target
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> a = tir.Var("a", "handle")
>>> i = tir.Var("i")
>>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.BufferStore(A, A[i] + 1.0, (i,)))
>>> from graphc import IRModule
>>> lib = build_llvm(IRModule({"inc": tir.PrimFunc([a], body, buffer_map={a: A})}), Target("llvm"))
>>> import numpy as np; x = np.zeros(4, "float32"); lib["inc"](x); x
array([1., 1., 1., 1.], dtype=float32)
"""

from __future__ import annotations

import llvmlite.binding as llvm

from ...errors import CodegenError
from ...runtime.module import Module
from .. import cache
from .codegen import codegen_module
from .init import create_target_machine, ensure_llvm

# LLVM's cost model on AMD Zen (and some Intel parts) happily vectorizes a loop that strides
# through rows with gathers and scatters, which run far slower than the scalar loop they
# replace (a blocked matmul became 20x slower). graphc vectorizes the loops a schedule marks
# itself, so steer LLVM's own vectorizer away from gathers unless the target asks otherwise.
_X86_TUNING = ("+prefer-no-gather", "+prefer-no-scatter")


def machine_features(target) -> str:
    """The feature string handed to LLVM: the target's, plus x86 tuning it does not override."""
    features = list(target.mattr)
    if target.triple.startswith(("x86_64", "i686", "i386")):
        named = {f[1:] for f in features}
        features += [f for f in _X86_TUNING if f[1:] not in named]
    return ",".join(features)


def target_machine_for(target):
    return create_target_machine(target.triple, target.mcpu, machine_features(target), target.opt_level)


def optimize(llmod, tm, opt_level: int) -> None:
    """Run LLVM's default per-module pipeline at `opt_level` (new pass manager)."""
    pto = llvm.PipelineTuningOptions(speed_level=min(max(opt_level, 0), 3))
    if opt_level >= 2:
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(llmod, pb)


def compile_ir(ir_text: str, target) -> tuple[bytes, str]:
    """(object code, optimized IR text) for `ir_text`, from the cache when possible."""
    ensure_llvm()
    key = cache.cache_key(ir_text, target.resolved())
    hit = cache.load(key)
    if hit is not None:
        obj, info = hit
        return obj, info.get("ll", "")
    try:
        llmod = llvm.parse_assembly(ir_text)
        llmod.verify()
    except RuntimeError as err:
        raise CodegenError(f"LLVM rejected the generated IR: {err}") from err
    tm = target_machine_for(target)
    llmod.triple = tm.triple
    llmod.data_layout = str(tm.target_data)
    optimize(llmod, tm, target.opt_level)
    obj = tm.emit_object(llmod)
    ll = str(llmod)
    cache.store(key, obj, {"ll": ll, "target": target.resolved()})
    return obj, ll


def build_llvm(mod, target) -> Module:
    """Compile every PrimFunc of the lowered `mod` for the CPU `target`."""
    llmod, metas = codegen_module(mod, target)
    obj, ll = compile_ir(str(llmod), target)
    info = {"triple": target.triple, "cpu": target.mcpu, "features": ",".join(target.mattr),
            "opt": target.opt_level, "str": str(target)}
    return Module(obj, metas, info, ll)

