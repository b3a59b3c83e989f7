"""Shared fixtures: a tiny offline model built once, databases (SQLite always, PostgreSQL when configured)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db.engine import make_engine, make_session_factory
from app.db.migrate import upgrade_to_head
from app.serving.runtime import Runtime
from tests.helpers.postgres import postgres_schema
from tests.helpers.processes import Server, ServerFactory, Worker
from tests.helpers.reranker import build_tiny_reranker
from tests.helpers.runtime import RuntimeFactory
from tests.helpers.tiny_model import build_multilingual_tiny_model, build_tiny_model

POSTGRES_SKIP_REASON = "TEST_DATABASE_URL is not set (no PostgreSQL server configured for the tests)"
PGVECTOR_SKIP_REASON = "no pgvector server: TEST_PGVECTOR_URL is not set and the pgserver wheel did not start"
# How the services the tests start run the tiny models. The default (`auto`) exports every new model
# version to OpenVINO int8 and calibrates it (about 6 s here), and every retraining makes a version: with
# the two choices below the suite's summed test time fell from 5,238 to 3,686 s. Exports, their gate
# and cache are the subject of tests/encoders, and the tests that assert what `auto` serves ask for it
# (`encoder_backend="auto"`, and in a service process `encoder_precision="auto"` too).
# In the test process, torch: already imported, a model loads at once.
TEST_ENCODER_BACKEND = "torch"
# Service processes: ONNX fp32, exported and gated in under a second per version into the session's
# cache; a process that finds its export cached starts without importing torch (ready in 5 s, 9 on torch).
PROCESS_ENCODER_ENV = {"PAIRANK_ENCODER_BACKEND": "onnx", "PAIRANK_ENCODER_PRECISION": "fp32"}


def process_model_env(model_dir: Path, export_cache_dir: Path) -> dict[str, str]:
    """A service process's model settings: the model, the session's export cache, ONNX fp32."""
    return {
        "PAIRANK_MODEL": str(model_dir),
        "PAIRANK_MODEL_CACHE_DIR": str(export_cache_dir),
        **PROCESS_ENCODER_ENV,
    }


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny BERT bi-encoder with a tokenizer trained on the fly (offline, a few seconds)."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def multilingual_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny bi-encoder with a multilingual vocabulary (es, pt, de, ar, fr, sw and English claims)."""
    return build_multilingual_tiny_model(tmp_path_factory.mktemp("multilingual-model"))


def built_once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]
) -> Path:
    """`build(folder)` once for every xdist worker of this run: the first to take the file lock builds in
    the run's shared temporary folder, the others wait for it and reuse what it wrote."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's base is a child of the run's
    done = root / f"{name}.done"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            built = build(root / name)
            done.write_text(str(built))
    return Path(done.read_text())


@pytest.fixture(scope="session")
def tiny_reranker_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny cross-encoder re-ranker, the same every session (a run folder; 45 s to train on one
    thread, so trained once for both xdist workers)."""
    return built_once_per_run(
        tmp_path_factory, "tiny-reranker", lambda folder: build_tiny_reranker(folder / "run")
    )


@pytest.fixture(scope="session")
def export_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One encoder export cache for the whole session: each model version is exported and gated once."""
    return tmp_path_factory.mktemp("model-exports")


@pytest.fixture(scope="session")
def pgvector_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """A PostgreSQL with pgvector: TEST_PGVECTOR_URL, else the pgserver wheel's PostgreSQL 16 in a temp
    folder (its extension lives in `public`, shared by the tests' schemas); None when neither works."""
    url = os.environ.get("TEST_PGVECTOR_URL")
    server = None
    if not url:
        try:
            import pgserver

            folder = tmp_path_factory.mktemp("pgvector")
            server = pgserver.get_server(folder, cleanup_mode="stop")
            url = f"postgresql+psycopg://postgres@/postgres?host={folder}"
        except Exception:  # noqa: BLE001 - no wheel for this platform, or it cannot start here
            yield None
            return
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public"))
    engine.dispose()
    yield url
    if server is not None:
        server.cleanup()


@pytest.fixture(params=["sqlite", "postgresql", "pgvector"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database: a SQLite file, or a fresh schema on TEST_DATABASE_URL's PostgreSQL, or on a
    pgvector server (served with PAIRANK_VECTOR_STORE=pgvector, see `vector_store`)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.db'}"
        return
    if request.param == "pgvector":
        base_url = request.getfixturevalue("pgvector_server")
        if not base_url:
            pytest.skip(PGVECTOR_SKIP_REASON)
    else:
        base_url = os.environ.get("TEST_DATABASE_URL")
        if not base_url:
            pytest.skip(POSTGRES_SKIP_REASON)
    with postgres_schema(base_url, *(("public",) if request.param == "pgvector" else ())) as url:
        yield url


@pytest.fixture
def vector_store(request: pytest.FixtureRequest) -> str:
    """The store a test's service uses: pgvector on the pgvector database, else faiss."""
    callspec = getattr(request.node, "callspec", None)
    database = callspec.params.get("database_url") if callspec is not None else None
    return "pgvector" if database == "pgvector" else "faiss"


@pytest.fixture
def faiss_only(vector_store: str) -> None:
    """Skip on the pgvector store: the test is about a worker's Faiss snapshot files."""
    if vector_store != "faiss":
        pytest.skip("about Faiss snapshot files in a worker's data dir; the pgvector store keeps none")


@pytest.fixture
def service_env(
    tmp_path: Path, database_url: str, tiny_model_dir: Path, export_cache_dir: Path, vector_store: str
) -> dict[str, str]:
    """The environment of the service processes of a test: one data dir, one database, the tiny model."""
    return {
        **os.environ,
        "PAIRANK_DATA_DIR": str(tmp_path / "data"),
        "PAIRANK_DATABASE_URL": database_url,
        "PAIRANK_VECTOR_STORE": vector_store,
        **process_model_env(tiny_model_dir, export_cache_dir),
        "PAIRANK_ADMIN_API_KEY": "k",
        "PAIRANK_AUTH": "disabled",
        "PAIRANK_RATE_LIMIT": "0",
    }


@pytest.fixture
def start_server(service_env: dict[str, str]) -> Iterator[ServerFactory]:
    """Start servers on one data dir and database (keyword arguments: more PAIRANK_* settings)."""
    env = service_env
    started: list[Server] = []

    def start(*, workers: int = 1, log_file: Path | None = None, **settings: str) -> Server:
        extra = {f"PAIRANK_{key.upper()}": value for key, value in settings.items()}
        started.append(Server({**env, **extra}, workers, log_file))
        return started[-1]

    yield start
    for server in started:
        if server.process.poll() is None:
            server.kill()


@pytest.fixture
def start_worker(service_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start `pairank worker` processes beside the servers (keyword arguments: more PAIRANK_* settings)."""
    started: list[Worker] = []

    def start(**settings: str) -> Worker:
        extra = {f"PAIRANK_{key.upper()}": value for key, value in settings.items()}
        log_file = tmp_path / f"worker-{len(started)}.log"
        started.append(Worker({**service_env, **extra}, log_file))
        return started[-1]

    yield start
    for worker in started:
        if worker.process.poll() is None:
            worker.kill()


@pytest.fixture
def make_settings(
    tmp_path: Path, database_url: str, tiny_model_dir: Path, export_cache_dir: Path, vector_store: str
) -> Callable[..., Settings]:
    """Settings on the test database and the tiny model; keyword arguments override fields."""

    def factory(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "data_dir": tmp_path / "data",
            "database_url": database_url,
            "vector_store": vector_store,
            "model": str(tiny_model_dir),
            "model_cache_dir": export_cache_dir,
            "encoder_backend": TEST_ENCODER_BACKEND,
            # Several runtimes share one database in some tests; each keeps its own model unless asked.
            "sync_seconds": 0,
            # Most tests exercise the API itself; tests/api/test_security.py runs with keys required.
            "auth": "disabled",
            "rate_limit": 0,
        }
        values.update(overrides)
        return Settings(**values)

    return factory


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    """A session factory on a migrated, empty database."""
    upgrade_to_head(database_url)
    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def make_runtime(make_settings: Callable[..., Settings]) -> Iterator[RuntimeFactory]:
    """Runtimes on one migrated database and data dir, with no background threads (tests drive them)."""
    opened: list[Runtime] = []

    def factory(**overrides: Any) -> Runtime:
        settings = make_settings(embedded_worker=False, **overrides)
        upgrade_to_head(settings.resolved_database_url)
        runtime = Runtime(settings)
        opened.append(runtime)
        return runtime

    yield factory
    for runtime in opened:
        runtime.close()
