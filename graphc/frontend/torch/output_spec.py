"""The shape of a program's result: torch.export's output spec as an "output_structure" attribute.

`main` returns the flat tuple of the program's output tensors; the model itself may return one
tensor, a dict, a `ModelOutput`, nested lists... `output_structure(ep, unwrapped)` describes how
to rebuild that value from the flat result, in the JSON grammar of `graphc.vm.outputs` (which
`vm["main"]` reads), or returns None when the flat result already is the model's value.
Constant outputs (a None, a number) are not returned by `main`; the structure holds them.

>>> import torch
>>> class M(torch.nn.Module):
...     def forward(self, x):
...         return {"double": x * 2, "pair": [x + 1, x - 1]}
>>> ep = torch.export.export(M(), (torch.ones(2),))
>>> output_structure(ep, [0, 1, 2], 3, unwrapped=False)
['dict', ['double', 'pair'], [0, ['list', [1, 2]]]]
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict

from ...errors import FrontendError


def output_structure(ep, leaves: list, num_returned: int, unwrapped: bool):
    """The "output_structure" of `ep`'s result, given per graph output its `leaves` entry (the
    index of its tensor in the tuple `main` returns, or a constant leaf); None when that tuple
    (or with `unwrapped` its one tensor) already is the model's result."""
    spec = getattr(ep.call_spec, "out_spec", None)
    if spec is None:
        return None
    kinds = [s.kind.name for s in ep.graph_signature.output_specs]
    user = iter([leaves[i] for i, kind in enumerate(kinds) if kind == "USER_OUTPUT"])
    structure = _node(spec, user)
    if unwrapped and structure == 0:
        return None
    if structure == ["tuple", list(range(num_returned))] and len(leaves) == num_returned:
        return None
    return structure


def _node(spec, leaves):
    if spec.is_leaf():
        return next(leaves)
    children = [_node(child, leaves) for child in _children(spec)]
    kind, context = spec.type, spec.context
    if kind is tuple:
        return ["tuple", children]
    if kind is list:
        return ["list", children]
    if kind in (dict, OrderedDict, defaultdict):
        keys = list(context[1] if kind is defaultdict else context)
        return ["dict", [_key(k) for k in keys], children]
    if kind is type(None):
        return None
    if isinstance(context, type) and issubclass(context, tuple) and hasattr(context, "_fields"):
        return ["namedtuple", context.__name__, list(context._fields), children]
    fields = getattr(kind, "__match_args__", None)  # torch.return_types.max and other structseqs
    if isinstance(kind, type) and issubclass(kind, tuple) and fields and len(fields) == len(children):
        return ["namedtuple", kind.__name__, list(fields), children]
    if isinstance(context, list | tuple) and len(context) == len(children) and \
            all(isinstance(k, str) for k in context):
        return ["record", getattr(kind, "__name__", str(kind)), list(context), children]
    name = getattr(kind, "__name__", kind)
    raise FrontendError(f"the program returns a {name}, whose fields graphc cannot name; return a tensor, "
                        "a tuple, a list, a dict or a ModelOutput")


def _children(spec) -> list:
    children = getattr(spec, "children", None)  # torch >= 2.10; children_specs before
    return list(children()) if callable(children) else list(spec.children_specs)


def _key(key):
    if isinstance(key, str | int) and not isinstance(key, bool):
        return key
    raise FrontendError(f"the program returns a dict with the key {key!r} ({type(key).__name__}); graphc "
                        "keeps str and int keys")


__all__ = ["output_structure"]
