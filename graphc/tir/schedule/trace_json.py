"""Traces as JSON: `Trace.to_json()` / `Trace.from_json(obj)`, for tuning records.

The form is `{"format": "graphc.trace/1", "insts": [...]}`, one object per instruction:
`{"name", "args", "kwargs", "outputs"}` plus `"decision"` and `"info"` (a SampleInfo) for a
sampling instruction. Values: JSON's own for None, bools, numbers, strings and lists;
`{"tuple": [...]}`, `{"dict": {...}}`; a handle `{"rv": k, "t": "b" | "l"}`, numbered in the
order the instructions made them; an expression `{"expr": [class, {field: value}]}` with
variables `{"var": name, "dtype": ...}`; an index map `{"index_map": {"params": [[name, dtype]],
"outputs": [expr, ...]}}`; a buffer by its name. A variable that is not an index map's
parameter is one of the function's (a symbolic shape): `apply_to` finds it by name in the
schedule's function.

>>> from graphc import te, tir
>>> A = te.placeholder((64,), name="A")
>>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
>>> sch = tir.Schedule(te.create_prim_func([A, B]))
>>> (i,) = sch.get_loops("B")
>>> f = sch.sample_perfect_tile(i, n=2, decision=[8, 8])
>>> _ = sch.split(i, f)
>>> obj = sch.trace.to_json()
>>> print(Trace.from_json(obj))
l0, = sch.get_loops("B")
v1 = sch.sample_perfect_tile(l0, n=2, max_innermost_factor=16, decision=[8, 8])
l2, l3 = sch.split(l0, [8, 8])
"""

from __future__ import annotations

import json

from ...errors import ScheduleError
from .. import expr as _expr
from ..buffer import Buffer
from ..expr import PrimExpr, Var
from .sampling import SampleInfo
from .trace import BlockRV, IndexMap, LoopRV, Trace, is_rv

FORMAT = "graphc.trace/1"
# expression nodes a trace argument may hold (calls and loads never appear in primitive arguments)
_EXPR_CLASSES = {
    cls.__name__: cls
    for cls in vars(_expr).values()
    if isinstance(cls, type) and issubclass(cls, PrimExpr) and cls.__name__ not in (
        "PrimExpr", "Call", "BufferLoad", "Let", "Shuffle", "EqualOp", "NotEqualOp")
}  # fmt: skip


def trace_to_json(trace: Trace) -> dict:
    ids: dict = {}
    insts = []
    for inst in trace.insts:
        obj = {
            "name": inst.name,
            "args": [_encode(a, ids) for a in inst.args],
            "kwargs": {k: _encode(v, ids) for k, v in inst.kwargs.items()},
            "outputs": _encode_outputs(inst.outputs, ids),
        }
        if inst.is_sample:
            obj["decision"] = inst.decision
            obj["info"] = inst.info.to_json() if inst.info is not None else None
        insts.append(obj)
    out = {"format": FORMAT, "insts": insts}
    json.dumps(out)  # fail here, not when a database writes it
    return out


def trace_from_json(obj) -> Trace:
    if isinstance(obj, str):
        obj = json.loads(obj)
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise ScheduleError(f"not a graphc trace (expected format {FORMAT!r}): {str(obj)[:80]}")
    rvs: dict = {}
    free: dict = {}
    trace = Trace()
    for k, inst in enumerate(obj["insts"]):
        try:
            args = tuple(_decode(a, rvs, free) for a in inst["args"])
            kwargs = {key: _decode(v, rvs, free) for key, v in inst["kwargs"].items()}
            outputs = _decode_outputs(inst["outputs"], rvs, free)
            info = SampleInfo.from_json(inst["info"]) if inst.get("info") else None
        except (KeyError, TypeError, ValueError) as err:
            name = inst.get("name", "?") if isinstance(inst, dict) else "?"
            raise ScheduleError(f"trace instruction {k} ({name}) is malformed: {err}") from None
        trace.append(inst["name"], args, kwargs, outputs, decision=inst.get("decision"), info=info)
    trace.free_vars_by_name = True
    trace._json_free_vars = free
    return trace


# -- encoding ------------------------------------------------------------------------------------


def _encode(x, ids: dict):
    if x is None or isinstance(x, bool | int | float | str):
        return x
    if is_rv(x):
        if id(x) not in ids:
            raise ScheduleError(f"the trace uses handle {x!r} before any instruction made it")
        return {"rv": ids[id(x)]}
    if isinstance(x, list):
        return [_encode(y, ids) for y in x]
    if isinstance(x, tuple):
        return {"tuple": [_encode(y, ids) for y in x]}
    if isinstance(x, dict):
        return {"dict": {str(k): _encode(v, ids) for k, v in x.items()}}
    if isinstance(x, IndexMap):
        return {"index_map": {"params": [[p.name, p.dtype] for p in x.params],
                              "outputs": [_encode_expr(e) for e in x.outputs]}}  # fmt: skip
    if isinstance(x, PrimExpr):
        return {"expr": _encode_expr(x)}
    if isinstance(x, Buffer):
        return x.name
    raise ScheduleError(f"cannot write a trace argument of type {type(x).__name__} as JSON: {x!r}")


def _encode_outputs(x, ids: dict):
    if is_rv(x):
        ids[id(x)] = len(ids)
        return {"rv": ids[id(x)], "t": "b" if isinstance(x, BlockRV) else "l"}
    if isinstance(x, list | tuple) and any(is_rv(y) for y in x):
        return [_encode_outputs(y, ids) for y in x]
    return _encode(x, ids)


def _encode_expr(e) -> object:
    if isinstance(e, bool | int | float):
        return e
    if isinstance(e, Var):
        return {"var": e.name, "dtype": e.dtype}
    cls = type(e).__name__
    if cls not in _EXPR_CLASSES:
        raise ScheduleError(f"cannot write expression {e} ({cls}) in a trace")
    import dataclasses

    fields = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        fields[f.name] = _encode_expr(v) if isinstance(v, PrimExpr) else v
    return [cls, fields]


# -- decoding ------------------------------------------------------------------------------------


def _decode(x, rvs: dict, free: dict, bound=None):
    if isinstance(x, list):
        return [_decode(y, rvs, free) for y in x]
    if not isinstance(x, dict):
        return x
    if "rv" in x:
        return rvs[x["rv"]]
    if "tuple" in x:
        return tuple(_decode(y, rvs, free) for y in x["tuple"])
    if "dict" in x:
        return {k: _decode(v, rvs, free) for k, v in x["dict"].items()}
    if "index_map" in x:
        params = [Var(name, dtype) for name, dtype in x["index_map"]["params"]]
        scope = {p.name: p for p in params}
        return IndexMap(params, [_decode_expr(e, free, scope) for e in x["index_map"]["outputs"]])
    if "expr" in x:
        return _decode_expr(x["expr"], free, {})
    raise ValueError(f"unknown value {x!r}")


def _decode_outputs(x, rvs: dict, free: dict):
    if isinstance(x, dict) and "rv" in x and "t" in x:
        rv = BlockRV("?", "?") if x["t"] == "b" else LoopRV(Var(f"l{x['rv']}"), "?")
        rvs[x["rv"]] = rv
        return rv
    if isinstance(x, list) and any(isinstance(y, dict) and "t" in y for y in x):
        return [_decode_outputs(y, rvs, free) for y in x]
    return _decode(x, rvs, free)


def _decode_expr(e, free: dict, scope: dict):
    if isinstance(e, bool | int | float):
        return e
    if isinstance(e, dict) and "var" in e:
        if e["var"] in scope:
            return scope[e["var"]]
        if e["var"] not in free:
            free[e["var"]] = Var(e["var"], e["dtype"])
        return free[e["var"]]
    cls_name, fields = e
    cls = _EXPR_CLASSES[cls_name]
    args = {k: _decode_expr(v, free, scope) if isinstance(v, dict | list) else v for k, v in fields.items()}
    return cls(**args)


# -- applying ------------------------------------------------------------------------------------


def free_var_resolver(sch, trace: Trace):
    """A function putting the schedule's own variables (by name) in place of the free variables
    JSON trace `trace` read."""
    from ..functor import substitute

    func = sch.mod[sch.func_name]
    own: dict = {}
    for p in func.params:
        own.setdefault(p.name, p)
    for buf in func.buffer_map.values():
        for e in (*buf.shape, *(buf.strides or ()), buf.elem_offset):
            for v in _vars_in(e):
                own.setdefault(v.name, v)
    free = getattr(trace, "_json_free_vars", {})
    vmap = {var: own[name] for name, var in free.items() if name in own}

    def resolve(x):
        if not vmap:
            return x
        if isinstance(x, IndexMap):
            return IndexMap(x.params, [resolve(e) for e in x.outputs])
        if isinstance(x, PrimExpr):
            return substitute(x, vmap)
        if isinstance(x, list | tuple):
            return type(x)(resolve(y) for y in x)
        if isinstance(x, dict):
            return {k: resolve(v) for k, v in x.items()}
        return x

    return resolve


def _vars_in(e) -> list:
    from ..analysis.var_use import used_vars

    if e is None or not isinstance(e, PrimExpr):
        return []
    return list(used_vars(e))


__all__ = ["FORMAT", "free_var_resolver", "trace_from_json", "trace_to_json"]
