"""Running a compiled model once, timing it, profiling it: `graphc.driver.run`, tvmc's `run`.

`run(exe, device="cpu", inputs=None)` calls the executable's "main" on `inputs` (a dict by
input name, a list in order, or the path of an `.npz` file), or on random inputs of the
right shapes and dtypes when there are none, and returns a `RunResult`: the outputs (shaped
like the model's), and with `benchmark=True` the times, with `profile=True` the per-kernel
table.

>>> import graphc, numpy as np
>>> from graphc.script import from_source
>>> exe = graphc.compile(from_source('''
... @I.ir_module
... class Module:
...     @R.function
...     def main(x: R.Tensor((2, 3), "float32")):
...         return R.multiply(x, R.const(2.0, "float32"))
... '''))
>>> input_signature(exe)
[('x', (2, 3), 'float32')]
>>> result = run(exe, inputs={"x": np.ones((2, 3), "float32")})
>>> result.named_outputs()["output_0"]
array([[2., 2., 2.],
       [2., 2., 2.]], dtype=float32)
"""

from __future__ import annotations

import os
import re

import numpy as np

from .errors import GraphcError
from .vm.outputs import flatten_named


class InputError(GraphcError, ValueError):
    """Inputs that do not fit the model: a missing or unknown name, or a shape that cannot be chosen."""


def _main(exe):
    index = exe.func_index.get("main")
    if index is None:
        names = ", ".join(exe.function_names)
        raise InputError(f"the executable has no function 'main' to run; it has {names}")
    return exe.functions[index]


def input_signature(exe) -> list[tuple[str, tuple | None, str | None]]:
    """(name, shape, dtype) of each parameter of "main"; a symbolic dimension is its name (a str),
    a parameter that is not a tensor has shape and dtype None."""
    entry = _main(exe)
    signature = entry.attrs.get("signature")
    if signature is None:  # an executable from a graphc that did not record it: names only
        return [(name, None, None) for name in entry.params]
    params, _ = signature
    return [(name, None if shape is None else tuple(shape), dtype) for name, shape, dtype in params]


def declared_ranges(exe) -> dict[str, tuple[int | None, int | None]]:
    """The declared range of each symbolic dimension of "main" (None: unbounded)."""
    signature = _main(exe).attrs.get("signature")
    return {} if signature is None else {k: tuple(v) for k, v in signature[1].items()}


def random_inputs(exe, seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for "main" by name: normal floats, 0/1 integers and booleans. A symbolic
    dimension takes the smallest size its declared range allows (at least 1)."""
    rng = np.random.default_rng(seed)
    ranges = declared_ranges(exe)
    inputs = {}
    for name, shape, dtype in input_signature(exe):
        if shape is None:
            raise InputError(f"input {name!r} is not a tensor (or this executable does not say); give the "
                             "inputs explicitly")
        dims = []
        for d in shape:
            if isinstance(d, str):
                if not d.isidentifier():
                    raise InputError(f"input {name!r} has the computed dimension {d!r}; give the inputs "
                                     "explicitly")
                lower = ranges.get(d, (None, None))[0]
                d = max(lower or 1, 1)
            dims.append(int(d))
        inputs[name] = _random(rng, tuple(dims), dtype)
    return inputs


def _random(rng, shape, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype == "bfloat16":
        import ml_dtypes

        return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)
    return rng.standard_normal(shape).astype(dtype)


def read_inputs(exe, inputs) -> list:
    """The positional inputs of "main" from a dict by name, a sequence, or an `.npz` path."""
    names = [name for name, _, _ in input_signature(exe)]
    if isinstance(inputs, str | os.PathLike):
        with np.load(inputs) as data:
            inputs = {key: data[key] for key in data.files}
        if sorted(inputs) == sorted(f"arr_{i}" for i in range(len(inputs))) and not set(inputs) & set(names):
            inputs = [inputs[f"arr_{i}"] for i in range(len(inputs))]  # np.savez(path, *arrays)
    if isinstance(inputs, dict):
        unknown = sorted(set(inputs) - set(names))
        missing = [n for n in names if n not in inputs]
        if unknown or missing:
            problem = f"no input named {', '.join(map(repr, unknown))}" if unknown else \
                f"input {', '.join(map(repr, missing))} missing"
            raise InputError(f"{problem}: the model's inputs are {', '.join(names)}")
        return [inputs[n] for n in names]
    inputs = list(inputs)
    if len(inputs) != len(names):
        raise InputError(f"the model takes {len(names)} inputs ({', '.join(names)}), got {len(inputs)}")
    return inputs


class RunResult:
    """What `run` returns: `outputs` (shaped like the model's result), `times` (a
    `BenchmarkResult` in seconds per call, or None) and `profile` (a `ProfileReport`, or None)."""

    def __init__(self, outputs, times=None, profile=None):
        self.outputs = outputs
        self.times = times
        self.profile = profile

    def named_outputs(self) -> dict[str, np.ndarray]:
        """Every output tensor as a numpy array, named by its place in the result: the keys of a
        dict (`logits`, `hidden_states.0`), else `output_0`, `output_1`, ..."""
        return {name: np.asarray(value.numpy() if hasattr(value, "numpy") else value)
                for name, value in flatten_named(self.outputs)}

    def save(self, path) -> None:
        """Write the outputs to an `.npz` file, under the names of `named_outputs`."""
        np.savez(path, **self.named_outputs())

    def format_times(self) -> str:
        return str(self.times) if self.times is not None else "(not timed: run with benchmark=True)"

    def __str__(self) -> str:
        lines = []
        for name, array in self.named_outputs().items():
            values = np.array2string(array.reshape(-1)[:6], precision=4, separator=", ")
            more = " ..." if array.size > 6 else ""
            lines.append(f"{name}: shape {array.shape}, dtype {array.dtype}: {values}{more}")
        if self.times is not None:
            lines.append(str(self.times))
        if self.profile is not None:
            lines.append(str(self.profile))
        return "\n".join(lines)

    __repr__ = __str__


def run(exe, device="cpu", inputs=None, *, benchmark: bool = False, repeat: int = 10, number: int = 1,
        profile: bool = False, seed: int = 0) -> RunResult:
    """Run the executable `exe` (or the path of a saved one) on `device` ("cpu", "cuda", ...).

    `inputs`: a dict by input name, a list in order, an `.npz` path, or None for random inputs
    (`random_inputs`). `benchmark=True` times `repeat` measurements of `number` calls each
    (`RunResult.times`: mean, median, min, max, std); `profile=True` times each kernel once.
    """
    from .runtime import device as make_device
    from .vm import Executable, VirtualMachine

    if isinstance(exe, str | os.PathLike):
        exe = Executable.load(exe)
    if not isinstance(exe, Executable):
        raise TypeError(f"run expects a graphc Executable or a saved one's path, got {type(exe).__name__}")
    dev = make_device(device) if isinstance(device, str) else device
    vm = VirtualMachine(exe, dev)
    args = read_inputs(exe, random_inputs(exe, seed) if inputs is None else inputs)
    outputs = vm["main"](*args)
    times = vm.time_evaluator("main", dev, number=number, repeat=repeat)(*args) if benchmark else None
    report = vm.profile("main", *args) if profile else None
    return RunResult(outputs, times, report)


def parse_shapes(text: str) -> dict[str, list[int]]:
    """tvmc's `--input-shapes`: "data:[1,3,224,224] mask:[1,224]" -> {"data": [1, 3, 224, 224], ...}.

    >>> parse_shapes("data:[1,3,224,224] mask:[1, 7]")
    {'data': [1, 3, 224, 224], 'mask': [1, 7]}
    """
    shapes = {}
    rest = text.strip()
    while rest:
        m = _SHAPE.match(rest)
        if m is None:
            raise ValueError(f"cannot read the input shapes {text!r} at {rest!r}; write name:[d0,d1,...] "
                             "for each input, separated by spaces")
        dims = [d.strip() for d in m["dims"].split(",") if d.strip()]
        if not all(re.fullmatch(r"\d+", d) for d in dims):
            raise ValueError(f"input {m['name']!r}: dimensions are non-negative integers, got [{m['dims']}]")
        shapes[m["name"]] = [int(d) for d in dims]
        rest = rest[m.end():].lstrip(" ,")
    return shapes


_SHAPE = re.compile(r"(?P<name>[^\s:\[\]]+(?::[^\s:\[\]]+)*?):\[(?P<dims>[^\]]*)\]")

__all__ = ["InputError", "RunResult", "input_signature", "parse_shapes", "random_inputs", "read_inputs",
           "run"]
