"""`run_te`: build a PrimFunc from TE tensors and run it on numpy inputs (outputs allocated)."""

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.tir.arith import Analyzer
from graphc.tir.functor import substitute


def run_te(inputs, outputs, arrays, env=None):
    """Run `te.create_prim_func(inputs + outputs)` on `arrays`; `env` maps symbolic vars to sizes."""
    outputs = outputs if isinstance(outputs, list | tuple) else [outputs]
    env = env or {}
    lib = graphc.build(te.create_prim_func(list(inputs) + list(outputs)), target="llvm")

    vmap = {v: tir.const(n, v.dtype) for v, n in env.items()}

    def dim(d):
        return int(Analyzer().simplify(substitute(d, vmap)))

    outs = [np.zeros(tuple(dim(d) for d in t.shape), t.dtype) for t in outputs]
    lib["main"](*arrays, *outs)
    return outs


@pytest.fixture
def te_run():
    return run_te
