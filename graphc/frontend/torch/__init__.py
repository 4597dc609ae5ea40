"""The PyTorch frontend: `from_exported_program` turns a `torch.export.ExportedProgram` into a
Relax IRModule whose `main` computes the same thing.

>>> import torch
>>> from graphc.frontend.torch import from_exported_program
>>> class M(torch.nn.Module):
...     def forward(self, x):
...         return torch.relu(x) + 1.0
>>> ep = torch.export.export(M(), (torch.randn(2, 3),))
>>> mod = from_exported_program(ep)
>>> print(mod["main"].script())  # doctest: +NORMALIZE_WHITESPACE
# from graphc.script import relax as R
<BLANKLINE>
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32")):
    R.func_attr({"num_input": 1, "output_structure": 0})
    with R.dataflow():
        lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
        lv1: R.Tensor((2, 3), dtype="float32") = R.add(lv, R.const(1.0, "float32"))
        gv: R.Tuple(R.Tensor((2, 3), dtype="float32")) = (lv1,)
        R.output(gv)
    return gv
"""

from __future__ import annotations

from .converters import CONVERTERS
from .translator import ExportedProgramImporter


def from_exported_program(
    exported_program,
    *,
    keep_params_as_input: bool = False,
    unwrap_unit_return_tuple: bool = False,
    no_bind_return_tuple: bool = False,
    run_decompositions: bool = True,
):
    """Import `exported_program` (a `torch.export.ExportedProgram`) as an IRModule with `main`.

    - Parameters and buffers become constants, or with `keep_params_as_input=True` parameters
      of `main` after the user inputs, named after the program's placeholders (`p_fc1_weight`);
      `main`'s attribute `num_input` counts the user inputs, and `params` holds the values
      (`graphc.frontend.detach_params` takes them out).
    - The result is a tuple of the program's outputs; `unwrap_unit_return_tuple` returns a
      single output as itself, `no_bind_return_tuple` returns the tuple unbound. When the
      model returns something else (one tensor, a dict, a `ModelOutput`, nested lists), the
      function attribute `output_structure` says how to rebuild it, and `vm["main"]`
      returns it so (the `output_structure: 0` above: the model returns one tensor).
    - `run_decompositions`: first decompose the operators graphc has no direct conversion for
      with PyTorch's default decomposition table.
    - Dimensions declared with `torch.export.Dim` become symbolic `tir.Var`s; their ranges go
      to the function attributes `tir_var_lower_bound` / `tir_var_upper_bound`.

    Every ATen operator without a conversion is reported in one UnsupportedOperatorError.
    """
    ep = exported_program
    if run_decompositions:
        ep = _decompose(ep)
    importer = ExportedProgramImporter(
        ep, keep_params_as_input, unwrap_unit_return_tuple, no_bind_return_tuple
    )
    return importer.run()


def _decompose(ep):
    """Run PyTorch's default decompositions except for operators converted directly."""
    import torch

    from .converters.registry import op_key

    table = torch.export.default_decompositions()
    for overload in list(table):
        full, packet = op_key(overload)
        if full in CONVERTERS or packet in CONVERTERS:
            del table[overload]
    return ep.run_decompositions(table)


__all__ = ["from_exported_program"]
