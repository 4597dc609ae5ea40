"""LLVM IR text to object code: LLVM's O3 pipeline and machine-code emission, here or in workers.

llvmlite serialises every call into LLVM behind one process-wide lock, so threads cannot
compile in parallel; processes can. `WorkerPool` keeps worker processes that run this file
as a script: each reads requests (IR text and the target machine's settings) from its stdin
and writes back the object code and the optimized IR. The file imports only llvmlite and
the standard library, so a worker starts in a fraction of a second and never imports graphc
(nor anything of the program that started it).

>>> obj, ll = compile_text("define i32 @f() {\\n  ret i32 7\\n}\\n", "", "", "", 3)
>>> len(obj) > 0 and "ret i32 7" in ll
True
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
import time

import llvmlite.binding as llvm

_READY: list[bool] = []
_LOCK = threading.Lock()


def _ensure_llvm() -> None:
    with _LOCK:
        if not _READY:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            _READY.append(True)


def target_machine(triple: str, cpu: str, features: str, opt: int):
    """A target machine (defaults: the host's triple, CPU and features)."""
    _ensure_llvm()
    triple = triple or llvm.get_process_triple()
    if not cpu:
        cpu = llvm.get_host_cpu_name()
        features = features or llvm.get_host_cpu_features().flatten()
    return llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=min(max(opt, 0), 3), reloc="pic", codemodel="jitdefault")


def optimize(llmod, tm, opt_level: int) -> None:
    """Run LLVM's default per-module pipeline at `opt_level` (new pass manager)."""
    pto = llvm.PipelineTuningOptions(speed_level=min(max(opt_level, 0), 3))
    if opt_level >= 2:
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(llmod, pb)


def parse_linked(ir_text):
    """The LLVM module of `ir_text`, or of a list of texts linked into one (their private and
    internal names may clash: the linker renames them)."""
    if isinstance(ir_text, str):
        return llvm.parse_assembly(ir_text)
    llmod = llvm.parse_assembly(ir_text[0])
    for text in ir_text[1:]:
        llmod.link_in(llvm.parse_assembly(text))
    return llmod


def compile_text(ir_text, triple: str, cpu: str, features: str, opt: int,
                 optimizer=optimize) -> tuple[bytes, str]:
    """(object code, optimized IR text) of `ir_text` (a text, or a list of texts to link into
    one module); RuntimeError when LLVM rejects it."""
    tm = target_machine(triple, cpu, features, opt)
    llmod = parse_linked(ir_text)
    llmod.verify()
    llmod.triple = tm.triple
    llmod.data_layout = str(tm.target_data)
    optimizer(llmod, tm, opt)
    return tm.emit_object(llmod), str(llmod)


# -- the wire format: 8-byte length, then a pickle ------------------------------------------------

_HEADER = struct.Struct("<Q")


def _send(stream, value) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream):
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the worker closed its pipe")
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the worker closed its pipe")
    return pickle.loads(data)  # noqa: S301 - only from a worker this process started


def serve(stdin=None, stdout=None) -> None:
    """The worker's loop: compile each request (IR text, triple, cpu, features, opt) until EOF."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    while True:
        try:
            request = _receive(stdin)
        except EOFError:
            return
        try:
            start = time.process_time()
            obj, ll = compile_text(*request)
            _send(stdout, ("ok", obj, ll, time.process_time() - start))
        except Exception as err:  # noqa: BLE001 - reported to the parent, which raises it
            _send(stdout, ("error", f"{type(err).__name__}: {err}"))


class WorkerPool:
    """Worker processes that compile IR text, started on first use and ended at exit."""

    def __init__(self):
        self.workers: list[subprocess.Popen] = []
        self.lock = threading.Lock()
        self.cpu_seconds = 0.0  # spent by the workers on the requests answered so far

    def ensure(self, count: int) -> list[subprocess.Popen]:
        with self.lock:
            self.workers = [w for w in self.workers if w.poll() is None]
            while len(self.workers) < count:
                command = [sys.executable, "-c", _WORKER, os.path.abspath(__file__)]
                self.workers.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE))
            return self.workers[:count]

    def submit(self, worker: subprocess.Popen, request: tuple) -> None:
        _send(worker.stdin, request)

    def result(self, worker: subprocess.Popen) -> tuple[bytes, str]:
        """The answer to the request last submitted to `worker`; RuntimeError when it failed."""
        status, *rest = _receive(worker.stdout)
        if status != "ok":
            raise RuntimeError(rest[0])
        self.cpu_seconds += rest[2]
        return rest[0], rest[1]

    def close(self) -> None:
        with self.lock:
            for worker in self.workers:
                try:
                    worker.stdin.close()
                    worker.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    worker.kill()
            self.workers = []


# A worker runs this file's source as __main__, with the working directory and this file's own
# directory off sys.path (the latter holds modules named like the standard library's).
_WORKER = ("import sys; sys.path = [p for p in sys.path if p]; path = sys.argv[1]; "
           "exec(compile(open(path).read(), path, 'exec'), {'__name__': '__main__'})")

POOL = WorkerPool()
atexit.register(POOL.close)


if __name__ == "__main__":
    serve()
