"""Size and build time of `graphc.report` pages for full-size models (random weights from configs).

    .venv/bin/python benchmarks/report_size.py [--models bert-base resnet-50] [--no-profile]

Prints, per model: the page's size, the time to build it (compile every stage, profile one run,
draw the graph, render), and how that time splits between compiling and the rest.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import torch

import graphc


def bert_base():
    import transformers

    config = transformers.BertConfig()  # bert-base-uncased's shape: 12 layers, hidden 768
    return transformers.BertModel(config).eval(), (torch.randint(0, config.vocab_size, (1, 128)),)


def resnet_50():
    import transformers

    config = transformers.ResNetConfig()  # microsoft/resnet-50's shape
    return transformers.ResNetForImageClassification(config).eval(), (torch.randn(1, 3, 224, 224),)


MODELS = {"bert-base": bert_base, "resnet-50": resnet_50}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--no-profile", action="store_true")
    opts = parser.parse_args()
    torch.manual_seed(0)
    print(f"{'model':12s} {'size MB':>8s} {'build s':>8s} {'compile s':>10s}")
    for name in opts.models:
        model, inputs = MODELS[name]()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{name}.html")
            start = time.perf_counter()
            graphc.report(model, "llvm", example_inputs=inputs, path=path, profile=not opts.no_profile)
            total = time.perf_counter() - start
            size = os.path.getsize(path) / 1e6
            with open(path) as f:
                compile_s = float(f.read().split("compile time</th><td class=\"l\">")[1].split(" s<")[0])
        print(f"{name:12s} {size:8.2f} {total:8.1f} {compile_s:10.1f}", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
