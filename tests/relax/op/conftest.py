"""`legalize_run`: build a one-op Relax function, LegalizeOps it, compile the PrimFunc, run it.

Symbolic dimensions of the parameters' struct info take their values from the numpy inputs'
shapes, so one PrimFunc compiled once runs at the given size.
"""

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.ir import structural_equal
from graphc.tir.arith import Analyzer
from graphc.tir.functor import substitute

R = relax


def _bind_shapes(sinfos, arrays) -> dict:
    env = {}
    for sinfo, arr in zip(sinfos, arrays):
        if not isinstance(sinfo, R.TensorStructInfo):
            continue
        for d, n in zip(sinfo.shape_values, arr.shape):
            if isinstance(d, tir.Var):
                env[d] = tir.const(n, d.dtype)
    return env


def _eval(d, env) -> int:
    return int(Analyzer().simplify(substitute(d, env)))


def _alloc(sinfo, env) -> list:
    if isinstance(sinfo, R.TupleStructInfo):
        return [a for f in sinfo.fields for a in _alloc(f, env)]
    shape = tuple(_eval(d, env) for d in sinfo.shape_values)
    return [np.zeros(shape, dtype=sinfo.dtype)]


def run_legalized(make_call, sinfos, arrays, expect_name=None):
    """Outputs (a list of numpy arrays) of the legalized `make_call(*params)` on `arrays`."""
    params = [R.Var(f"x{i}", s) for i, s in enumerate(sinfos)]
    bb = R.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            gv = bb.emit_output(make_call(*params))
        bb.emit_func_output(gv)
    before = bb.get()["main"].body.blocks[0].bindings[0].var.struct_info
    mod = R.transform.LegalizeOps()(bb.get())
    assert R.analysis.well_formed(mod)
    call = mod["main"].body.blocks[0].bindings[0].value
    # the TE compute's output shapes agree with the operator's struct-info inference
    assert structural_equal(call.struct_info, before), f"{call.struct_info} != {before}"
    assert call.op is R.Op.get("relax.call_tir"), f"not legalized: {call}"
    if expect_name is not None:
        assert call.args[0].name_hint == expect_name
    env = _bind_shapes(sinfos, arrays)
    by_var = dict(zip(params, arrays))
    inputs = [
        np.require(by_var[a] if a in by_var else a.data.numpy(), requirements="C")
        for a in call.args[1].fields
    ]
    scalars = [_eval(v, env) for v in call.args[2].values] if len(call.args) == 3 else []
    outputs = _alloc(call.sinfo_args[0], env)
    lib = graphc.build(mod[call.args[0]], target="llvm")
    lib["main"](*inputs, *outputs, *scalars)
    return outputs


@pytest.fixture
def legalize_run():
    return run_legalized
