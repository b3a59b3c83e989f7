"""Processes that share nothing but the database (issue 26): real `pairank serve` and `pairank worker`
processes on PostgreSQL (Faiss and pgvector), each with its own data dir, as on separate machines.

Retraining submitted through one API process runs on whichever worker claims it (two jobs, one per
worker); a model trained by one worker is activated through an API process, run by the other worker,
and served by both API processes; a third started later on an empty data dir (and an empty export
cache: the int8 variant is exported again from the stored files) serves it too and, after its cached
weights are damaged, fetches them again. Then `pg_dump` of the database alone is restored into a fresh
database, and a process on a fresh data dir ranks exactly as before. A worker killed with -9 in the
middle of storing a model leaves nothing of it visible.

The API and worker processes other than the third run the torch backend: they load the fetched files
themselves (no export cache to lean on) and rank at full precision, so the restore compares exactly.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.db.migrate import upgrade_to_head
from tests.api.conftest import CLAIMS
from tests.api.test_admin import PARAPHRASES
from tests.helpers.backup import drop_database, dump, restore_into_new_database
from tests.helpers.processes import Server, ServerFactory, Worker
from tests.helpers.tiny_model import build_tiny_model
from tests.processes.test_job_workers import KEY, wait_for

QUERIES = ["was the moon landing filmed in a studio", "bleach against covid", "sharks on highways"]


@pytest.fixture(autouse=True)
def _postgresql_only(database_url: str) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite is one machine: its data dir holds the database (the local artifact store)")


def retrain(server: Server, learning_rate: float) -> str:
    """Submit a short retraining (no activation) through `server`; its job id."""
    body = {"corpus": "claims", "epochs": 1, "batch_size": 4, "learning_rate": learning_rate,
            "auto_activate": False, "cross_validation": "never", "hard_negatives": None}  # fmt: skip
    created = server.http.post("/admin/retrain", json=body, headers=KEY)
    assert created.status_code == 202, created.text
    return str(created.json()["job_id"])


def done(job: dict[str, Any]) -> bool:
    """The job ended."""
    return job["status"] not in ("queued", "running")


def ranking(server: Server) -> list[dict[str, Any]]:
    """Each query's response (results and the model that ranked them)."""
    answers = [server.http.post("/v1/corpora/claims/rank", json={"query": q, "k": 5}) for q in QUERIES]
    assert all(answer.status_code == 200 for answer in answers), [a.text for a in answers]
    return [answer.json() for answer in answers]


def serving(server: Server, version: str, timeout: float = 60) -> list[dict[str, Any]]:
    """Wait until `server` ranks with `version`; its ranking then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answers = ranking(server)
        if all(answer["model"] == version for answer in answers):
            return answers
        time.sleep(0.2)
    raise AssertionError(f"never served {version}: {ranking(server)[0]['model']}")


def same_ranking(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> None:
    """The same documents in the same order with the same scores, by the same model."""
    for a, b in zip(first, second, strict=True):
        assert a["model"] == b["model"]
        assert [r["id"] for r in a["results"]] == [r["id"] for r in b["results"]]
        assert [r["score"] for r in a["results"]] == pytest.approx(
            [r["score"] for r in b["results"]], abs=1e-5
        )


def sha256_of(path: Path) -> str:
    """sha256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cached_weights(data_dir: Path, manifest: str) -> Path:
    """Where a machine keeps its fetched copy of a stored model's weights."""
    (weights,) = (data_dir / "models" / "cache" / manifest).glob("*/model.safetensors")
    return weights


def model_row(http: httpx.Client, version: str) -> dict[str, Any]:
    """The registry's row of a version."""
    models = {m["version"]: m for m in http.get("/admin/models", headers=KEY).json()["models"]}
    return models[version]


@pytest.fixture
def machine(tmp_path: Path) -> Callable[[str], dict[str, str]]:
    """Settings of one machine: its own data dir; the torch backend (see the module's docstring)."""

    def settings(name: str) -> dict[str, str]:
        data_dir = tmp_path / name
        return {
            "data_dir": str(data_dir),
            "model_cache_dir": str(data_dir / "models"),
            "encoder_backend": "torch",
        }

    return settings


def test_models_travel_through_the_database(
    start_server: ServerFactory,
    start_worker: Callable[..., Worker],
    machine: Callable[[str], dict[str, str]],
    database_url: str,
    vector_store: str,
    tmp_path: Path,
) -> None:
    first = start_server(embedded_worker="false", **machine("api-a"))
    second = start_server(embedded_worker="false", **machine("api-b"))
    http = first.http
    assert http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
    documents = [{"id": i, "text": t} for i, t in CLAIMS]
    assert http.post("/v1/corpora/claims/documents", json={"documents": documents}).status_code == 200
    pairs = [{"query": q, "document_id": d, "label": 1} for q, d in PARAPHRASES]
    assert http.post("/v1/corpora/claims/pairs", json={"pairs": pairs}).status_code == 201

    # Two retraining jobs submitted through either API process; each worker claims one.
    worker_one = start_worker(**machine("worker-1"))
    job = wait_for(http, retrain(first, 1e-3), done, timeout=180)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    assert job["owner"].split(":")[1] == str(worker_one.pid)
    worker_one.process.send_signal(signal.SIGSTOP)  # idle: the next job goes to the other worker
    worker_two = start_worker(**machine("worker-2"))
    job = wait_for(http, retrain(second, 3e-3), done, timeout=180)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    assert job["owner"].split(":")[1] == str(worker_two.pid)
    trained = job["model_version"]
    row = model_row(http, trained)
    assert row["artifact_store"] == "database" and row["artifact_files"] >= 8
    assert str(tmp_path / "worker-2") in row["path"]  # registered from worker 2's disk only

    # Activated through the first API process; run by worker 1, which never had the model.
    worker_one.process.send_signal(signal.SIGCONT)
    worker_two.process.send_signal(signal.SIGSTOP)
    try:
        activation = http.post(f"/admin/models/{trained}/activate", headers=KEY)
        assert activation.status_code == 202, activation.text
        job = wait_for(http, activation.json()["id"], done, timeout=120)
        assert job["status"] == "succeeded", job["error"]
        assert job["owner"].split(":")[1] == str(worker_one.pid)
    finally:
        worker_two.process.send_signal(signal.SIGCONT)
    before = serving(first, trained)
    same_ranking(serving(second, trained), before)
    for name in ("api-a", "api-b", "worker-1"):  # each fetched its own verified copy
        assert cached_weights(tmp_path / name, row["artifact_sha256"]).is_file()

    # A process started later on an empty disk serves it, exporting its own int8 variant.
    log = tmp_path / "api-c.log"
    late = {**machine("api-c"), "encoder_backend": "auto", "encoder_precision": "auto"}
    third = start_server(embedded_worker="false", log_file=log, **late)
    answers = serving(third, trained)
    assert third.http.get("/ready").json()["backend"] == "openvino"
    assert list((tmp_path / "api-c" / "models").glob("*/openvino-int8/manifest.json"))
    for doc_id, claim in CLAIMS:
        top = third.http.post("/v1/corpora/claims/rank", json={"query": claim, "k": 1}).json()["results"]
        assert top[0]["id"] == doc_id
    # Its cached weights damaged while it is down: detected by their sha256 and fetched again.
    third.kill(signal.SIGTERM)
    cached = cached_weights(tmp_path / "api-c", row["artifact_sha256"])
    good = sha256_of(cached)
    cached.write_bytes(cached.read_bytes()[:-8] + b"damaged!")
    third = start_server(embedded_worker="false", log_file=tmp_path / "api-c-2.log", **late)
    assert [a["results"] for a in serving(third, trained)] == [a["results"] for a in answers]
    assert sha256_of(cached) == good
    assert "fetching again" in (tmp_path / "api-c-2.log").read_text()

    # pg_dump of the database alone is a complete backup: a fresh database, a fresh data dir.
    backup = tmp_path / "pairank.dump"
    dump(database_url, backup)
    for process in (first, second, third):
        process.kill(signal.SIGTERM)
    restored = restore_into_new_database(
        database_url, backup, ("vector",) if vector_store == "pgvector" else ()
    )
    try:
        fresh = start_server(embedded_worker="false", database_url=restored, **machine("restored"))
        same_ranking(ranking(fresh), before)
        fresh.kill(signal.SIGTERM)
    finally:
        drop_database(restored)


def big_model(root: Path, megabytes: int) -> Path:
    """A tiny model with a large first file: storing it takes long enough to be caught in the act."""
    folder = build_tiny_model(root)
    block = os.urandom(1 << 20)  # incompressible, so PostgreSQL writes every byte
    with (folder / "0-large.bin").open("wb") as handle:  # sorts first: stored first
        for _ in range(megabytes):
            handle.write(block)
    return folder


@pytest.fixture
def watch(database_url: str) -> Iterator[Callable[[str], Any]]:
    """Run a query on the test's database (its schema), returning all rows."""
    engine = create_engine(database_url)

    def query(sql: str) -> Any:
        with engine.connect() as connection:
            return connection.execute(text(sql)).all()

    yield query
    engine.dispose()


def test_a_worker_killed_while_storing_a_model_leaves_nothing(
    start_worker: Callable[..., Worker],
    service_env: dict[str, str],
    machine: Callable[[str], dict[str, str]],
    database_url: str,
    vector_store: str,
    watch: Callable[[str], Any],
    tmp_path: Path,
) -> None:
    if vector_store == "pgvector":
        pytest.skip("about the registering transaction; the vector store plays no part (PostgreSQL run)")
    upgrade_to_head(database_url)
    name = f"pairank-upload-{os.getpid()}"
    url = make_url(database_url)
    tagged = url.set(query={**url.query, "application_name": name}).render_as_string(hide_password=False)
    model = big_model(tmp_path / "big", 256)
    # A worker configured with a model nobody registered stores its files at start-up.
    settings = {**machine("worker"), "model": str(model)}
    env = {**service_env, **{f"PAIRANK_{k.upper()}": v for k, v in settings.items()}}
    log = (tmp_path / "killed-worker.log").open("wb")
    killed = subprocess.Popen([sys.executable, "-m", "pairank.cli", "worker"], stdout=log, stderr=log,
                              env={**env, "PAIRANK_DATABASE_URL": tagged})  # fmt: skip
    storing = (
        f"SELECT 1 FROM pg_stat_activity WHERE application_name = '{name}' "
        "AND query LIKE 'INSERT INTO blob_chunks%'"
    )
    deadline = time.monotonic() + 120
    while not watch(storing):
        assert killed.poll() is None and time.monotonic() < deadline, "the worker never stored the model"
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.wait(30)
    log.close()
    # Nothing of it is visible: no version, no manifest, no blob (whole or partial), no chunk.
    assert watch("SELECT version FROM model_versions") == []
    assert watch("SELECT count(*) FROM model_files") == [(0,)]
    assert watch("SELECT count(*) FROM blobs") == [(0,)] == watch("SELECT count(*) FROM blob_chunks")
    # Started again, it stores the model whole and serves from the copy it fetched back.
    again = start_worker(**settings)
    assert again.process.poll() is None
    stored = "SELECT artifact_sha256, artifact_bytes FROM model_versions WHERE artifact_store = 'database'"
    ((manifest, size),) = watch(stored)
    assert size > 256 << 20
    whole = watch(
        "SELECT b.sha256 FROM blobs b JOIN blob_chunks c ON c.sha256 = b.sha256 "
        "GROUP BY b.sha256, b.size HAVING sum(length(c.data)) = b.size"
    )
    assert len(whole) == len(watch("SELECT sha256 FROM blobs")) >= 8
    (fetched,) = (tmp_path / "worker" / "models" / "cache" / manifest).glob("*/0-large.bin")
    assert sha256_of(fetched) == sha256_of(model / "0-large.bin")
