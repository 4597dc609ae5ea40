"""On-disk cache of compiled object code, keyed by LLVM IR, target and compiler versions.

The directory is `$GRAPHC_CACHE_DIR`, else `$XDG_CACHE_HOME/graphc`, else
`~/.cache/graphc`; `GRAPHC_CACHE=0` disables the cache. Entries are written atomically
(temporary file + rename); an unreadable or corrupted entry counts as a miss and is
rebuilt. `STATS` counts hits and misses for tests and tooling.

>>> k = cache_key("define void @f() { ret void }", "llvm -mcpu=x")
>>> len(k)
64
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from pathlib import Path

STATS = {"hits": 0, "misses": 0, "stores": 0}
_MAGIC = b"GCOBJ1"


def cache_dir() -> Path | None:
    """Where entries live, or None when caching is disabled."""
    if os.environ.get("GRAPHC_CACHE", "1").strip().lower() in ("0", "false", "off", "no"):
        return None
    if os.environ.get("GRAPHC_CACHE_DIR"):
        return Path(os.environ["GRAPHC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "graphc"


def cache_key(ir_text: str, target: str) -> str:
    import llvmlite
    import llvmlite.binding as llvm

    from .llvm.codegen import CODEGEN_VERSION

    h = hashlib.sha256()
    for part in (CODEGEN_VERSION, llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info)),
                 target, ir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def load(key: str) -> tuple[bytes, dict] | None:
    """(object code, info) for `key`, or None on a miss or a corrupted entry."""
    directory = cache_dir()
    if directory is None:
        return None
    path = directory / key[:2] / f"{key}.gcobj"
    try:
        data = path.read_bytes()
        if not data.startswith(_MAGIC):
            raise ValueError("bad magic")
        (size,) = struct.unpack_from("<Q", data, len(_MAGIC))
        start = len(_MAGIC) + 8
        info = json.loads(data[start:start + size])
        obj = data[start + size:]
        if hashlib.sha256(obj).hexdigest() != info.get("sha256"):
            raise ValueError("checksum mismatch")
    except (OSError, ValueError, struct.error):
        STATS["misses"] += 1
        return None
    STATS["hits"] += 1
    return obj, info


def store(key: str, obj: bytes, info: dict) -> None:
    """Write an entry atomically; failures to write are ignored (the cache is an optimisation)."""
    directory = cache_dir()
    if directory is None:
        return
    info = dict(info, sha256=hashlib.sha256(obj).hexdigest())
    header = json.dumps(info).encode()
    payload = _MAGIC + struct.pack("<Q", len(header)) + header + obj
    target_dir = directory / key[:2]
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target_dir, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, target_dir / f"{key}.gcobj")
        STATS["stores"] += 1
    except OSError:
        pass


def entry_path(key: str) -> Path | None:
    directory = cache_dir()
    return None if directory is None else directory / key[:2] / f"{key}.gcobj"
