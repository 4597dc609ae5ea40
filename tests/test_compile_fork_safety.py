"""`graphc.compile` forks children to schedule and lower kernels (`graphc.driver.map_kernels`);
here it does so in a process whose other threads could hold locks: after torch ran a parallel
operator (its OpenMP pool alive), while an executable of an earlier compile is alive and has
run its parallel kernels (libgomp's pool alive), with the compile cache's hash pool alive,
and with a foreign Python thread holding a lock. Each case runs in a subprocess with a
timeout, so a deadlock fails the test instead of hanging the suite."""

import os
import subprocess
import sys
import textwrap

import numpy as np

from graphc import compile_cache, driver

_SCRIPT = textwrap.dedent("""
    import os, threading
    import numpy as np
    import torch
    import graphc
    from graphc import compile_cache, driver

    torch.manual_seed(0)
    torch.set_num_threads(2)
    big = torch.randn(512, 512)
    (big @ big).sum().item()  # torch's intra-op pool has run
    compile_cache.array_digest(np.zeros(16 << 20, "uint8"))  # the hash pool has run
    driver.PARALLEL_MIN_KERNELS = 2
    forks = []
    original = driver._fork
    driver._fork = lambda *a: forks.append(1) or original(*a)

    class Net(torch.nn.Module):
        def __init__(self, width):
            super().__init__()
            self.a = torch.nn.Conv2d(3, width, 3, padding=1)
            self.b = torch.nn.Conv2d(width, width, 3, padding=1, stride=2)
            self.fc = torch.nn.Linear(width, 5)

        def forward(self, x):
            y = torch.relu(self.a(x))
            y = torch.relu(self.b(y)) + 1.0
            return self.fc(y.mean(dim=(2, 3)))

    x = torch.randn(1, 3, 16, 16)

    def check(width):
        net = Net(width).eval()
        exe = graphc.compile(net, example_inputs=(x,))
        with torch.no_grad():
            want = net(x).numpy()
        np.testing.assert_allclose(exe(x).numpy(), want, rtol=1e-4, atol=1e-5)
        return exe

    first = check(8)  # an executable alive in this process, its kernels run on libgomp's pool
    assert forks, "the kernels were not shared out"
    first(x)
    count = len(forks)
    check(12)  # native threads alive: forks again, and finishes
    assert len(forks) > count, "no fork with only native threads alive"

    held, stop = threading.Lock(), threading.Event()

    def hold():
        with held:
            stop.wait()

    thread = threading.Thread(target=hold, name="user-thread")
    thread.start()
    count = len(forks)
    check(16)  # a foreign Python thread holds a lock: compiled in this process alone
    assert len(forks) == count, "forked while a foreign Python thread was alive"
    stop.set()
    thread.join()
    print("fork-safety ok")
""")


def test_compile_forks_safely_beside_other_threads(tmp_path):
    env = dict(os.environ, GRAPHC_CACHE="0", GRAPHC_COMPILE_JOBS="2", GRAPHC_NUM_THREADS="2",
               GRAPHC_PROGRESS="0", OMP_NUM_THREADS="2")
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "fork-safety ok" in done.stdout


def test_forked_child_hashes_without_the_parents_pool():
    """The hash pool's threads do not exist in a forked child: the child makes its own (it
    used to queue work for threads that were not there, and wait forever)."""
    data = np.arange(3 << 20, dtype="float32")  # 12 MB: hashed in pieces on the pool
    want = compile_cache.array_digest(data)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if compile_cache.array_digest(data) == want else 2
        finally:
            os._exit(code)
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child hung hashing an array")


def test_fork_safe_sees_foreign_python_threads():
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="someone-else")
    thread.start()
    try:
        assert not driver.fork_safe()
    finally:
        stop.set()
        thread.join()
