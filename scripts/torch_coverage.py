"""Regenerate docs/torch_frontend.md: the PyTorch frontend's guide and its Core ATen coverage table.

    .venv/bin/python scripts/torch_coverage.py            # rewrite docs/torch_frontend.md
    .venv/bin/python scripts/torch_coverage.py --check    # exit 1 when the file is out of date

The Core ATen operators are the overloads the installed torch tags `torch.Tag.core`. Each gets
one status:

- direct: a converter in graphc/frontend/torch/converters/ handles it;
- importer: a size computation the importer itself turns into PrimExprs (sym_size, ...);
- decomposition: `from_exported_program` decomposes it with PyTorch's default table first, and
  a tiny program using it (SAMPLES below) imports; the operators it becomes are listed;
- not supported, with the reason (REASONS below, or the converter's `rejects` attribute for a
  converter that exists only to refuse the operator with a clear message).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphc.frontend.torch import from_exported_program  # noqa: E402
from graphc.frontend.torch.converters import CONVERTERS, lookup, op_key  # noqa: E402

DOC = ROOT / "docs" / "torch_frontend.md"

IMPORTER = {
    "aten.sym_size.int": "a size: becomes a PrimExpr (a `tir.Var` for a `torch.export.Dim`)",
    "aten.sym_numel.default": "a size: the product of the dims as a PrimExpr",
    "aten.sym_stride.int": "a static stride of a contiguous tensor, or a PrimExpr",
    "aten.sym_storage_offset.default": "a static storage offset, or a PrimExpr",
}

_BACKWARD = "a backward (training) operator; graphc imports inference graphs"
_RANDOM = "random numbers: graphc has no random generator; pass random tensors as inputs"
_COMPLEX = "complex tensors: graphc has no complex dtypes"
REASONS = {
    "aten.rand.default": _RANDOM,
    "aten.randn.default": _RANDOM,
    "aten.randperm.default": _RANDOM,
    "aten._fft_r2c.default": _COMPLEX,
    "aten._fft_c2r.default": _COMPLEX,
    "aten.atan2.out": "an out= variant, which functional exported graphs do not contain (atan2.default is "
    "converted)",
    "aten.sym_is_contiguous.default": "a contiguity query on symbolic strides: not answered yet (graphc "
    "tensors are always contiguous)",
}

NOTES = {
    "aten.index.Tensor": "integer index tensors (any number, broadcast); boolean masks are refused "
    "(data-dependent shape)",
    "aten.index_put.default": "integer indices, or one boolean mask with a single value",
    "aten.as_strided.default": "contiguous inputs at storage offset 0, static sizes",
    "aten.diagonal.default": "static sizes of the two diagonal dims",
    "aten._native_batch_norm_legit.default": "training=False only (training updates running stats)",
    "aten.native_dropout.default": "train=False or p=0",
    "aten.avg_pool2d.default": "divisor_override without ceil_mode",
    "aten.scatter_reduce.two": "include_self=True",
    "aten.nonzero.default": "refused with a clear error",
    "aten._local_scalar_dense.default": "refused with a clear error",
    "aten.erfinv.default": "rational approximation plus one Newton step",
    "aten._embedding_bag.default": "1-d indices with offsets; only the first result may be used",
    "aten.max_pool2d_with_indices.default": "only the values; the indices result is refused",
    "aten.max_pool3d_with_indices.default": "only the values; the indices result is refused",
    "aten._native_batch_norm_legit.no_stats": "statistics of the batch",
    "aten.upsample_nearest2d.vec": "through `image.resize2d`",
    "aten.upsample_bilinear2d.vec": "through `image.resize2d`",
    "aten.grid_sampler_2d.default": "through `image.grid_sample`",
    "aten.sort.default": "stable sort",
    "aten.convolution.default": "1-3 spatial dims; transposed: 1-2 spatial dims",
}


def _core_ops() -> list[str]:
    names = []
    for attr in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, attr, None)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        for overload in packet.overloads():
            target = getattr(packet, overload)
            if torch.Tag.core in target.tags:
                names.append((op_key(target)[0], target))
    return sorted(names)


def _col2im_sample():
    return (lambda x: torch.nn.functional.fold(x, (3, 3), 2)), (torch.randn(1, 8, 4),)


SAMPLES = {"aten.col2im.default": _col2im_sample}


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _decomposed_into(name: str) -> list[str] | None:
    """The operators a sample using `name` becomes after decomposition, if it imports; else None."""
    sample = SAMPLES.get(name)
    if sample is None:
        return None
    fn, inputs = sample()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = torch.export.export(_Fn(fn).eval(), inputs)
        from_exported_program(ep)
        decomposed = torch.export.export(_Fn(fn).eval(), inputs).run_decompositions()
    return sorted({op_key(n.target)[0] for n in decomposed.graph.nodes if n.op == "call_function"})


def classify() -> list[tuple[str, str, str]]:
    """(operator, status, detail) for every Core ATen overload."""
    table = {op_key(o)[0] for o in torch.export.default_decompositions()}
    rows = []
    for name, target in _core_ops():
        fn = lookup(target)
        if name in IMPORTER:
            rows.append((name, "importer", IMPORTER[name]))
        elif fn is not None and getattr(fn, "rejects", None):
            rows.append((name, "not supported", fn.rejects))
        elif fn is not None:
            rows.append((name, "direct", f"`{fn.__module__.rsplit('.', 1)[-1]}.py`; " + NOTES.get(name, "")))
        elif name in table and (into := _decomposed_into(name)) is not None:
            rows.append((name, "decomposition", "into " + ", ".join(f"`{o}`" for o in into)))
        elif "backward" in name:
            rows.append((name, "not supported", _BACKWARD))
        else:
            rows.append((name, "not supported", REASONS.get(name, "not yet")))
    return [(n, s, d.rstrip("; ").strip()) for n, s, d in rows]


def render() -> str:
    rows = classify()
    count = {s: sum(1 for _, st, _ in rows if st == s) for s in ("direct", "importer", "decomposition")}
    covered = sum(count.values())
    core = {r[0] for r in rows}
    others = sorted(n for n in CONVERTERS if n.startswith("aten.") and n not in core)
    extra = [n for n in others if not getattr(CONVERTERS[n], "rejects", None)]
    refused = [n for n in others if getattr(CONVERTERS[n], "rejects", None)]
    lines = [
        "# The PyTorch frontend",
        "",
        "<!-- generated by scripts/torch_coverage.py; edit the script, not this file -->",
        "",
        f"**Core ATen coverage: {covered} of {len(rows)} operator overloads** "
        f"({count['direct']} converted directly, {count['decomposition']} through PyTorch's "
        f"decompositions, {count['importer']} as size arithmetic in the importer); "
        f"{len(rows) - covered} not supported. Counted against torch {torch.__version__.split('+')[0]}'s "
        "`torch.Tag.core` operators; graphc also converts "
        f"{len(extra)} further ATen names (listed at the end).",
        "",
        *_GUIDE,
        "",
        "## Core ATen operators",
        "",
        "| operator | status | converter module; notes, or why not |",
        "|---|---|---|",
    ]
    lines += [f"| `{n}` | {s} | {d} |" for n, s, d in rows]
    lines += [
        "",
        "## Other ATen names with a converter",
        "",
        "Operators outside the core set that graphc converts directly (PyTorch's default "
        "decompositions are skipped for these), by overload or, without an overload, for "
        "every overload of the name:",
        "",
        ", ".join(f"`{n}`" for n in extra),
        "",
        "Refused with a clear error (the output shape depends on the data): "
        + ", ".join(f"`{n}`" for n in refused)
        + ".",
        "",
    ]
    return "\n".join(lines)


_GUIDE = """\
## Importing a program

```python
import torch
from graphc.frontend.torch import from_exported_program

model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU())
example = torch.randn(4, 16)
with torch.no_grad():
    ep = torch.export.export(model.eval(), (example,))
mod = from_exported_program(ep)              # an IRModule with "main"
```

Options of `from_exported_program(ep, *, ...)`:

- `keep_params_as_input=False`: parameters and buffers become constants. With `True` they
  become parameters of `main` after the user inputs, named after the program's placeholders
  (`p_fc1_weight`); the function attribute `num_input` counts the user inputs and `params`
  holds the values, which `graphc.frontend.detach_params(mod)` takes out.
- `unwrap_unit_return_tuple=False`: `main` returns a tuple of the program's outputs; with
  `True` a single output is returned as itself. Either way the VM returns what the model
  returns (see "The shape of the result").
- `no_bind_return_tuple=False`: with `True` the returned tuple is built in the return
  expression instead of bound to a variable in the dataflow block.
- `run_decompositions=True`: first run PyTorch's default decomposition table, minus the
  operators graphc converts directly, so that composite operators (`mish`, `lerp`,
  `logsumexp`, ...) arrive as operators graphc knows. `False` imports the graph as exported.

## Dynamic shapes

Dimensions declared with `torch.export.Dim` become symbolic `tir.Var`s of `main`'s
signature, named after PyTorch's symbols (such as `s31`), and their ranges go to the function
attributes `tir_var_lower_bound` / `tir_var_upper_bound`. One compiled executable serves every
size in range:

```python
batch = torch.export.Dim("batch", min=1, max=64)
ep = torch.export.export(model, (example,), dynamic_shapes={"input": {0: batch}})
mod = from_exported_program(ep)
# def main(input: R.Tensor(("s31", 16), dtype="float32")) -> ...:
#     R.func_attr({"num_input": 1, "tir_var_lower_bound": {"s31": 1}, "tir_var_upper_bound": {"s31": 64}})
```

The compiled model checks each input against these ranges on entry: a size outside its range
raises a `ValueError` naming the input, the dimension and the range (the memory plan is sized
by the upper bounds):

```python
import graphc, numpy as np

exe = graphc.compile(mod)
print(exe(np.ones((64, 16), "float32")).shape)   # (64, 8)
try:
    exe(np.ones((65, 16), "float32"))
except ValueError as err:
    print(err)   # main: input 'input', dimension 0 (s31) is 65, outside its declared range [1, 64]: ...
```

Size arithmetic (`sym_size`, products and floor divisions of sizes) becomes PrimExprs.
A few converters need static sizes where they build index tables at import time
(`diagonal`, `as_strided`, `unfold`, `median`, `_pdist_forward`); they say so when a size is
symbolic.

## The shape of the result

`main` returns the flat tuple of the program's output tensors, in torch.export's order. When
the model returns something else (one tensor, a dict, nested lists, a named tuple, a
`torch.return_types` value, a Hugging Face `ModelOutput`), the importer records how to
rebuild it from `torch.export`'s output spec in `main`'s attribute `output_structure`, and
`vm["main"]` (and `exe(...)`) return it so: one tensor as itself, tuples and lists as tuples
and lists, dicts as dicts, named tuples as named tuples, a `ModelOutput` as
`graphc.vm.NamedOutputs` (a dict of its fields that also reads them as attributes,
`out.logits`, and by position, `out[0]`). Constant outputs (`None`, numbers) come back as
themselves. `vm.invoke("main", ...)` still returns the flat tuple.

```python
class Heads(torch.nn.Module):
    def forward(self, x):
        return {"scores": x.softmax(-1), "parts": [x + 1, None]}

exe = graphc.compile(Heads(), example_inputs=(torch.randn(2, 3),))
out = exe(torch.randn(2, 3))
print(sorted(out), type(out["parts"]).__name__, out["parts"][1])   # ['parts', 'scores'] list None
```

## Unsupported operators and arguments

Before converting anything, the importer checks every node: a program using operators
graphc has no converter for stops with one `UnsupportedOperatorError` listing each of them
with its number of uses and the first node using it:

```
UnsupportedOperatorError: the program uses 3 operator(s) graphc cannot import yet:
  aten.randn.default: 1 use(s), first at node 'randn' (%randn : ... = call_function[...])
  aten.view_as_complex.default: 1 use(s), first at node 'view_as_complex' (...)
  aten.view_as_real.default: 1 use(s), first at node 'view_as_real' (...)
```

Every converter reads every argument of its operator or checks that the argument has its
default; an argument value a converter does not support stops the import with a
`FrontendError` naming the operator, the node, the argument and the value
(`aten.avg_pool2d.default (node 'avg_pool2d'): divisor_override=3 is not supported together
with ceil_mode`). Operators whose output shape depends on the data (`nonzero`,
`masked_select`, boolean-mask indexing) are refused the same way.

Most converters emit Relax operators; elementwise functions with no Relax operator of their
own (`atan`, `log1p`, `expm1`, shifts, ...) become a `call_tir` of a one-line TE compute on
the matching TIR intrinsic.
"""
_GUIDE = _GUIDE.splitlines()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the doc is out of date")
    text = render()
    if parser.parse_args().check:
        if DOC.read_text() != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run scripts/torch_coverage.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(text.splitlines()[4])
    return 0


if __name__ == "__main__":
    sys.exit(main())
