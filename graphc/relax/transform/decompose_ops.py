"""DecomposeOpsForInference / DecomposeOpsForTraining: composite operators as simple ones.

For inference (TVM's set), `nn.batch_norm` with its moving statistics becomes

    (x - mean) * rsqrt(var + epsilon) * gamma + beta

with `mean`, `var`, `gamma`, `beta` expanded to broadcast along `axis`; the call's tuple
result is kept, `(output, moving_mean, moving_var)`, so `bn[0]` users are unchanged.
For training, `nn.layer_norm` is decomposed as well (`mean` and `variance` over its axes;
inference keeps it whole: one fused kernel is faster), and `nn.batch_norm` normalizes with
the batch's statistics and returns moving statistics updated with momentum 0.1 (TVM's
default). `func_name` restricts the pass to one function.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> p = relax.Var("p", relax.TensorStructInfo((3,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x, p]):
...     with bb.dataflow():
...         bn = bb.emit(relax.op.nn.batch_norm(x, p, p, p, p, axis=1))
...         gv = bb.emit_output(relax.TupleGetItem(bn, 0))
...     _ = bb.emit_func_output(gv)
>>> after = DecomposeOpsForInference()(bb.get())["main"]
>>> [b.value.op.name.removeprefix("relax.") for b in after.body.blocks[0].bindings[:-2]]
['expand_dims', 'subtract', 'expand_dims', 'add', 'rsqrt', 'multiply', 'expand_dims', 'multiply', \
'expand_dims', 'add']
"""

from __future__ import annotations

from ...ir.transform import module_pass
from .. import expr as relax_expr
from .. import op as ops
from ..expr_functor import ExprMutator
from ..op.registry import Op
from ..struct_info import TensorStructInfo

__all__ = ["DecomposeOpsForInference", "DecomposeOpsForTraining"]

_MOMENTUM = 0.1  # TVM's default batch_norm momentum (graphc's batch_norm has no momentum attribute)


def _data(call: relax_expr.Call) -> TensorStructInfo | None:
    sinfo = call.args[0].struct_info
    if isinstance(sinfo, TensorStructInfo) and sinfo.ndim >= 0 and not sinfo.is_unknown_dtype:
        return sinfo
    return None


def _expand_to(value, ndim: int, axis: int):
    """`value` (shaped like axis `axis` of an ndim-d tensor) with unit dims everywhere else."""
    others = [i for i in range(ndim) if i != axis]
    return ops.expand_dims(value, others) if others else value


def _normalize(x, mean, var, epsilon: float, dtype: str):
    """(x - mean) * rsqrt(var + epsilon)"""
    return ops.multiply(ops.subtract(x, mean), ops.rsqrt(ops.add(var, relax_expr.const(epsilon, dtype))))


def decompose_batch_norm(call: relax_expr.Call):
    """Inference batch_norm: normalize with the moving statistics; the tuple result is kept."""
    sinfo = _data(call)
    if sinfo is None:
        return call
    x, gamma, beta, mean, var = call.args
    axis = call.attrs["axis"] % sinfo.ndim
    expand = lambda v: _expand_to(v, sinfo.ndim, axis)  # noqa: E731
    out = _normalize(x, expand(mean), expand(var), call.attrs["epsilon"], sinfo.dtype)
    out = ops.add(ops.multiply(out, expand(gamma)), expand(beta))
    return relax_expr.Tuple([out, mean, var])


def decompose_layer_norm(call: relax_expr.Call):
    """layer_norm over its axes: (x - mean) * rsqrt(var + epsilon) * gamma + beta."""
    sinfo = _data(call)
    if sinfo is None:
        return call
    x, gamma, beta = call.args
    axes = [a % sinfo.ndim for a in call.attrs["axes"]]
    mean = ops.mean(x, axes, keepdims=True)
    var = ops.variance(x, axes, keepdims=True)
    out = _normalize(x, mean, var, call.attrs["epsilon"], sinfo.dtype)
    return ops.add(ops.multiply(out, gamma), beta)


def training_batch_norm(call: relax_expr.Call):
    """batch_norm with the batch's statistics; returns (output, new moving mean, new moving var)."""
    sinfo = _data(call)
    if sinfo is None:
        return call
    x, gamma, beta, moving_mean, moving_var = call.args
    axis = call.attrs["axis"] % sinfo.ndim
    reduce_axes = [i for i in range(sinfo.ndim) if i != axis]
    mean, var = ops.mean(x, reduce_axes), ops.variance(x, reduce_axes)
    inference = relax_expr.Call(call.op, [x, gamma, beta, mean, var], call.attrs)
    decomposed = decompose_batch_norm(inference)
    momentum, keep = relax_expr.const(_MOMENTUM, sinfo.dtype), relax_expr.const(1.0 - _MOMENTUM, sinfo.dtype)
    new_mean = ops.add(ops.multiply(keep, moving_mean), ops.multiply(momentum, decomposed.fields[1]))
    new_var = ops.add(ops.multiply(keep, moving_var), ops.multiply(momentum, decomposed.fields[2]))
    return relax_expr.Tuple([decomposed.fields[0], new_mean, new_var])


class _Decomposer(ExprMutator):
    def __init__(self, mod, rules: dict):
        super().__init__(mod)
        self.rules = rules

    def visit_Call(self, call):
        call = super().visit_Call(call)
        rule = self.rules.get(call.op.name) if isinstance(call.op, Op) else None
        return call if rule is None else rule(self.builder.normalize(call))


def _run(mod, rules: dict, func_name: str | None, pass_name: str):
    if func_name is not None and not (func_name in mod and isinstance(mod[func_name], relax_expr.Function)):
        names = ", ".join(gv.name_hint for gv, f in mod.items() if isinstance(f,
                                                                              relax_expr.Function)) or "none"
        raise ValueError(f"{pass_name}: the module has no Relax function {func_name!r} (its Relax functions: "
                         f"{names})")
    for gv, func in mod.items():
        if isinstance(func, relax_expr.Function) and func_name in (None, gv.name_hint):
            new = _Decomposer(mod, rules).visit_expr(func)
            if new is not func:
                mod[gv] = new
    return mod


@module_pass(opt_level=0, name="DecomposeOpsForInference")
class DecomposeOpsForInference:
    """Decompose batch_norm (moving statistics) into elementwise operators."""

    def __init__(self, func_name: str | None = None):
        self.func_name = func_name

    def transform_module(self, mod, ctx):
        rules = {"relax.nn.batch_norm": decompose_batch_norm}
        return _run(mod, rules, self.func_name, "DecomposeOpsForInference")


@module_pass(opt_level=0, name="DecomposeOpsForTraining")
class DecomposeOpsForTraining:
    """Decompose batch_norm (batch statistics, updated moving statistics) and layer_norm."""

    def __init__(self, func_name: str | None = None):
        self.func_name = func_name

    def transform_module(self, mod, ctx):
        rules = {"relax.nn.batch_norm": training_batch_norm, "relax.nn.layer_norm": decompose_layer_norm}
        return _run(mod, rules, self.func_name, "DecomposeOpsForTraining")
