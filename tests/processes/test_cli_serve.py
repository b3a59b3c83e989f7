"""`pairank serve` as a user runs it: a real process that migrates, serves over HTTP and ranks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_migrates_and_serves(tmp_path: Path, tiny_model_dir: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PAIRANK_DATA_DIR": str(tmp_path / "data"), "PAIRANK_MODEL": str(tiny_model_dir)}
    env.pop("PAIRANK_DATABASE_URL", None)
    command = [sys.executable, "-m", "pairank.cli", "serve", "--port", str(port), "--demo"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                try:
                    if http.get("/ready").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None, "server exited early"
                time.sleep(0.2)
            else:
                raise AssertionError("server never became ready")
            assert (tmp_path / "data" / "pairank.db").is_file()
            body = http.post("/v1/corpora/demo-claims/rank", json={"query": "Bats are blind.", "k": 1}).json()
            assert body["results"][0]["id"] == "claim-015"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    # The demo runs without keys, and says so.
    assert process.stdout is not None
    output = process.stdout.read()
    assert "WARNING" in output and "PAIRANK_AUTH=disabled" in output
