"""Liveness and readiness, including /health answering while a large upsert is encoding (real HTTP)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from app.config import Settings
from app.db.migrate import upgrade_to_head
from app.main import create_app
from app.serving.runtime import Runtime


def test_ready_is_503_until_loaded(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings()
    upgrade_to_head(settings.resolved_database_url)
    runtime = Runtime(settings)
    app = create_app(settings, runtime)
    # Without entering the client's context the lifespan never runs, so the model never starts loading.
    app.state.runtime = runtime
    client = TestClient(app)
    assert client.get("/health").json() == {"status": "ok"}
    response = client.get("/ready")
    assert response.status_code == 503 and response.json()["status"] == "loading"
    not_ready = client.post("/v1/rank", json={"query": "q", "documents": ["d"]})
    assert not_ready.status_code == 503 and "loading" in not_ready.json()["detail"]
    runtime.close()


def test_ready_reports_a_failed_load(make_settings: Callable[..., Settings], tmp_path: Path) -> None:
    settings = make_settings(model=str(tmp_path / "no-such-model"))
    upgrade_to_head(settings.resolved_database_url)
    runtime = Runtime(settings)
    with TestClient(create_app(settings, runtime)) as client:
        deadline = time.monotonic() + 30
        while runtime.serving.load_error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        response = client.get("/ready")
        assert response.status_code == 503 and response.json()["status"] == "failed"
    runtime.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def live_server(make_settings: Callable[..., Settings]) -> Iterator[str]:
    """The real app under uvicorn on a free loopback port."""
    settings = make_settings(encode_batch_size=8)
    upgrade_to_head(settings.resolved_database_url)
    runtime = Runtime(settings)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings, runtime), port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert runtime.serving.wait_ready(60)
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    runtime.close()


def test_health_answers_while_a_large_upsert_encodes(live_server: str) -> None:
    with httpx.Client(base_url=live_server, timeout=60) as http:
        assert http.post("/v1/corpora", json={"name": "big", "kind": "question"}).status_code == 201
        sentence = "how do i reset the password of my home router after the firmware update"
        words = sentence.split()
        documents = [{"id": f"q{i}", "text": " ".join(words[i % 7 :] * 8) + f" {i}"} for i in range(1000)]
        finished = threading.Event()
        result: dict[str, int] = {}

        def upsert() -> None:
            with httpx.Client(base_url=live_server, timeout=120) as other:
                response = other.post("/v1/corpora/big/documents", json={"documents": documents})
                result["status"] = response.status_code
            finished.set()

        worker = threading.Thread(target=upsert)
        worker.start()
        answered_during_upsert = 0
        while not finished.is_set():
            started = time.monotonic()
            assert http.get("/health").status_code == 200
            if not finished.is_set() and time.monotonic() - started < 1.0:
                answered_during_upsert += 1
            time.sleep(0.02)
        worker.join()
        assert result["status"] == 200
        assert answered_during_upsert >= 3
        assert http.get("/v1/corpora/big").json()["document_count"] == 1000
