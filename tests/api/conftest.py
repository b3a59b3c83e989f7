"""API fixtures: a migrated database, a runtime on the tiny model, and a TestClient over the real app."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db.migrate import upgrade_to_head
from app.main import create_app
from app.serving.runtime import Runtime

ClientFactory = Callable[..., TestClient]


@pytest.fixture
def make_client(make_settings: Callable[..., Settings]) -> Iterator[ClientFactory]:
    """Start apps (migrated, loaded and ready); every client is closed at teardown."""
    opened: list[tuple[TestClient, Runtime]] = []

    def factory(**overrides: Any) -> TestClient:
        settings = make_settings(**overrides)
        upgrade_to_head(settings.resolved_database_url)
        runtime = Runtime(settings)
        client = TestClient(create_app(settings, runtime))
        client.__enter__()
        assert runtime.serving.wait_ready(60), f"service did not become ready: {runtime.serving.load_error}"
        opened.append((client, runtime))
        return client

    yield factory
    for client, runtime in opened:
        client.__exit__(None, None, None)
        runtime.close()


@pytest.fixture
def client(make_client: ClientFactory) -> TestClient:
    """A ready client with default settings."""
    return make_client()


CLAIMS = [
    ("c1", "The moon landing was staged in a film studio."),
    ("c2", "Drinking bleach cures the coronavirus infection."),
    ("c3", "Vaccines cause autism in young children."),
    ("c4", "The earth is flat and NASA hides it."),
    ("c5", "A shark was photographed swimming on a flooded highway."),
]


def add_claims(client: TestClient, corpus: str = "claims", kind: str = "claim") -> None:
    """Create a corpus and upsert the five test claims."""
    assert client.post("/v1/corpora", json={"name": corpus, "kind": kind}).status_code == 201
    documents = [{"id": i, "text": t} for i, t in CLAIMS]
    response = client.post(f"/v1/corpora/{corpus}/documents", json={"documents": documents})
    assert response.status_code == 200, response.text


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """`make fuzz` says how many generated cases ran and how many failed."""
    fuzz = sys.modules.get("tests.api.test_fuzz")
    if fuzz is None or not fuzz.CASES["cases"]:
        return
    failed = len(terminalreporter.stats.get("failed", []))
    terminalreporter.write_line(f"fuzz: {fuzz.CASES['cases']} generated cases, {failed} failed operations")


def wait_for(client: TestClient, evaluation_id: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Poll until the evaluation has finished."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/v1/evaluations/{evaluation_id}", headers=headers).json()
        if body["status"] in ("succeeded", "failed"):
            return body
        time.sleep(0.05)
    raise AssertionError("evaluation did not finish")
