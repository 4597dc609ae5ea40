"""Type-keyed dispatch: the rule for a node is the one for the nearest class in its MRO.

Every lookup in graphc that walks a class hierarchy (visitors, printers, the interpreter,
code generators, rule tables) goes through here, once per type: a `TypeTable` maps a class
to the value `resolve` gives the first class of its `__mro__` (the class itself first) that
has one, and remembers the answer.

- `method_table(Visitor, "visit_")`: node class -> the function `Visitor.visit_<C>`;
- `rule_table({Add: f, CmpOp: g})`: node class -> the rule of its nearest base in the dict;
- `dispatch(visitor, node)`: call `visitor.visit_<C>(node)` (what the IR functors use).

>>> class Names:
...     def visit_int(self, x):
...         return "int"
...     def visit_object(self, x):
...         return "other"
>>> dispatch(Names(), True), dispatch(Names(), "s")
('int', 'other')
>>> rules = rule_table({int: "an int", object: "something"})
>>> rules[bool], rules[str]
('an int', 'something')
"""

from __future__ import annotations


class TypeTable(dict):
    """class -> value, filled on first use of each class by walking its MRO.

    `resolve(base)` gives the value for one class of the MRO, or None; the first non-None
    answer wins. When no class in the MRO has one, the value is `fallback(cls)` (None
    without a fallback). Hot loops index the table directly: `table[type(node)]`.

    >>> table = TypeTable(lambda base: {int: "int"}.get(base), fallback=lambda cls: cls.__name__)
    >>> table[bool], table[str], str in table
    ('int', 'str', True)
    """

    __slots__ = ("resolve", "fallback")

    def __init__(self, resolve, fallback=None):
        super().__init__()
        self.resolve = resolve
        self.fallback = fallback

    def __missing__(self, cls: type):
        for base in cls.__mro__:
            value = self.resolve(base)
            if value is not None:
                break
        else:
            value = self.fallback(cls) if self.fallback is not None else None
        self[cls] = value
        return value


def rule_table(rules: dict) -> TypeTable:
    """A `TypeTable` over the `{class: rule}` dict `rules` (which it reads, never changes).

    A rule added to `rules` after the table answered for a subclass needs `table.clear()`.

    >>> rule_table({int: "int"})[bool]
    'int'
    """
    table = TypeTable(rules.get)
    table.update(rules)
    return table


def method_table(visitor_cls: type, prefix: str = "visit_") -> TypeTable:
    """node class -> the function `visitor_cls.<prefix><C>` for the nearest class C in its MRO.

    One table per visitor class and prefix, kept on the class (subclasses get their own).
    Values are plain functions: call them as `method(visitor, node, ...)`; None means the
    visitor has no method for the node.

    >>> class P:
    ...     def print_int(self, x):
    ...         return f"int {x}"
    >>> method_table(P, "print_")[bool](P(), True), method_table(P, "print_")[str]
    ('int True', None)
    """
    attr = "_dispatch_" + prefix
    table = visitor_cls.__dict__.get(attr)
    if table is None:
        table = TypeTable(lambda base: getattr(visitor_cls, prefix + base.__name__, None))
        setattr(visitor_cls, attr, table)
    return table


def dispatch(visitor, node, kind: str = "node"):
    """Call `visitor.visit_<C>(node)` for the first class C in `type(node).__mro__` it defines.

    Raises TypeError naming the visitor and the `kind` of node when there is none.
    """
    cls = type(visitor)
    table = cls.__dict__.get("_dispatch_visit_")
    if table is None:
        table = method_table(cls)
    method = table[type(node)]
    if method is None:
        raise TypeError(f"{cls.__name__} cannot visit {kind} {type(node).__name__}")
    return method(visitor, node)
