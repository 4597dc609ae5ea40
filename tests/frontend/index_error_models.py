"""Run operators' index-error cases in this process and print the outcomes as JSON lines.

`python index_error_models.py NAME...` exports each model NAME of `MODELS` (one torch
operator whose memory addresses come from an index tensor), compiles it once with graphc,
then runs it on each index value of its case list (both ends of the valid range, one past
each end, and far past it) and finally on good inputs again. It prints `{"model", "input"}`,
then for each run `{"model", "value", "outcome": "ok" | "IndexError" | <other exception>,
"message", "matches"}`, where `matches` says whether graphc's result equals torch's.
`test_torch_index_errors.py` runs this in a subprocess per operator family, so that a crash
fails that test instead of killing the test session.
"""

import inspect
import json
import sys

import numpy as np
import torch

import graphc
from graphc import relax
from graphc.frontend.torch import from_exported_program

FAR = 10**9


class Embedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        return self.emb(ids)


def Fn(fn) -> torch.nn.Module:  # noqa: N802 - builds a module class
    """A module whose forward is `fn`, with `fn`'s parameter names (the exported inputs' names)."""
    names = ", ".join(inspect.signature(fn).parameters)
    scope: dict = {}
    exec(f"def forward(self, {names}):\n    return self.fn({names})", scope)  # noqa: S102
    module = type("Fn", (torch.nn.Module,), {"forward": scope["forward"]})()
    module.fn = fn
    return module


def _x(*shape):
    return torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape) + 1.0


def _scatter(reduce_fn):
    """A scatter along dim 0 of a (5, 3) tensor with a (2, 3) index whose [0, 1] is varied."""
    return {
        "model": Fn(lambda x, idx, src: reduce_fn(x, idx, src)),
        "inputs": lambda v: (_x(5, 3), torch.tensor([[0, v, 2], [4, 1, 0]]), _x(2, 3) * 10),
        "index_arg": 1,
        "valid": (0, 5),
    }


# name -> model, inputs(v) with the varied index value v, which input holds it, the valid range,
# and the words the IndexError must contain (the Relax call and the torch operator)
MODELS = {
    "embedding": {
        "model": Embedding(),
        "inputs": lambda v: (torch.tensor([[1, v, 3]]),),
        "index_arg": 0,
        "valid": (0, 10),
        "names": ["R.take", "aten.embedding.default", "module emb (Embedding)"],
    },
    "gather": {
        "model": Fn(lambda x, idx: torch.gather(x, 0, idx)),
        "inputs": lambda v: (_x(5, 4), torch.tensor([[0, v, 2, 4], [1, 1, 1, 1]])),
        "index_arg": 1,
        "valid": (0, 5),
        "names": ["R.gather_elements", "aten.gather.default"],
    },
    "index_select": {
        "model": Fn(lambda x, idx: x.index_select(0, idx)),
        "inputs": lambda v: (_x(4, 3), torch.tensor([0, v, 3])),
        "index_arg": 1,
        "valid": (0, 4),
        "names": ["R.take", "aten.index_select.default"],
    },
    "index_tensor": {  # x[idx]: Python's rule, -1 is the last row
        "model": Fn(lambda x, idx: x[idx]),
        "inputs": lambda v: (_x(4, 3), torch.tensor([0, v, -1])),
        "index_arg": 1,
        "valid": (-4, 4),
        "names": ["R.take", "aten.index.Tensor"],
    },
    "index_tensor_2d": {  # x[i, j]: one gather_nd over both axes, the second index varied
        "model": Fn(lambda x, i, j: x[i, j]),
        "inputs": lambda v: (_x(4, 5), torch.tensor([0, 3, -1]), torch.tensor([1, v, 2])),
        "index_arg": 2,
        "valid": (-5, 5),
        "names": ["R.gather_nd", "aten.index.Tensor(x, [i, j])", "for axis 1 of x"],
    },
    "scatter": {**_scatter(lambda x, i, s: x.scatter(0, i, s)),
                "names": ["R.scatter_elements", "aten.scatter.src"]},
    "scatter_value": {**_scatter(lambda x, i, s: x.scatter(0, i, 7.0)),
                      "names": ["R.scatter_elements", "aten.scatter.value"]},
    "scatter_add": {**_scatter(lambda x, i, s: x.scatter_add(0, i, s)),
                    "names": ["R.scatter_elements", 'reduction="add"', "aten.scatter_add.default"]},
    "scatter_multiply": {**_scatter(lambda x, i, s: x.scatter(0, i, s, reduce="multiply")),
                         "names": ["R.scatter_elements", 'reduction="mul"', "aten.scatter.reduce"]},
    "scatter_reduce_sum": {**_scatter(lambda x, i, s: x.scatter_reduce(0, i, s, "sum")),
                           "names": ["R.scatter_elements", 'reduction="add"', "aten.scatter_reduce.two"]},
    "scatter_reduce_prod": {**_scatter(lambda x, i, s: x.scatter_reduce(0, i, s, "prod")),
                            "names": ["R.scatter_elements", 'reduction="mul"', "aten.scatter_reduce.two"]},
    "scatter_reduce_mean": {**_scatter(lambda x, i, s: x.scatter_reduce(0, i, s, "mean")),
                            "names": ["R.scatter_elements", 'reduction="mean"', "aten.scatter_reduce.two"]},
    "scatter_reduce_amax": {**_scatter(lambda x, i, s: x.scatter_reduce(0, i, s, "amax")),
                            "names": ["R.scatter_elements", 'reduction="max"', "aten.scatter_reduce.two"]},
    "scatter_reduce_amin": {**_scatter(lambda x, i, s: x.scatter_reduce(0, i, s, "amin", include_self=False)),
                            "names": ["R.scatter_elements", "aten.scatter_reduce.two", "'amin'"]},
    "index_put": {  # x[idx] = v: Python's rule, as for reading
        "model": Fn(lambda x, idx, v: torch.index_put(x, (idx,), v)),
        "inputs": lambda v: (_x(4, 3), torch.tensor([0, v]), _x(2, 3) * 10),
        "index_arg": 1,
        "valid": (-4, 4),
        "names": ["R.scatter_nd", 'reduction="update"', "aten.index_put.default"],
    },
    "index_put_accumulate": {
        "model": Fn(lambda x, idx, v: torch.index_put(x, (idx,), v, accumulate=True)),
        "inputs": lambda v: (_x(4, 3), torch.tensor([0, v]), _x(2, 3) * 10),
        "index_arg": 1,
        "valid": (-4, 4),
        "names": ["R.scatter_nd", 'reduction="add"', "aten.index_put.default"],
    },
    "one_hot": {
        "model": Fn(lambda idx: torch.nn.functional.one_hot(idx, 5)),
        "inputs": lambda v: (torch.tensor([0, v, 4]),),
        "index_arg": 0,
        "valid": (0, 5),
        "names": ["R.one_hot", "aten.one_hot.default"],
    },
}


def values(valid) -> list:
    """Both ends of [lo, hi), one past each end, and far past both."""
    lo, hi = valid
    return [lo, hi - 1, lo - 1, hi, FAR, -FAR]


def run(name: str) -> None:
    spec = MODELS[name]
    model = spec["model"].eval()
    example = spec["inputs"](0)
    with torch.no_grad():
        ep = torch.export.export(model, example)
    vm = relax.VirtualMachine(graphc.compile(from_exported_program(ep)), graphc.cpu())
    input_name = [n.name for n in ep.graph.nodes if n.op == "placeholder" and n.name in
                  ep.graph_signature.user_inputs][spec["index_arg"]]
    print(json.dumps({"model": name, "input": input_name}), flush=True)
    lo, hi = spec["valid"]
    for v in [*values(spec["valid"]), lo]:  # the last run: good input after the errors
        inputs = spec["inputs"](v)
        record = {"model": name, "value": v}
        try:
            got = vm["main"](*[t.numpy() for t in inputs])
            got = got[0] if isinstance(got, tuple) else got
            with torch.no_grad():
                expected = model(*inputs)
            record["outcome"] = "ok"
            record["matches"] = bool(np.array_equal(got.numpy(), expected.numpy()))
        except IndexError as err:
            record["outcome"], record["message"] = "IndexError", str(err)
        except Exception as err:  # noqa: BLE001 - reported to the test, which fails on it
            record["outcome"], record["message"] = type(err).__name__, str(err)
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    for model_name in sys.argv[1:]:
        run(model_name)
