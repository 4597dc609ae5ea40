"""The "c" back end: lowered PrimFuncs as C99 source (`lib.get_source()`), run through LLVM.

Each function is printed by the C-family generator in the plain-C dialect with the runtime's
slot calling convention, so the source compiles with any C compiler into functions the runtime
could call. The module also holds the same functions compiled by the LLVM back end, which is
what runs: nothing at run time needs a C compiler.

>>> import graphc, numpy as np
>>> from graphc import te
>>> A = te.placeholder((4,), name="A")
>>> B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
>>> lib = graphc.build(te.create_prim_func([A, B]).with_attr("global_symbol", "scale"), target="c")
>>> print(lib.get_source().split("\\n\\n", 1)[1])
static int32_t scale_compute(float* restrict A, float* restrict B) {
  for (int32_t i = 0; i < 4; ++i) {
    B[i] = (A[i] * 2.000000000e+00f);
  }
  return 0;
}
<BLANKLINE>
int32_t scale(int64_t* slots) {
  return scale_compute((float*)(intptr_t)slots[0], (float*)(intptr_t)slots[1]);
}
<BLANKLINE>
>>> b = np.zeros(4, "float32"); lib["scale"](np.arange(4, dtype="float32"), b); b
array([0., 2., 4., 6.], dtype=float32)
"""

from __future__ import annotations

from ..runtime.source_module import CSourceModule
from ..tir.function import PrimFunc
from .llvm.build import build_llvm
from .llvm.signature import func_signature
from .source import C, CodeGenC
from .target import Target


def c_source(mod) -> str:
    """The C source of the lowered PrimFuncs of `mod`."""
    cg = CodeGenC(C, "c")
    for gv, func in mod.items():
        if isinstance(func, PrimFunc):
            name = func.attrs.get("global_symbol") or gv.name_hint
            cg.add_function(name, func, func_signature(name, func))
    return cg.source()


def build_c(mod, target: Target) -> CSourceModule:
    """C source for `mod`, plus its functions compiled by LLVM for the same CPU."""
    llvm_target = Target({"kind": "llvm", **target.options})
    return CSourceModule(build_llvm(mod, llvm_target), c_source(mod))


__all__ = ["build_c", "c_source"]
