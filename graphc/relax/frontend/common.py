"""Helpers shared by every importer into Relax: `detach_params` (TVM's `relax.frontend.detach_params`).

It lives in `relax` because it only reads Relax functions; `graphc.frontend` re-exports it.

>>> import numpy as np
>>> from graphc import relax
>>> from graphc.frontend import detach_params
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x], attrs={"params": [np.ones(2, "float32")]}):
...     _ = bb.emit_func_output(x)
>>> mod, params = detach_params(bb.get())
>>> "params" in mod["main"].attrs, [p.numpy().tolist() for p in params["main"]]
(False, [[1.0, 1.0]])
"""

from __future__ import annotations

from ... import runtime
from ...ir.module import IRModule
from ..expr import Constant, Function


def detach_params(mod: IRModule) -> tuple[IRModule, dict[str, list]]:
    """`(mod without the "params" function attributes, {function name: [graphc Tensors]})`.

    A frontend called with `keep_params_as_input=True` records each function's parameter
    values in its "params" attribute, in the order of the parameters after the first
    `num_input` ones, as Constants (TVM's `relax.frontend.detach_params`).
    """
    detached: dict[str, list] = {}
    out = IRModule(attrs=mod.attrs)
    for gv, func in mod.items():
        if isinstance(func, Function) and "params" in func.attrs:
            detached[gv.name_hint] = [_tensor(p) for p in func.attrs["params"]]
            attrs = {k: v for k, v in func.attrs.items() if k != "params"}
            func = func.replace(attrs=attrs)
        out[gv] = func
    return out, detached


def _tensor(value):
    if isinstance(value, Constant):
        return value.data
    return value if isinstance(value, runtime.Tensor) else runtime.tensor(value)
