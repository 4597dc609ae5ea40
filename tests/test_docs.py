"""Every example in README.md and docs/*.md runs: the ```python and ```sh blocks of each page,
in the page's order, in a scratch directory. The Python blocks of a page share one module (so
a later block uses what an earlier one defined, and the script decorators can read their
source); the shell blocks run with bash (`set -e`) and this environment's `graphc` first on the
PATH. Blocks fenced otherwise (``` alone, ```text) show output or set-up commands and do not run.
"""

import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(python|sh)\n(.*?)^```", re.S | re.M)


def blocks(page: Path) -> list[tuple[str, str, int]]:
    """(language, code, first line) of each runnable block of `page`."""
    text = page.read_text()
    return [(m[1], m[2], text.count("\n", 0, m.start(2)) + 1) for m in BLOCK.finditer(text)]


def test_the_pages_have_examples():
    counts = {page.name: len(blocks(page)) for page in PAGES}
    assert counts["README.md"] >= 5 and counts["cli.md"] >= 4 and counts["passes.md"] >= 7, counts


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_examples_run(page, tmp_path, monkeypatch, capsys):
    found = blocks(page)
    if not found:
        return  # a page of prose and tables
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    # One file holding the page's Python blocks at their own line numbers: tracebacks point into
    # the page, and inspect finds the source of what the blocks define.
    lines = page.read_text().count("\n") + 1
    source = [""] * lines
    for language, code, first in found:
        if language == "python":
            for i, line in enumerate(code.splitlines()):
                source[first - 1 + i] = line
    script = tmp_path / f"doc_{page.stem}.py"
    script.write_text("\n".join(source))
    module = types.ModuleType(f"doc_{page.stem}")
    module.__file__ = str(script)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for language, code, first in found:
        if language == "python":
            exec(compile("\n" * (first - 1) + code, str(script), "exec"), module.__dict__)
        else:
            proc = subprocess.run(["bash", "-e", "-c", code], cwd=tmp_path, env=env, capture_output=True,
                                  text=True, timeout=600)
            assert proc.returncode == 0, f"{page.name}, line {first}:\n{code}\n{proc.stdout}\n{proc.stderr}"
    capsys.readouterr()
