"""docs/passes.md: every Python code block runs, in order, in one namespace."""

import re
import runpy
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "passes.md"


def code_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_doc_has_the_examples_it_promises():
    text = DOC.read_text()
    blocks = code_blocks()
    assert len(blocks) >= 5
    for needle in ("dataflowblock_pass", "function_pass", "get_pipeline(\"zero\")", "PrintAfterAll",
                   "PassTimingInstrument", "relax.FoldConstant.max_output_bytes"):
        assert needle in text


def run_blocks(blocks, tmp_path) -> dict:
    """Run the blocks as one script file (the script decorators read their source)."""
    script = tmp_path / "docs_passes_example.py"
    script.write_text("\n\n".join(blocks))
    return runpy.run_path(str(script), run_name="docs_passes_example")


def test_code_blocks_run(tmp_path, capsys):
    namespace = run_blocks(code_blocks(), tmp_path)
    assert "RemoveDoubleRelu" in namespace and "count_calls" in namespace
    assert "Total:" in capsys.readouterr().out
