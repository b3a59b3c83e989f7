"""Schemathesis against the ASGI app: every operation, every check, valid and invalid requests.

Each operation gets `max-examples` generated cases (schemathesis.toml; `FUZZ_EXAMPLES` overrides it for
`make fuzz`); a failure prints the reproducing request. The service runs on the tiny model and SQLite,
with one corpus holding a few documents so that some generated requests reach real data.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from app.config import Settings
from app.db.migrate import upgrade_to_head
from app.main import create_app
from app.serving.runtime import Runtime
from app.usecases.api_keys import ApiKeyService
from tests.api.conftest import CLAIMS

# Bulk imports take JSON lines: generated bodies are sent as the text they are.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")
CONFIG = schemathesis.config.SchemathesisConfig.from_path(
    Path(__file__).resolve().parents[2] / "schemathesis.toml"
)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0")) or None
# The schema is read at collection time (schemathesis' lazy fixture loader does not run on pytest 9.2);
# building the app loads nothing: the model and indexes load when the fixture below starts it.
_FOLDER = Path(tempfile.mkdtemp(prefix="pairank-fuzz-"))
_SETTINGS = Settings(
    data_dir=_FOLDER, model="set-by-the-fixture", sync_seconds=0, admin_api_key="fuzz-key", rate_limit=0
)
_RUNTIME = Runtime(_SETTINGS)
WRITE_KEY: dict[str, str] = {}
ADMIN_KEY = {"Authorization": "Bearer fuzz-key"}
APP = create_app(_SETTINGS, _RUNTIME)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)


@pytest.fixture(scope="module", autouse=True)
def started(tiny_model_dir: Path, export_cache_dir: Path) -> Iterator[None]:
    """Start the app on the tiny model with corpus `claims` (the five test claims)."""
    _SETTINGS.model = str(tiny_model_dir)
    _SETTINGS.model_cache_dir = export_cache_dir
    upgrade_to_head(_SETTINGS.resolved_database_url)
    with TestClient(APP) as client:
        assert _RUNTIME.serving.wait_ready(60), _RUNTIME.serving.load_error
        # Cases carry a write key (admin routes: the admin key); requests without one must get 401
        # (ignored_auth).
        _, key = ApiKeyService(_RUNTIME.sessions).create("write", name="fuzz")
        WRITE_KEY["Authorization"] = f"Bearer {key}"
        client.headers.update(WRITE_KEY)
        client.post("/v1/corpora", json={"name": "claims", "kind": "claim"})
        documents = [{"id": i, "text": t, "metadata": {"lang": "en"}} for i, t in CLAIMS]
        client.post("/v1/corpora/claims/documents", json={"documents": documents})
        # Judged pairs, so that a generated retraining request can really queue its job.
        queries = ["moon film set", "bleach cure", "vaccine autism", "flat earth nasa", "shark highway"]
        pairs = [
            {"query": q, "document_id": doc, "label": 1} for q, (doc, _) in zip(queries, CLAIMS, strict=True)
        ]
        client.post("/v1/corpora/claims/pairs", json={"pairs": pairs})
        yield
    _RUNTIME.close()


FUZZ_SETTINGS = settings(
    deadline=None, suppress_health_check=list(HealthCheck), **({"max_examples": EXAMPLES} if EXAMPLES else {})
)
CASES = {"cases": 0}  # counted for `make fuzz`'s closing line (tests/api/conftest.py)


@schema.exclude(path_regex="^/admin").parametrize()
@FUZZ_SETTINGS
def test_every_operation_keeps_its_contract(case: Any) -> None:
    CASES["cases"] += 1
    case.call_and_validate(headers=WRITE_KEY)


# Admin routes with the admin key: retraining requests really queue jobs (on the tiny model; no worker
# runs here, so a second one meets the unfinished first: 409), keys are created and revoked.
@schema.include(path_regex="^/admin").parametrize()
@FUZZ_SETTINGS
def test_every_admin_operation_keeps_its_contract(case: Any) -> None:
    CASES["cases"] += 1
    case.call_and_validate(headers=ADMIN_KEY)
