#!/usr/bin/env bash
# Create .venv (if missing) and install graphc into it. Safe to run again.
#   scripts/install.sh          graphc and what it needs to run
#   scripts/install.sh test     plus what the test suite needs
#   scripts/install.sh bench    plus what benchmarks/models.py needs (transformers, ONNX Runtime, ...)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
# PyTorch: this pinned CPU build comes from local disk; an unpinned torch would pull a CUDA build.
.venv/bin/python -c "import torch" 2>/dev/null || "${PIP[@]}" "torch==2.13.0"
extras="torch"
[ "${1:-}" = "test" ] && extras="torch,test"
[ "${1:-}" = "bench" ] && extras="torch,test,bench"
"${PIP[@]}" -e ".[${extras}]"
