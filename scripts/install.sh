#!/usr/bin/env bash
# Create .venv (if missing) and install graphc into it. Safe to run again.
#   scripts/install.sh          graphc and what it needs to run
#   scripts/install.sh test     plus what the test suite needs: the GPU extras (pyopencl, NVRTC),
#                               the tuner's (scikit-learn, matplotlib)
#                               and, as root where apt-get exists, PoCL (an OpenCL platform for
#                               the CPU) so that the OpenCL tests run kernels
#   scripts/install.sh bench    plus what benchmarks/models.py needs (transformers, ONNX Runtime, ...)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
# PyTorch: this pinned CPU build comes from local disk; an unpinned torch would pull a CUDA build.
.venv/bin/python -c "import torch" 2>/dev/null || "${PIP[@]}" "torch==2.13.0"
extras="torch"
[ "${1:-}" = "test" ] && extras="torch,test,opencl,cuda,tune"
[ "${1:-}" = "bench" ] && extras="torch,test,bench,tune"
"${PIP[@]}" -e ".[${extras}]"
if [ "${1:-}" = "test" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
        && ! dpkg -s pocl-opencl-icd >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pocl-opencl-icd; } >/dev/null \
        || echo "install.sh: could not install pocl-opencl-icd; the OpenCL tests will be skipped" >&2
fi
