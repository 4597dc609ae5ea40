"""The script syntax: `I.`/`T.`/`R.` namespaces, the printer and the parser.

`script(node)` / `show(node)` print IR as Python text; `@T.prim_func`, `@I.ir_module` and
`from_source(text)` parse it back (never running the code), so that
`structural_equal(from_source(script(x)), x)` holds for every IR form.
`from graphc.script import relax as R` gives the Relax syntax (`@R.function`, `R.Tensor`,
every registered operator as `R.<name>`); its printer and parser live in `printer/relax*.py`
and `parser/relax*.py`.
Other IRs plug in through `printer.register_function_printer` (printing functions inside
modules) and `parser.entry.FUNCTION_PARSERS` (keyed by the id of their decorator object).

>>> from graphc.script import tir as T
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4,), "float32")):
...     for i in range(4):
...         A[i] = T.float32(0.0)
... ''')
>>> type(f).__name__
'PrimFunc'
"""

from . import ir, tir
from .printer import expr_text, script, show


def from_source(text: str, globals_dict=None):
    """Parse script text (an `@I.ir_module` class or a `@T.prim_func` function)."""
    from .parser.entry import from_source as _from_source

    return _from_source(text, globals_dict)


def ir_module(cls=None, *, check_well_formed: bool = True, s_tir: bool = True):
    """`@graphc.script.ir_module` (TVM's `tvm.script.ir_module`): the same as `@I.ir_module`."""
    from .parser.entry import ir_module_decorator

    if cls is None:
        return lambda c: ir_module_decorator(c)
    return ir_module_decorator(cls)


def __getattr__(name):
    if name in ("parser", "relax"):  # imported on first use: relax pulls in graphc.relax
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'graphc.script' has no attribute {name!r}")


__all__ = ["expr_text", "from_source", "ir", "ir_module", "relax", "script", "show", "tir"]
