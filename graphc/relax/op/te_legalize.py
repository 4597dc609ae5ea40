"""Building legalizations: `call_topi(fn, name, kwargs_of)` makes `legalize(bb, call)` for an op.

The legalization calls `bb.call_te(fn, *call.args, primfunc_name_hint=name, **kwargs_of(call))`,
so the PrimFunc is the TE compute of `fn` on placeholders shaped like the call's arguments.
`register_topi_op` registers an operator whose legalization is exactly that, with the call's
attributes as the keyword arguments.

>>> from graphc import relax, topi
>>> legalize = call_topi(topi.exp, "tir_exp")
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     call = legalize(bb, relax.op.exp(x))
...     _ = bb.emit_func_output(bb.emit(call))
>>> call
R.call_tir(tir_exp, (x,), out_sinfo=R.Tensor((2,), dtype="float32"))
"""

from __future__ import annotations

from collections.abc import Callable

from .registry import Op, OpPatternKind, register_op


def call_topi(fn: Callable, name: str, kwargs_of: Callable | None = None) -> Callable:
    """The legalization `bb.call_te(fn, *call.args, **kwargs_of(call))` with PrimFunc name `name`."""

    def legalize(bb, call):
        kwargs = kwargs_of(call) if kwargs_of is not None else {}
        return bb.call_te(fn, *call.args, primfunc_name_hint=name, **kwargs)

    legalize.__name__ = f"legalize_{name}"
    return legalize


def attrs_as_kwargs(*keys: str, rename: dict | None = None) -> Callable:
    """`kwargs_of` passing the call's attributes `keys` (renamed through `rename`) to the compute."""
    rename = rename or {}

    def kwargs_of(call) -> dict:
        return {rename.get(k, k): call.attrs.get(k) for k in keys}

    return kwargs_of


def register_topi_op(name: str, num_inputs: int, infer_struct_info: Callable, compute: Callable, *,
                     pattern: OpPatternKind, description: str, attrs: dict | None = None,
                     rename: dict | None = None, prim_name: str | None = None,
                     float_only: bool = False) -> Op:
    """Register operator `name`, legalized to `compute` on its arguments and attributes.

    Each attribute of `attrs` (renamed through `rename`) is passed to `compute` as a keyword
    argument; the PrimFunc is named `prim_name`, by default the operator's last name part.
    `relax.nn.layer_norm` is one such operator:

    >>> info = Op.get("relax.nn.layer_norm").info
    >>> info.legalize.__name__, sorted(info.attrs)
    ('legalize_layer_norm', ['axes', 'epsilon'])
    """
    kwargs_of = attrs_as_kwargs(*attrs, rename=rename) if attrs else None
    legalize = call_topi(compute, prim_name or name.rsplit(".", 1)[-1], kwargs_of)
    return register_op(name, num_inputs, infer_struct_info, legalize=legalize, pattern=pattern, attrs=attrs,
                       description=description, float_only=float_only)
