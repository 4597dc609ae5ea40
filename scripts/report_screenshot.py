"""Build the HTML report of a small model and take the README's screenshot of it.

    .venv/bin/python scripts/report_screenshot.py [--out docs/images/report.png] [--html report.html]

Needs Debian's chromium (`apt-get install chromium`) for the screenshot; the report itself needs
only graphc (and torch for this model). Graphviz's `dot` draws the graph when it is installed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

import graphc


class SmallConvNet(nn.Module):
    """A small image classifier: convolution, batch norm, ReLU, pooling, a linear layer and softmax."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.conv2, self.bn2 = nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.max_pool2d(torch.relu(self.bn2(self.conv2(x))), 2)
        return torch.softmax(self.fc(x.flatten(1)), -1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/images/report.png", help="the screenshot to write")
    parser.add_argument("--html", default=None, help="also keep the report at this path")
    opts = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("no chromium on PATH: apt-get install chromium", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(opts.html or Path(tmp) / "report.html").resolve()
        graphc.report(SmallConvNet().eval(), "llvm", example_inputs=(torch.randn(1, 3, 32, 32),), path=page,
                      title="SmallConvNet")
        out = Path(opts.out).resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={tmp}/profile", f"--screenshot={out}", "--window-size=1280,1500",
                        page.as_uri()], check=True, capture_output=True, timeout=300)
    print(f"wrote {out}" + (f" and {page}" if opts.html else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
