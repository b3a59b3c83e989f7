"""Real `pairank serve` processes for the tests that need several of them, or a kill -9."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import httpx


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """`pairank serve` in its own process, as an operator runs it."""

    def __init__(
        self, env: dict[str, str], workers: int = 1, log_file: Path | None = None, *, ready: bool = True
    ) -> None:
        """Start it and wait until it is ready (`ready=False`: until it answers, loaded or not)."""
        self.port = free_port()
        self.log: IO[bytes] | int = log_file.open("wb") if log_file is not None else subprocess.DEVNULL
        command = ["serve", "--port", str(self.port), "--workers", str(workers)]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pairank.cli", *command], env=env, stdout=self.log, stderr=self.log
        )
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=120)
        # Workers load on their own: one ready answer says little about the others, so with several,
        # wait for that many in a row, each on a new connection (whichever worker accepts it answers).
        needed, in_a_row = 1 if workers == 1 else 6 * workers, 0
        url = f"http://127.0.0.1:{self.port}/{'ready' if ready else 'health'}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "server exited during start-up"
            try:
                in_a_row = in_a_row + 1 if httpx.get(url, timeout=120).status_code == 200 else 0
            except httpx.TransportError:
                in_a_row = 0
            if in_a_row >= needed:
                return
            time.sleep(0.1 if not in_a_row else 0)
        raise AssertionError("server never became ready")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send a signal (kill -9 by default) and wait for the process to end."""
        self.process.send_signal(sig)
        self.process.wait(30)
        self.http.close()
        if not isinstance(self.log, int):
            self.log.close()


ServerFactory = Callable[..., Server]


class Worker:
    """`pairank worker` in its own process; its log goes to a file."""

    def __init__(self, env: dict[str, str], log_file: Path) -> None:
        self.log_file = log_file
        self.log = log_file.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pairank.cli", "worker"], env=env, stdout=self.log, stderr=self.log
        )
        deadline = time.monotonic() + 120
        while "job worker" not in log_file.read_text(errors="replace"):
            assert self.process.poll() is None, f"worker exited: {log_file.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "the worker never started claiming jobs"
            time.sleep(0.1)

    @property
    def pid(self) -> int:
        """The worker's process id (part of the owner name it records on jobs)."""
        return self.process.pid

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send a signal and wait for the process to end."""
        self.process.send_signal(sig)
        self.process.wait(60)
        self.log.close()


def wait_lease_lost(
    http: httpx.Client, job_id: str, headers: dict[str, str], timeout: float = 30
) -> dict[str, Any]:
    """A killed worker's job once its lease ran out (it is then failed); the job as the API shows it."""
    deadline, job = time.monotonic() + timeout, {}
    while time.monotonic() < deadline:
        job = http.get(f"/admin/jobs/{job_id}", headers=headers).json()
        if job["status"] != "running":
            break
        time.sleep(0.2)
    assert job["status"] == "failed" and "stopped renewing its lease" in job["error"], job
    return job
