"""The script parser. `graphc.script.parser.ir`, `.tir` and `.relax` are the script namespaces
(`I`, `T`, `R`), as in TVM (`from tvm.script.parser import relax as R`)."""


def __getattr__(name):
    if name in ("ir", "tir", "relax"):
        import importlib

        return importlib.import_module(f"graphc.script.{name}")
    raise AttributeError(f"module 'graphc.script.parser' has no attribute {name!r}")
