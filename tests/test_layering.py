"""DESIGN.md's import rules, read from the source: imports point down the layers.

`ir` <- `tir` <- `te` <- `topi` <- `relax` <- `frontend`; `dlight` and `target` sit on `tir`;
`vm` sits on `runtime`; `runtime` and `vm` never import the compiler, so a saved executable runs
without it; `script` and `driver.py` may see everything. Every import counts, function-local
ones included, except that `ir` may reach the printers in `script` at call time. A forbidden
edge fails naming the file and line.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "graphc"

# subpackage -> the subpackages it may import (besides itself); "errors" is open to everyone
ALLOWED = {
    "ir": set(),
    "runtime": {"ir"},
    "vm": {"ir", "runtime"},
    "tir": {"ir"},
    "te": {"ir", "tir"},
    "topi": {"ir", "tir", "te"},
    "target": {"ir", "tir", "runtime"},
    "dlight": {"ir", "tir", "target"},
    "relax": {"ir", "tir", "te", "topi", "target", "runtime", "vm"},
    "frontend": {"ir", "tir", "te", "topi", "relax", "runtime"},
    "script": {"ir", "tir", "te", "topi", "relax", "target", "runtime", "vm", "dlight", "frontend"},
    # the tuner sits beside the driver: it schedules with dlight and measures through the runtime
    "tune": {"ir", "tir", "te", "topi", "relax", "target", "runtime", "vm", "dlight"},
}
# (importer, imported) pairs allowed only inside a function body (resolved at call time)
LAZY_ONLY = {
    ("ir", "script"),
    # the tuner compiles through the driver (and graphc.build), reports through graphc.progress
    ("tune", "driver"), ("tune", "progress"), ("tune", "__version__"), ("tune", "graphc"),
}
# modules that may import only graphc.errors at module level (everything else loads on first use)
EAGER_FREE = {"graphc"}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _imports(path: Path):
    """(imported graphc module, line, at module level?) for every import in `path`."""
    name, is_package = _module_name(path)
    tree = ast.parse(path.read_text(), str(path))
    function_nodes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            function_nodes.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - (node.level - 1) - (0 if is_package else 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names] if target == "graphc" else [target]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for imported in names:
            if imported == "graphc" or imported.startswith("graphc."):
                yield imported, node.lineno, id(node) not in function_nodes


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "graphc"


def _violations():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, _ = _module_name(path)
        source = _layer(module)
        where = path.relative_to(PACKAGE.parent)
        for imported, line, eager in _imports(path):
            target = _layer(imported)
            if module in EAGER_FREE and eager and target != "errors":
                found.append(f"{where}:{line}: {module} imports {imported} at import time")
            if source not in ALLOWED or target in (source, "errors"):
                continue
            if target in ALLOWED[source] or ((source, target) in LAZY_ONLY and not eager):
                continue
            found.append(f"{where}:{line}: {source} must not import {target} ({imported})")
    return found


def test_imports_point_down_the_layers():
    violations = _violations()
    assert not violations, "layering violations (see DESIGN.md, section 2):\n" + "\n".join(violations)


def test_the_checker_sees_function_local_imports(tmp_path, monkeypatch):
    package = tmp_path / "graphc"
    (package / "tir").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tir" / "__init__.py").write_text("")
    (package / "tir" / "bad.py").write_text("def f():\n    from ..relax import expr\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert _violations() == ["graphc/tir/bad.py:2: tir must not import relax (graphc.relax)"]


@pytest.mark.parametrize("statement", ["import graphc.runtime", "import graphc.vm"])
def test_the_runtime_imports_no_compiler_module(statement):
    script = (
        f"import sys; {statement}\n"
        "compiler = ('graphc.tir', 'graphc.relax', 'graphc.te', 'graphc.topi', 'graphc.frontend',\n"
        "            'graphc.target', 'graphc.script', 'graphc.dlight', 'graphc.driver')\n"
        "print(sorted(m for m in sys.modules if m.startswith(compiler)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "[]"
