"""The one liveness rule for a process id: running, gone, or a zombie (which counts as gone)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from pairank.processes import pid_alive


def test_a_running_process_is_alive_and_an_unreaped_one_is_not() -> None:
    assert pid_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while pid_alive(child.pid):  # exited but not reaped yet: a zombie, dead to us
        assert time.monotonic() < deadline, "the child never counted as dead"
        time.sleep(0.05)
    child.wait()
    assert not pid_alive(child.pid)
