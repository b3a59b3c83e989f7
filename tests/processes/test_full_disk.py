"""A full disk under `pairank serve`: checkpoints fail, nothing else does, and it heals by itself.

The service's data dir sits on a small tmpfs of its own (mounting needs root; elsewhere the test skips
and tests/indexes/test_snapshot_full_disk.py injects the OS error instead). The database is elsewhere,
as in production. Filling the disk makes the next checkpoint hit ENOSPC: the previous snapshot stays
current and loadable, no half-written generation is left behind, /ready and /metrics name the failure,
writes and ranks go on being answered from the database and memory, and once space is freed the
checkpoint retries on its own.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.processes import Server, ServerFactory


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 48 MiB tmpfs mounted for the test (root only), unmounted after it."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip() or 'not root'})")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk refuses another byte; returns it (delete it to free the space)."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle:  # unbuffered: each write reaches the disk or fails
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    handle.write(b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC
    return filler


def wait_for(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll `predicate()` until true or fail naming `what`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def upsert(server: Server, first: int, count: int) -> None:
    """Upsert documents d<first>..; each call must be answered 200."""
    documents = [
        {"id": f"d{i}", "text": f"claim {i} about towers, floods and the moon"}
        for i in range(first, first + count)
    ]
    response = server.http.post("/v1/corpora/claims/documents", json={"documents": documents})
    assert response.status_code == 200, response.text


def current_generation(data_dir: Path) -> Path:
    """The generation the corpus's vector snapshot folder names CURRENT (exactly one such folder)."""
    folders = [
        pointer.parent
        for pointer in data_dir.rglob("CURRENT")
        if (pointer.parent / pointer.read_text().strip() / "vectors.f32").is_file()
    ]
    assert len(folders) == 1, folders
    return folders[0] / (folders[0] / "CURRENT").read_text().strip()


@pytest.mark.usefixtures("faiss_only")
def test_a_full_disk_fails_checkpoints_only_and_heals(
    start_server: ServerFactory, small_disk: Path, service_env: dict[str, str]
) -> None:
    data_dir = small_disk / "data"
    service_env["PAIRANK_DATA_DIR"] = str(data_dir)
    if service_env["PAIRANK_DATABASE_URL"].startswith("sqlite"):
        assert not service_env["PAIRANK_DATABASE_URL"].startswith(f"sqlite:///{small_disk}")
    server = start_server(
        checkpoint_seconds="1", checkpoint_changes="1", log_file=small_disk.parent / "server.log"
    )
    assert server.http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
    upsert(server, 0, 200)
    index = lambda: server.http.get("/v1/corpora/claims/index").json()  # noqa: E731
    wait_for(lambda: index()["changes_since_checkpoint"] == 0, 30, "the first checkpoint")
    before = current_generation(data_dir)
    assert json.loads((before / "manifest.json").read_text())["count"] == 200

    filler = fill(small_disk)
    upsert(server, 200, 300)  # the database is elsewhere: writes go on
    ready = lambda: server.http.get("/ready").json()  # noqa: E731
    wait_for(lambda: "checkpoints" in ready(), 30, "/ready to report the failed checkpoint")
    body = server.http.get("/ready")
    assert body.status_code == 200  # still serving: every change is in the database and in memory
    report = body.json()
    assert report["degraded"] == ["checkpoint"]
    failure = report["checkpoints"]["claims"]
    assert failure["disk"] is True and "No space left" in failure["error"], failure
    metrics = server.http.get("/metrics").text
    failures = [
        line
        for line in metrics.splitlines()
        if line.startswith('pairank_index_checkpoint_failures{corpus="claims"}')
    ]
    assert failures and float(failures[0].split()[-1]) >= 1, failures

    ranked = server.http.post("/v1/corpora/claims/rank", json={"query": "claim 450 about towers", "k": 500})
    assert ranked.status_code == 200
    assert len(ranked.json()["results"]) == 500  # the writes made after the disk filled are served
    assert current_generation(data_dir) == before  # the previous snapshot stays current, whole
    assert json.loads((before / "manifest.json").read_text())["count"] == 200
    leftovers = [p for p in data_dir.rglob(".tmp-*")]
    assert not leftovers, leftovers  # a half-written generation would hold the space a retry needs

    filler.unlink()  # an operator frees space: the next retry (backoff 5 s, doubling) succeeds
    wait_for(
        lambda: "checkpoints" not in ready() and index()["changes_since_checkpoint"] == 0,
        90,
        "the retried checkpoint",
    )
    after = current_generation(data_dir)
    assert after != before and json.loads((after / "manifest.json").read_text())["count"] == 500
    server.kill()
    restarted = start_server()
    assert restarted.http.get("/v1/corpora/claims/index").json()["size"] == 500
    assert os.path.isdir(data_dir)
