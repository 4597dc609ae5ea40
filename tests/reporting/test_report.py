"""`graphc.report` and `graphc report`: the HTML page has every section with the right contents
(fused kernel names, profile rows, the pass list, each stage) for the tutorial MLP, a small CNN and
a small BERT; the page renders in headless Chromium where a Debian `chromium` is installed."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import graphc
from graphc.reporting import collect, dataflow_graph
from graphc.reporting.graph import layout_engine

STAGES = ["imported", "legalized", "fused", "scheduled", "lowered", "bytecode"]


class TutorialMLP(nn.Module):  # the tutorial's model, defined here as a user defines it
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 128), nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = (
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.Linear(8 * 4 * 4, 5),
        )

    def forward(self, x):
        y = torch.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return torch.softmax(self.fc(y.flatten(1)), -1)


def _sections(page: str) -> dict[str, str]:
    """Each <section id=...>'s HTML."""
    return dict(re.findall(r'<section id="([\w-]+)">(.*?)</section>', page, re.S))


@pytest.fixture(scope="module")
def mlp_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "mlp.html"
    torch.manual_seed(0)
    graphc.report(TutorialMLP(), "llvm", example_inputs=(torch.randn(1, 784),), path=path, layout="networkx")
    return path.read_text()


def test_mlp_report_has_every_section(mlp_page):
    sections = _sections(mlp_page)
    assert list(sections) == ["summary", "graph-section", "kernels", "compile-time", "stages"]
    summary = sections["summary"]
    assert (
        "TutorialMLP" in summary
        and "llvm" in summary
        and "1x784 float32" in summary
        and "1x10 float32" in summary
    )
    assert "101,770 in 4 tensors" in summary  # 784*128 + 128 + 128*10 + 10 parameters
    # the graph: the fused kernel drawn, clickable, with its member operators in the node data
    graph = sections["graph-section"]
    assert (
        'id="graph-data"' in graph and "fused_matmul_add_relu (3 ops)" in graph and 'class="gnode"' in graph
    )
    # the profile: a row per kernel with calls, times and achieved rates; links to the scheduled TIR
    kernels = sections["kernels"]
    assert '<a href="#fn-scheduled-fused_matmul_add_relu">fused_matmul_add_relu</a>' in kernels
    row = re.search(
        r"fused_matmul_add_relu</a></td><td class=\"l\">kernel</td><td class=\"l\">(\w+)</td>"
        r"<td>(\d+)</td><td>([\d.]+)</td>",
        kernels,
    )
    assert row and row.group(2) == "1" and float(row.group(3)) > 0
    assert "GFLOP/s" in kernels and "Peaks measured now" in kernels
    # compile time: the stages and every pass, with whether it changed the module
    compile_time = sections["compile-time"]
    for name in (
        "LegalizeOps",
        "FuseOps",
        "FuseTIR",
        "ApplyDefaultSchedule",
        "StaticPlanBlockMemory",
        "FlattenBuffer",
    ):
        assert f"{name}</td>" in compile_time, name
    assert re.search(r"compiling \d+ kernels for llvm", compile_time)
    assert "generating the bytecode" in compile_time
    assert "changed</span>" in compile_time and "no change</span>" in compile_time
    # stages: each function at each stage, highlighted, with diffs against the previous stage
    stages = sections["stages"]
    for stage in STAGES:
        assert f'id="stage-{stage}"' in stages
    assert (
        'id="fn-fused-fused_matmul_add_relu"' in stages
        and 'id="fn-scheduled-fused_matmul_add_relu"' in stages
    )
    assert 'class="hl-keyword"' in stages and 'class="d-add"' in stages
    assert "metadata:" in stages and "const_from_base64" not in mlp_page  # weights folded away


def test_mlp_report_is_self_contained(mlp_page):
    assert "http://" not in mlp_page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in mlp_page and "<link" not in mlp_page and " src=" not in mlp_page


def test_graph_colours_fused_kernels_by_their_strongest_member_pattern():
    torch.manual_seed(0)
    record = collect(SmallCNN().eval(), "llvm", example_inputs=(torch.randn(1, 3, 8, 8),), profile=False)
    graph = dataflow_graph(record.stage("fused"), record.fused_members)
    fused = [n for n in graph.nodes if n.kind == "fused"]
    assert fused and all(n.members for n in fused)
    conv = next(n for n in fused if any("conv2d" in m for m in n.members))
    assert conv.pattern_name == "out-elementwise-fusible"  # conv2d + batch norm + relu
    kinds = [n.kind for n in graph.nodes]
    assert kinds[0] == "input" and kinds[-1] == "output"
    assert all(e.label.endswith("float32") for e in graph.edges if e.target != graph.nodes[-1].id)


def test_cnn_report_profiles_with_given_inputs(tmp_path):
    torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype("float32")
    path = graphc.report(
        SmallCNN().eval(),
        "llvm",
        example_inputs=(torch.from_numpy(x),),
        inputs=[x],
        path=tmp_path / "cnn.html",
    )
    page = Path(path).read_text()
    kernels = _sections(page)["kernels"]
    names = re.findall(r'<a href="#fn-scheduled-([\w]+)">', kernels)
    assert any("conv2d" in n for n in names) and any("max_pool2d" in n or "pool" in n for n in names)
    assert f"layout by {layout_engine('auto')}" in page


def test_small_bert_report(tmp_path):
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        vocab_size=64,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = transformers.BertModel(config).eval()
    path = graphc.report(
        model, "llvm", example_inputs=(torch.randint(0, 64, (1, 8)),), path=tmp_path / "bert.html"
    )
    page = Path(path).read_text()
    sections = _sections(page)
    assert "BertModel" in sections["summary"] and "1x8 int64" in sections["summary"]
    graph = sections["graph-section"]
    assert "fused_take_add_add (3 ops)" in graph and "attention" in graph  # embeddings, self-attention
    rows = re.findall(r"<tr><td class=\"l\">(?:<a [^>]*>)?([\w.]+)", sections["kernels"])
    assert sum(1 for r in rows if not r.startswith("vm.")) >= 5
    assert len(page) < 10_000_000


def test_cuda_report_without_profile(tmp_path):
    """A GPU target compiles and reports its stages; the kernels are not timed here."""
    pytest.importorskip("cuda.bindings", reason="the CUDA back end needs NVRTC (cuda-bindings)")
    torch.manual_seed(0)
    path = graphc.report(
        TutorialMLP(), "cuda", example_inputs=(torch.randn(1, 784),), path=tmp_path / "gpu.html"
    )
    assert "not profiled" in _sections(Path(path).read_text())["kernels"]


def test_bad_layout_is_refused_before_compiling(tmp_path):
    with pytest.raises(ValueError, match="unknown graph layout 'circo'"):
        graphc.report(
            TutorialMLP(),
            "llvm",
            example_inputs=(torch.randn(1, 784),),
            layout="circo",
            path=tmp_path / "x.html",
        )
    assert not (tmp_path / "x.html").exists()


@pytest.mark.skipif(not shutil.which("dot"), reason="Graphviz's dot is not installed")
def test_dot_layout_keeps_node_ids(tmp_path):
    torch.manual_seed(0)
    path = graphc.report(
        TutorialMLP(),
        "llvm",
        example_inputs=(torch.randn(1, 784),),
        layout="dot",
        profile=False,
        path=tmp_path / "dot.html",
    )
    graph = _sections(Path(path).read_text())["graph-section"]
    assert 'id="n1" class="node gnode"' in graph and "layout by dot" in graph


FACTORY = """
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(12, 6), nn.Linear(6, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def make():
    return MLP().eval(), (torch.randn(2, 12),)
"""


def test_command_line_report(tmp_path):
    (tmp_path / "models.py").write_text(FACTORY)
    graphc_exe = Path(sys.executable).parent / "graphc"
    proc = subprocess.run(
        [str(graphc_exe), "report", "models.py:make", "--no-profile"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "-> models.html" in proc.stderr
    page = (tmp_path / "models.html").read_text()
    assert "fused_matmul_add_relu" in page and "not profiled (profile=False)" in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no Debian chromium installed (apt-get install chromium)")
def test_page_renders_in_headless_chromium(mlp_page, tmp_path):
    """The page's script runs without errors (it marks the body ready), the graph and the charts are
    in the rendered DOM, and a screenshot is saved."""
    page = tmp_path / "mlp.html"
    page.write_text(mlp_page)
    common = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--user-data-dir=" + str(tmp_path / "profile"),
    ]
    dom = subprocess.run(
        common + ["--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Error" in line], console
    assert 'data-ready="1"' in dom.stdout, "the page's script did not finish"
    assert dom.stdout.count('class="gnode"') >= 4 and dom.stdout.count('class="chart"') >= 3
    shot = tmp_path / "report.png"
    subprocess.run(
        common + [f"--screenshot={shot}", "--window-size=1280,1600", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000
