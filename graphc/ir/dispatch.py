"""Type-keyed dispatch for visitors: `visit_<NodeClass>` found once per node type, then cached.

>>> class Names:
...     def visit_int(self, x):
...         return "int"
...     def visit_object(self, x):
...         return "other"
>>> dispatch(Names(), True), dispatch(Names(), "s")
('int', 'other')
"""

from __future__ import annotations


def dispatch(visitor, node, kind: str = "node"):
    """Call `visitor.visit_<C>(node)` for the first class C in `type(node).__mro__` it defines.

    The choice is cached per visitor class and node class, so the MRO walk happens once.
    """
    table = type(visitor).__dict__.get("_dispatch_table")
    if table is None:
        table = {}
        type(visitor)._dispatch_table = table
    cls = type(node)
    method = table.get(cls)
    if method is None:
        for base in cls.__mro__:
            method = getattr(type(visitor), f"visit_{base.__name__}", None)
            if method is not None:
                break
        if method is None:
            raise TypeError(f"{type(visitor).__name__} cannot visit {kind} {cls.__name__}")
        table[cls] = method
    return method(visitor, node)
