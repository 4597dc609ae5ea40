"""Results shaped like the model's: a VM function's "output_structure" attribute and its reader.

A model returns a tensor, a tuple, a dict, a Hugging Face `ModelOutput`, or any nesting of
them; the Relax `main` returns the flat tuple of its tensors (torch.export's order). An
importer records how to rebuild the model's value from that tuple in `main`'s function
attribute "output_structure", which `relax.build` carries into the executable, and
`vm["main"]` returns the rebuilt value. The structure is plain JSON:

    leaf        int i                               the i-th tensor of the flat result
    None        None                                a None the model returns
    constant    ["const", value]                    a number or string the model returns
    tuple       ["tuple", [node, ...]]
    list        ["list", [node, ...]]
    dict        ["dict", [key, ...], [node, ...]]   keys are str or int
    namedtuple  ["namedtuple", "Name", [field, ...], [node, ...]]
    record      ["record", "Name", [key, ...], [node, ...]]   ModelOutput-like classes: NamedOutputs

The flat result is the function's return value when it is a tuple, else the 1-tuple of it
(so a model returning one tensor gives that tensor whether or not the importer unwrapped it).

>>> read = reader(["dict", ["logits", "extra"], [1, ["list", [0, None]]]])
>>> read(("a", "b"))
{'logits': 'b', 'extra': ['a', None]}
>>> reader(0)(("t",)), reader(0)("t")
('t', 't')
>>> out = reader(["record", "CausalLMOutput", ["logits"], [0]])(("z",))
>>> out, out.logits, out[0]
(CausalLMOutput(logits='z'), 'z', 'z')
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

ATTR = "output_structure"


class NamedOutputs(dict):
    """The outputs of a model that returns a `ModelOutput`-like object: a dict of its fields
    that also reads them as attributes (`out.logits`) and by position (`out[0]`), as
    Hugging Face's `ModelOutput` does."""

    def __init__(self, type_name: str, items):
        super().__init__(items)
        self.type_name = type_name

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            fields = ", ".join(map(str, self))
            raise AttributeError(f"{self.type_name} has no field {name!r}; it has {fields}") from None

    def __getitem__(self, key):
        if isinstance(key, int) and not isinstance(key, bool) and key not in self:
            return list(self.values())[key]
        return super().__getitem__(key)

    def to_tuple(self) -> tuple:
        return tuple(self.values())

    def __repr__(self) -> str:
        return f"{self.type_name}({', '.join(f'{k}={v!r}' for k, v in self.items())})"


def validate(structure, where: str = "output_structure") -> int:
    """Check `structure` against the grammar above; the number of leaves it reads. ValueError if malformed."""
    count = 0

    def bad(node, why):
        raise ValueError(f"{where}: malformed node {node!r}: {why}")

    def walk(node):
        nonlocal count
        if node is None:
            return
        if isinstance(node, int) and not isinstance(node, bool):
            if node < 0:
                bad(node, "a leaf index is non-negative")
            count += 1
            return
        if isinstance(node, list | tuple) and len(node) == 2 and node[0] == "const":
            if not isinstance(node[1], bool | int | float | str):
                bad(node, "a constant is a number or a string")
            return
        if not isinstance(node, list | tuple) or not node or node[0] not in _ARITY:
            bad(node, f"expected an int, None, a constant or a list starting with one of {', '.join(_ARITY)}")
        if len(node) != _ARITY[node[0]]:
            bad(node, f"{node[0]} nodes have {_ARITY[node[0]]} entries")
        children = node[-1]
        if not isinstance(children, list | tuple):
            bad(node, "the children are a list")
        if node[0] in ("dict", "namedtuple", "record"):
            keys = node[-2]
            if not isinstance(keys, list | tuple) or len(keys) != len(children):
                bad(node, "one key per child")
            if any(not isinstance(k, str | int) or isinstance(k, bool) for k in keys):
                bad(node, "keys are str or int")
            named = isinstance(node[1], str) and all(isinstance(k, str) for k in keys)
            if node[0] != "dict" and not named:
                bad(node, "a type name and string field names")
        for child in children:
            walk(child)

    walk(structure)
    return count


_ARITY = {"tuple": 2, "list": 2, "dict": 3, "namedtuple": 4, "record": 4}


def reader(structure) -> Callable:
    """`read(result) -> the model-shaped value` for a validated `structure`."""
    validate(structure)
    if isinstance(structure, int):  # one tensor, the common case: no tuple to build
        return lambda result: result[structure] if type(result) is tuple else result
    build = _builder(structure)

    def read(result):
        return build(result if type(result) is tuple else (result,))

    return read


def _builder(node) -> Callable:
    if node is None:
        return lambda flat: None
    if isinstance(node, int):
        return lambda flat: flat[node]
    if node[0] == "const":
        value = node[1]
        return lambda flat: value
    kind, children = node[0], [_builder(c) for c in node[-1]]
    if kind == "tuple":
        return lambda flat: tuple(c(flat) for c in children)
    if kind == "list":
        return lambda flat: [c(flat) for c in children]
    keys = list(node[-2])
    if kind == "dict":
        return lambda flat: {k: c(flat) for k, c in zip(keys, children)}
    if kind == "namedtuple":
        cls = namedtuple(node[1], keys)
        return lambda flat: cls(*(c(flat) for c in children))
    name = node[1]
    return lambda flat: NamedOutputs(name, [(k, c(flat)) for k, c in zip(keys, children)])


def flatten_named(value, prefix: str = "") -> list[tuple[str, object]]:
    """(name, tensor) for every tensor of a model-shaped value, named by its path ("logits",
    "hidden_states.0"); a lone tensor or the fields of a top-level tuple are "output_0", ...

    >>> flatten_named({"a": 1, "b": [2, 3]})
    [('a', 1), ('b.0', 2), ('b.1', 3)]
    >>> flatten_named((1, (2, None))), flatten_named(5)
    ([('output_0', 1), ('output_1.0', 2)], [('output_0', 5)])
    """
    def walk(v, path):
        if v is None:
            return []
        if isinstance(v, dict):
            return [item for k, x in v.items() for item in walk(x, f"{path}.{k}" if path else str(k))]
        if isinstance(v, list | tuple):
            return [item for i, x in enumerate(v) for item in walk(x, f"{path}.{i}")]
        return [(path, v)]

    if isinstance(value, dict):
        return walk(value, prefix)
    if isinstance(value, list | tuple):
        return [item for i, x in enumerate(value) for item in walk(x, f"{prefix}output_{i}")]
    return [(f"{prefix}output_0", value)]


__all__ = ["ATTR", "NamedOutputs", "flatten_named", "reader", "validate"]
