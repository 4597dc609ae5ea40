"""`vm.builtin.loop`: a loop run by the VM, its body a VM function called once per iteration.

The ONNX importer turns a `Loop` (and a `Scan`) whose trip count or condition is known only at
run time into a private Relax function for the body and one call of this builtin, which
calls the body until the trip count or the condition ends the loop. The body takes
`(iteration, condition, *carried, *captured)` and returns `(condition, *carried, *scanned)`;
the builtin threads the carried values through, keeps each iteration's scanned values and
stacks them along a new leading axis at the end. The loop is a Python `while`, so deep trip
counts use no stack, and each iteration costs one VM call.

>>> from graphc.runtime.tensor import Tensor
>>> def body(i, cond, total):  # total += i while i < 3
...     t = Tensor._from_host_array(total.numpy() + i.numpy())
...     return (Tensor._from_host_array(np.array(True)), t, t)
>>> m = Tensor._from_host_array(np.array(3, "int64"))
>>> total, seen = loop(body, 1, 1, "Loop 'l'", "float32:", 1, m, 0, 0,
...                    Tensor._from_host_array(np.array(0.0, "float32")))
>>> float(total.numpy()), seen.numpy().tolist()
(3.0, [0.0, 1.0, 3.0])
"""

from __future__ import annotations

import numpy as np

from ..runtime.tensor import Tensor
from .builtins import register_builtin
from .values import VMError


def _host(x) -> np.ndarray:
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _trip_count(trip, where: str) -> int:
    m = _host(trip)
    if m.size != 1:
        raise ValueError(f"{where}: the trip count M must be a scalar, got a tensor of shape {m.shape}")
    if m.dtype.kind not in "iu":
        raise ValueError(f"{where}: the trip count M must be an integer, got {m.dtype}")
    count = int(m.reshape(-1)[0])
    if count < 0:
        raise ValueError(f"{where}: the trip count M must not be negative, got {count}")
    return count


def _truth(cond, where: str) -> bool:
    c = _host(cond)
    if c.size != 1:
        raise ValueError(f"{where}: the loop condition must be a scalar, got a tensor of shape {c.shape}")
    return bool(c.reshape(-1)[0])


def _empty(spec: str) -> np.ndarray:
    """A scan output of no iterations: `spec` is "dtype:d0,d1,..." with '?' for sizes known only
    from an iteration (taken as 0)."""
    dtype, _, dims = str(spec).partition(":")
    shape = [0] + [int(d) if d not in ("?", "") else 0 for d in dims.split(",") if d]
    return np.zeros(shape, dtype=dtype)


@register_builtin("vm.builtin.loop", override=True)
def loop(
    body, n_carried: int, n_scan: int, where: str, scan_specs, has_trip: int, trip, has_cond: int, cond, *args
):
    """Run `body` for at most `trip` iterations (if `has_trip`) while its condition holds (if
    `has_cond`); `scan_specs` gives each scanned value's "dtype:shape" (";"-separated) for a loop of
    no iteration; `args` are the carried values' initial values, then the captured values.
    Returns the final carried values and the stacked scanned values, as one tuple."""
    n_carried, n_scan = int(n_carried), int(n_scan)
    for value in (trip, cond, *args):
        if isinstance(value, Tensor) and value.device.device_type != "cpu":
            raise VMError(
                f"{where}: loops run by the VM run on the CPU only; this one got a tensor on {value.device}"
            )
    carried = list(args[:n_carried])
    captured = list(args[n_carried:])
    limit = _trip_count(trip, where) if has_trip else None
    running = _truth(cond, where) if has_cond else True
    true = Tensor._from_host_array(np.array(True))
    scans: list[list] = [[] for _ in range(n_scan)]
    i = 0
    while running and (limit is None or i < limit):
        out = body(Tensor._from_host_array(np.array(i, dtype=np.int64)), true, *carried, *captured)
        running = _truth(out[0], where)
        carried = list(out[1 : 1 + n_carried])
        for k in range(n_scan):
            scans[k].append(_host(out[1 + n_carried + k]))  # numpy() copies
        i += 1
    stacked = []
    for k, pieces in enumerate(scans):
        if not pieces:
            stacked.append(Tensor._from_host_array(_empty(str(scan_specs).split(";")[k])))
            continue
        shapes = {p.shape for p in pieces}
        if len(shapes) != 1:
            raise ValueError(
                f"{where}: scan output {k} changes shape between iterations "
                f"({sorted(shapes)}); the iterations' values cannot be stacked"
            )
        stacked.append(Tensor._from_host_array(np.ascontiguousarray(np.stack(pieces))))
    return tuple(carried) + tuple(stacked)


__all__ = ["loop"]
