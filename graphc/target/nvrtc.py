"""CUDA C to PTX and cubins with NVRTC (PyPI `cuda-bindings` + `nvidia-cuda-nvrtc`; no GPU needed).

`compile_cuda(source, "sm_80")` returns the cubin for that architecture, the PTX and what
ptxas reported for each kernel (`--ptxas-options=-v`): registers, stack frame, spill stores
and loads, shared memory. Results go into the object-code cache like CPU code, keyed by the
source, the architecture and the NVRTC version.

>>> usage = parse_ptxas_log('''ptxas info    : Compiling entry function 'k' for 'sm_90'
... ptxas info    : Function properties for k
... ptxas         .     0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
... ptxas info    : Used 10 registers, used 1 barriers, 256 bytes smem''')
>>> usage["k"]["registers"], usage["k"]["spill_stores"], usage["k"]["smem"]
(10, 8, 256)
"""

from __future__ import annotations

import hashlib
import re

from ..errors import CodegenError, TargetError
from . import cache

OPTIONS = ("--std=c++17", "--ptxas-options=-v")


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as err:
        raise TargetError("CUDA code generation needs NVRTC: the Python packages cuda-bindings and "
                          "nvidia-cuda-nvrtc are not installed (pip install 'graphc[cuda]')") from err
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as exc:  # noqa: BLE001 - the bindings raise their own loader errors
        raise TargetError(f"CUDA code generation needs NVRTC, which could not be loaded: {exc}; install "
                          "nvidia-cuda-nvrtc (pip install 'graphc[cuda]')") from exc
    return nvrtc, f"{major}.{minor}"


def nvrtc_version() -> str | None:
    """The NVRTC version ("13.5"), or None when NVRTC is not installed."""
    try:
        return _nvrtc()[1]
    except TargetError:
        return None


def _check(nvrtc, result, what: str, prog=None) -> None:
    code = result[0] if isinstance(result, tuple) else result
    if code != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        log = _log(nvrtc, prog) if prog is not None else ""
        raise CodegenError(f"NVRTC failed to {what}: {code.name}\n{log}")


def _log(nvrtc, prog) -> str:
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    buf = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return buf.decode(errors="replace").rstrip("\x00 \n")


def compile_cuda(source: str, arch: str = "sm_80") -> tuple[bytes, str, str]:
    """(cubin, PTX, compiler log) of CUDA C `source` for `arch` (e.g. "sm_90"), cached."""
    if not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise TargetError(f"CUDA architecture {arch!r} should look like sm_80")
    nvrtc, version = _nvrtc()
    h = hashlib.sha256()
    for part in ("graphc-nvrtc-1", version, arch, " ".join(OPTIONS), source):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()
    hit = cache.load(key)
    if hit is not None:
        cubin, info = hit
        return cubin, info["ptx"], info["log"]
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"graphc.cu", 0, [], [])
    _check(nvrtc, err, "create a program")
    try:
        options = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in OPTIONS)]
        result = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        _check(nvrtc, result, f"compile the generated CUDA C for {arch}", prog)
        log = _log(nvrtc, prog)
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        cubin = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetCUBIN(prog, cubin), "emit the cubin", prog)
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        ptx = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetPTX(prog, ptx), "emit PTX", prog)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    ptx_text = ptx.decode().rstrip("\x00")
    cache.store(key, cubin, {"ptx": ptx_text, "log": log, "arch": arch})
    return cubin, ptx_text, log


_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
_PROPS = re.compile(r"Function properties for (\w+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def parse_ptxas_log(log: str) -> dict:
    """Per kernel: registers, stack, spill_stores, spill_loads, smem (bytes) from ptxas `-v` output."""
    usage: dict = {}
    current = None
    for line in log.splitlines():
        m = _ENTRY.search(line) or _PROPS.search(line)
        if m:
            current = usage.setdefault(m.group(1), {"registers": 0, "stack": 0, "spill_stores": 0,
                                                    "spill_loads": 0, "smem": 0})
            continue
        if current is None:
            continue
        m = _FRAME.search(line)
        if m:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
            continue
        m = _USED.search(line)
        if m:
            current["registers"] = int(m.group(1))
            current["smem"] = int(m.group(2) or 0)
    return usage


def ptx_info(ptx: str) -> dict:
    """The PTX ISA version and target of `ptx` ({"version": "9.5", "target": "sm_90"})."""
    version = re.search(r"^\.version\s+(\S+)", ptx, re.M)
    target = re.search(r"^\.target\s+(\S+)", ptx, re.M)
    return {"version": version.group(1) if version else "", "target": target.group(1) if target else ""}


__all__ = ["compile_cuda", "nvrtc_version", "parse_ptxas_log", "ptx_info"]
